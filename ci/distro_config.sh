#!/bin/bash
# Build what the series touches with Debian's own amd64 kernel config (from
# the linux-config-6.12 package), in both variants, with -Werror: the
# configuration a distribution ships (HVO, MEMORY_FAILURE, KSM, ZSWAP, NUMA,
# MEMCG, THP always, PAGE_OWNER, ...) must build cleanly with the series.
# Every directory with a .c file the series changes is compiled (not linked:
# Debian's config wants its signing certificates and BTF tooling for vmlinux).
# Usage: ci/distro_config.sh [VARIANT...]  (default: default no_page_mapcount)
# Prints "distro-config: N passed, N failed".
. "$(dirname "$0")/lib.sh"

CONFIG_XZ=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
"$TOP/ci/deps.sh" distro
[ -f "$CONFIG_XZ" ] || die "$CONFIG_XZ not found (install the linux-config-6.12 package)"
"$TOP/ci/tree.sh"
variants=("${@:-default no_page_mapcount}")
read -r -a variants <<<"${variants[*]}"
mkdir -p "$CCACHE_DIR" "$BUILD/results"

# The directories of the .c files the series changes, as make targets: a
# directory target builds what Debian's config enables there (an object of
# a disabled option, such as page_owner.o, cannot be built alone); kernel/
# is large and only fork.c is ours, so that one is built as its object.
mapfile -t objs < <(git -C "$TREE" diff --name-only pristine..HEAD -- '*.c' |
	grep -v '/tests/' | while read -r f; do
		case $f in
		kernel/*) echo "${f%.c}.o" ;;
		*) echo "$(dirname "$f")/" ;;
		esac
	done | sort -u)
passed=0 failed=0
for v in "${variants[@]}"; do
	out=$BUILD/distro-config/$v
	logf=$BUILD/results/distro-config-$v.log
	t0=$(now)
	mkdir -p "$out"
	xzcat "$CONFIG_XZ" > "$out/.config"
	case $v in
	default) "$TREE/scripts/config" --file "$out/.config" --disable NO_PAGE_MAPCOUNT ;;
	no_page_mapcount) "$TREE/scripts/config" --file "$out/.config" --enable NO_PAGE_MAPCOUNT ;;
	*) die "unknown variant '$v' (default or no_page_mapcount)" ;;
	esac
	log "distro-config $v: Debian's amd64 config, -Werror: ${objs[*]}"
	if make -s -C "$TREE" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" olddefconfig >"$logf" 2>&1 &&
	   grep -q "^CONFIG_TRANSPARENT_HUGEPAGE=y" "$out/.config" &&
	   { [ "$v" = default ] || grep -q "^CONFIG_NO_PAGE_MAPCOUNT=y" "$out/.config"; } &&
	   make -C "$TREE" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" -j"$(nproc)" \
		KCFLAGS=-Werror "${objs[@]}" >>"$logf" 2>&1; then
		echo "  ok    $v ($(( $(now) - t0 )) s)"
		passed=$((passed + 1))
	else
		echo "  FAIL  $v (see $logf):"
		grep -E 'error|Error' "$logf" | head -20 | sed 's/^/        /'
		failed=$((failed + 1))
	fi
done
echo "distro-config: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
