#!/bin/bash
# Kconfig dependencies of the series, checked with the tree's own Kconfig
# (olddefconfig on x86_64, no build): CONFIG_NO_PAGE_MAPCOUNT needs THP, as
# upstream's sits inside "if TRANSPARENT_HUGEPAGE" (without THP there is no
# MM owner tracking to answer what the per-page mapcounts answered), and
# CONFIG_PAGE_MAPCOUNT is its inverse.  Prints "kconfig: N passed, N failed".
. "$(dirname "$0")/lib.sh"

[ -e "$TREE/.git" ] || die "no tree at $TREE: run 'make tree' first"
out=$BUILD/kconfig-check
rm -rf "$out"
mkdir -p "$out"
passed=0 failed=0
# check NAME "SYMBOL=y|n ..." "SYMBOL=y|n ..."  (requested, expected)
check() {
	local name=$1 want=$2 expect=$3 kv sym val got
	make -s -C "$TREE" O="$out" ARCH=x86_64 tinyconfig >/dev/null 2>&1 ||
		die "make tinyconfig failed in $out"
	for kv in $want; do
		sym=${kv%=*} val=${kv#*=}
		"$TREE/scripts/config" --file "$out/.config" "$([ "$val" = y ] && echo --enable || echo --disable)" "$sym"
	done
	make -s -C "$TREE" O="$out" ARCH=x86_64 olddefconfig >/dev/null 2>&1 ||
		die "make olddefconfig failed in $out"
	for kv in $expect; do
		sym=${kv%=*} val=${kv#*=}
		got=$(grep -q "^CONFIG_$sym=y" "$out/.config" && echo y || echo n)
		if [ "$got" != "$val" ]; then
			echo "  FAIL  $name: asked for $want, got CONFIG_$sym=$got (expected $val)"
			failed=$((failed + 1))
			return
		fi
	done
	echo "  ok    $name"
	passed=$((passed + 1))
}
check "NO_PAGE_MAPCOUNT without THP is not set" \
	"MMU=y TRANSPARENT_HUGEPAGE=n NO_PAGE_MAPCOUNT=y" "NO_PAGE_MAPCOUNT=n PAGE_MAPCOUNT=y MM_ID=n"
check "NO_PAGE_MAPCOUNT with THP" \
	"MMU=y TRANSPARENT_HUGEPAGE=y NO_PAGE_MAPCOUNT=y" "NO_PAGE_MAPCOUNT=y PAGE_MAPCOUNT=n MM_ID=y"
check "THP selects MM_ID; per-page mapcounts by default" \
	"MMU=y TRANSPARENT_HUGEPAGE=y" "MM_ID=y NO_PAGE_MAPCOUNT=n PAGE_MAPCOUNT=y"
echo "kconfig: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
