#!/bin/bash
# Prepare the kernel tree: extract the pristine Debian source into $TREE,
# commit it as the baseline (tag "pristine"), apply patches/ in series order
# with git am.  The series carries its KUnit suites: nothing else is copied
# into the tree.
#
# Re-running is cheap: when the tree already holds exactly the current series
# nothing is extracted or re-applied.  FORCE=1 discards local commits or
# changes in the tree (otherwise the script refuses to touch them).
. "$(dirname "$0")/lib.sh"

"$TOP/ci/deps.sh"

STAMP=$TREE/.git/folio-owner-applied
GIT=(git -C "$TREE" -c user.name="Folio Owner Project"
     -c user.email=devel@folio-owner.invalid -c advice.detachedHead=false)

[ -f "$SOURCE_TARBALL" ] || die "$SOURCE_TARBALL not found (install the $SOURCE_PACKAGE package)"

installed=$(dpkg-query -W -f='${Version}' "$SOURCE_PACKAGE" 2>/dev/null || echo unknown)
tested=$(awk -v p="$SOURCE_PACKAGE" '$1 == p { print $2 }' "$TOP/patches/base-version" 2>/dev/null || true)
if [ -n "$tested" ] && [ "$installed" != "$tested" ]; then
	warn "the series was tested against $SOURCE_PACKAGE $tested, but $installed is installed"
fi

extract() {
	log "extracting $SOURCE_TARBALL ($SOURCE_PACKAGE $installed) into $TREE"
	rm -rf "$TREE"
	mkdir -p "$TREE"
	tar -xJf "$SOURCE_TARBALL" -C "$TREE" --strip-components=1 ||
		die "extracting $SOURCE_TARBALL failed"
	local v p
	v=$(awk '$1 == "VERSION" { print $3; exit }' "$TREE/Makefile")
	p=$(awk '$1 == "PATCHLEVEL" { print $3; exit }' "$TREE/Makefile")
	[ "$v.$p" = "6.12" ] || die "$SOURCE_TARBALL holds Linux $v.$p, not 6.12: the series is for 6.12"
	log "committing the pristine tree as the git baseline (tag 'pristine')"
	git -C "$TREE" init -q -b pristine-base
	# Commits made in the tree (the series) carry the project's identity.
	git -C "$TREE" config user.name "Folio Owner Project"
	git -C "$TREE" config user.email devel@folio-owner.invalid
	"${GIT[@]}" add -A -f	# Debian's top-level .gitignore ignores "/*"
	GIT_AUTHOR_DATE="2024-11-17T00:00:00Z" GIT_COMMITTER_DATE="2024-11-17T00:00:00Z" \
		"${GIT[@]}" commit -q -m "Linux $(make -s -C "$TREE" kernelversion) from $SOURCE_PACKAGE $installed"
	"${GIT[@]}" tag pristine
	echo "$installed" > "$TREE/.git/folio-owner-source"
}

if [ ! -d "$TREE/.git" ] || ! "${GIT[@]}" rev-parse -q --verify pristine >/dev/null ||
   [ "$(cat "$TREE/.git/folio-owner-source" 2>/dev/null)" != "$installed" ]; then
	extract
fi
# Trees made before the series carried its suites ignored the suites'
# directory, where the project used to copy them: forget that.
sed -i '\|^/mm/tests/$|d' "$TREE/.git/info/exclude" 2>/dev/null || :

digest=$(series_digest)
head=$("${GIT[@]}" rev-parse HEAD)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$digest $head" ] &&
   [ -z "$("${GIT[@]}" status --porcelain)" ]; then
	log "tree $TREE already holds the current series ($(series_patches | wc -l) patches)"
	exit 0
fi

if [ "${FORCE:-0}" != 1 ]; then
	if [ -n "$("${GIT[@]}" status --porcelain)" ]; then
		die "$TREE has uncommitted changes; commit them and run 'make series', or discard them with FORCE=1"
	fi
	recorded=$(cut -d' ' -f2 "$STAMP" 2>/dev/null || true)
	if [ "$head" != "$("${GIT[@]}" rev-parse pristine)" ] && [ "$head" != "$recorded" ]; then
		die "$TREE has commits that are not in patches/; export them with 'make series', or discard them with FORCE=1"
	fi
fi

log "applying the series to $TREE"
"${GIT[@]}" am --abort >/dev/null 2>&1 || true
"${GIT[@]}" checkout -q --detach pristine
"${GIT[@]}" reset -q --hard pristine
"${GIT[@]}" clean -q -fdx
mapfile -t patches < <(series_patches)
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	name=$(basename "$p")
	printf '  [%d/%d] %s\n' "$i" "${#patches[@]}" "$name" >&2
	if ! out=$("${GIT[@]}" am -q --committer-date-is-author-date "$p" 2>&1); then
		"${GIT[@]}" am --abort >/dev/null 2>&1 || true
		die "patch $name does not apply to $SOURCE_PACKAGE $installed:
$out"
	fi
done
"${GIT[@]}" checkout -q -B folio-owner
echo "$digest $("${GIT[@]}" rev-parse HEAD)" > "$STAMP"
log "tree $TREE holds ${#patches[@]} patches on top of pristine"
