#!/bin/bash
# Export the commits on top of "pristine" in the tree as patches/NNNN-*.patch,
# regenerate patches/series and the cover letter (patches/0000-cover-letter.patch,
# which patches/series does not name: git am does not apply it).  Work in the tree with git (commit, rebase
# -i, commit --amend), then run this.
. "$(dirname "$0")/lib.sh"

[ -e "$TREE/.git" ] || die "no tree at $TREE: run 'make tree' first"
git -C "$TREE" rev-parse -q --verify pristine >/dev/null || die "$TREE has no 'pristine' tag"
if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
	die "$TREE has uncommitted changes: commit them first"
fi
n=$(git -C "$TREE" rev-list --count pristine..HEAD)
[ "$n" -gt 0 ] || die "no commits on top of pristine in $TREE"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$TREE" "${FORMAT_PATCH[@]}" \
	-o "$tmp" pristine..HEAD
rm -f "$TOP"/patches/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$TOP/patches/"
(cd "$tmp" && ls -1 ./*.patch | sed 's|^\./||') > "$TOP/patches/series"
write_cover_letter "$TREE" "$TOP/patches"
echo "$(series_digest) $(git -C "$TREE" rev-parse HEAD)" > "$(git -C "$TREE" rev-parse --absolute-git-dir)/folio-owner-applied"
log "exported $n patches to patches/ (see patches/series)"
