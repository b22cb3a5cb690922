#!/bin/bash
# Build the kernels of make selftests for one architecture: stock 6.12
# (the tree's 'pristine' commit), patched, and patched + NO_PAGE_MAPCOUNT,
# each from the matrix config (common + arch/<ARCH> + variant/<VARIANT>)
# plus kunitconfigs/selftests.config.  Stock gets the same fragments minus
# the symbols it does not have (our suites, NO_PAGE_MAPCOUNT).
# Usage: ci/selftests_kernels.sh ARCH [KERNEL...]   (default: all three)
# Kernels land in $BUILD/selftests/ARCH-KERNEL; build logs next to them.
. "$(dirname "$0")/lib.sh"

arch=${1:?usage: ci/selftests_kernels.sh ARCH [stock patched npm]}
shift
kernels=("${@:-stock patched npm}")
read -r -a kernels <<<"${kernels[*]}"
case $arch in
x86_64) cross= ;;
arm64)  cross=aarch64-linux-gnu- ;;
*)      die "make selftests runs on x86_64 and arm64, not '$arch'" ;;
esac
cfg=$TOP/kunitconfigs
OUT=$BUILD/selftests
mkdir -p "$OUT" "$CCACHE_DIR"
export_stock

# Every Kconfig symbol the stock tree defines, to filter its fragment.
stock_symbols() {
	[ -s "$OUT/stock-symbols" ] && [ "$OUT/stock-symbols" -nt "$STOCK/.pristine" ] && return
	grep -rhoE '^[[:space:]]*(menu)?config [A-Za-z0-9_]+' --include='Kconfig*' "$STOCK" |
		awk '{ print "CONFIG_" $2 }' | sort -u > "$OUT/stock-symbols"
}

build() {	# kernel
	local k=$1 src=$TREE variant=default frag t0 sym
	case $k in
	stock)   src=$STOCK ;;
	patched) ;;
	npm)     variant=no_page_mapcount ;;
	*)       die "unknown kernel '$k' (stock, patched or npm)" ;;
	esac
	frag=$OUT/$arch-$k.config
	cat "$cfg/common.config" "$cfg/arch/$arch.config" "$cfg/variant/$variant.config" \
		"$cfg/selftests.config" > "$frag"
	if [ "$k" = stock ]; then
		stock_symbols
		while read -r sym; do
			grep -qxF "$sym" "$OUT/stock-symbols" || sed -i "/^# *$sym is not set\$/d; /^$sym=/d" "$frag"
		done < <(grep -oE '^(# )?CONFIG_[A-Za-z0-9_]+' "$frag" | sed 's/^# //' | sort -u)
	fi
	args=(build --arch="$arch" --build_dir="$OUT/$arch-$k" --jobs="$(nproc)"
	      --kunitconfig="$frag"
	      --make_options="CC=ccache ${cross}gcc" --make_options="HOSTCC=ccache gcc")
	[ -n "$cross" ] && args+=(--cross_compile="$cross")
	t0=$(now)
	log "selftests: building the $arch $k kernel in $OUT/$arch-$k (from $src)"
	(cd "$src" && python3 tools/testing/kunit/kunit.py "${args[@]}") > "$OUT/$arch-$k.build.log" 2>&1 ||
		die "building the $arch $k kernel failed (see $OUT/$arch-$k.build.log)"
	log "selftests: $arch $k kernel built in $(( $(now) - t0 )) s"
}

for k in "${kernels[@]}"; do
	build "$k"
done
