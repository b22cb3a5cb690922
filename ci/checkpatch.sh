#!/bin/bash
# Run scripts/checkpatch.pl --strict on every patch of the series (the
# KUnit suites are in the patches).  A warning that is justified is
# listed, with its reason, in
# patches/checkpatch-exceptions as "FILE TYPE reason..." (FILE "*": every
# file) and is not counted.
# Prints one line per file and "checkpatch: N passed, N failed".
. "$(dirname "$0")/lib.sh"

[ -x "$TREE/scripts/checkpatch.pl" ] || die "no tree at $TREE: run 'make tree' first"
exceptions=$TOP/patches/checkpatch-exceptions
# spdxcheck.py needs Debian's python3-ply and python3-git.
export PATH=/usr/bin:$PATH

passed=0 failed=0
check() {	# name, checkpatch args...
	local name=$1 out types t bad=()
	shift
	out=$(cd "$TREE" && perl scripts/checkpatch.pl --strict --terse --show-types --no-summary "$@" 2>&1) || true
	types=$(sed -n 's/^[^:]*:[0-9]*: [A-Z]*:\([A-Z0-9_]*\):.*/\1/p; s/^[^:]*: [A-Z]*:\([A-Z0-9_]*\):.*/\1/p' <<<"$out" | sort -u)
	for t in $types; do
		if [ -f "$exceptions" ] && awk -v f="$name" -v t="$t" '($1 == f || $1 == "*") && $2 == t { found = 1 } END { exit !found }' "$exceptions"; then
			continue
		fi
		bad+=("$t")
	done
	if [ ${#bad[@]} -eq 0 ] && ! grep -q '^Traceback' <<<"$out"; then
		printf '  ok    %s\n' "$name"
		passed=$((passed + 1))
	else
		printf '  FAIL  %s\n%s\n' "$name" "$(sed 's/^/        /' <<<"$out")"
		failed=$((failed + 1))
	fi
}

while read -r p; do
	check "$(basename "$p")" "$p"
done < <(series_patches)
echo "checkpatch: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
