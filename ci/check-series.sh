#!/bin/bash
# Check that patches/ is exactly the series: every patch file is named in
# patches/series, each applies with git am to the pristine tree with no
# offset or fuzz, and exporting the result reproduces the files byte for
# byte (so the patches are what `make series` would write).
. "$(dirname "$0")/lib.sh"

git -C "$TREE" rev-parse -q --verify pristine >/dev/null || die "no tree at $TREE: run 'make tree' first"

fail() { echo "series: FAIL: $*"; exit 1; }

mapfile -t listed < <(series_patches | xargs -rn1 basename)
for f in "$TOP"/patches/*.patch; do
	[ -e "$f" ] || continue
	[ "$(basename "$f")" = "$COVER_LETTER" ] && continue
	[[ " ${listed[*]} " == *" $(basename "$f") "* ]] || fail "$(basename "$f") is not named in patches/series"
done

wt=$(mktemp -d "$BUILD/check-series.XXXXXX")
out=$(mktemp -d)
cleanup() {
	git -C "$TREE" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
	git -C "$TREE" worktree prune
	rm -rf "$out"
}
trap cleanup EXIT
log "applying ${#listed[@]} patches to a pristine worktree"
git -C "$TREE" worktree add -q --detach "$wt" pristine
for name in "${listed[@]}"; do
	if ! msg=$(git -C "$wt" -c user.name="Folio Owner Project" -c user.email=devel@folio-owner.invalid \
		   am -q --committer-date-is-author-date "$TOP/patches/$name" 2>&1); then
		fail "$name does not apply: $msg"
	fi
done
git -C "$wt" "${FORMAT_PATCH[@]}" -o "$out" pristine..HEAD
i=0
for name in "${listed[@]}"; do
	i=$((i + 1))
	exported=$(ls "$out" | sed -n "${i}p")
	[ "$exported" = "$name" ] || fail "patch $i is named $name, but its subject exports as $exported"
	cmp -s "$out/$exported" "$TOP/patches/$name" ||
		fail "$name does not apply exactly (offset, fuzz or a stale export):
$(diff -u "$TOP/patches/$name" "$out/$exported" | head -20)"
done
# The cover letter: what make series writes for this series, to the byte
# (its patch list, subjects, diffstat and benchmark table follow the series).
[ -f "$TOP/patches/$COVER_LETTER" ] || fail "patches/$COVER_LETTER is missing: run make series"
mkdir -p "$out/cover"
write_cover_letter "$wt" "$out/cover"
cmp -s "$out/cover/$COVER_LETTER" "$TOP/patches/$COVER_LETTER" ||
	fail "patches/$COVER_LETTER is stale (make series rewrites it):
$(diff -u "$TOP/patches/$COVER_LETTER" "$out/cover/$COVER_LETTER" | head -20)"
echo "series: ok (${#listed[@]} patches apply exactly to $SOURCE_PACKAGE; the cover letter is current)"
