#!/bin/bash
# The kernels of make selftests for one architecture, from the matrix
# config (kunit_config_files in ci/lib.sh; common.config has what the
# initramfs and the selftests need):
#   patched  the matrix's default kernel, $BUILD/kunit/ARCH-default
#   npm      the matrix's NO_PAGE_MAPCOUNT kernel, $BUILD/kunit/ARCH-no_page_mapcount
#   prod     the patched default kernel without DEBUG_VM, in
#            $BUILD/selftests/ARCH-prod (the HVO boot groups' fourth kernel)
#   stock    stock 6.12 (the tree's 'pristine' commit) from the same
#            fragments minus the symbols it does not have (our suites,
#            NO_PAGE_MAPCOUNT), in $BUILD/selftests/ARCH-stock
# After make test-full's KUnit rows, patched and npm are built already and
# this only checks them (kunit.py build: make finds nothing to do).
# Usage: ci/selftests_kernels.sh ARCH [KERNEL...]   (default: all three)
# Prints "KERNEL BUILD_DIR" per kernel on stdout; build logs in $BUILD/selftests.
. "$(dirname "$0")/lib.sh"

arch=${1:?usage: ci/selftests_kernels.sh ARCH [stock patched npm]}
shift
kernels=("${@:-stock patched npm}")
read -r -a kernels <<<"${kernels[*]}"
case $arch in
x86_64|arm64) ;;
*) die "make selftests runs on x86_64 and arm64, not '$arch'" ;;
esac
OUT=$BUILD/selftests
mkdir -p "$OUT" "$CCACHE_DIR" "$BUILD/kunit"
export_stock

# Every Kconfig symbol the stock tree defines, to filter its fragment.
stock_symbols() {
	[ -s "$OUT/stock-symbols" ] && [ "$OUT/stock-symbols" -nt "$STOCK/.pristine" ] && return
	grep -rhoE '^[[:space:]]*(menu)?config [A-Za-z0-9_]+' --include='Kconfig*' "$STOCK" |
		awk '{ print "CONFIG_" $2 }' | sort -u > "$OUT/stock-symbols"
}

build() {	# kernel
	local k=$1 src=$TREE variant=default frag t0 sym dir
	case $k in
	stock)   src=$STOCK ;;
	patched|prod) ;;
	npm)     variant=no_page_mapcount ;;
	*)       die "unknown kernel '$k' (stock, patched, npm or prod)" ;;
	esac
	mapfile -t args < <(kunit_build_args "$arch")
	mapfile -t configs < <(kunit_config_files "$arch" "$variant")
	args=(build "${args[@]}")
	if [ "$k" = stock ]; then
		dir=$OUT/$arch-stock
		frag=$OUT/$arch-stock.config
		cat "${configs[@]}" > "$frag"
		stock_symbols
		while read -r sym; do
			grep -qxF "$sym" "$OUT/stock-symbols" || sed -i "/^# *$sym is not set\$/d; /^$sym=/d" "$frag"
		done < <(grep -oE '^(# )?CONFIG_[A-Za-z0-9_]+' "$frag" | sed 's/^# //' | sort -u)
		args+=(--build_dir="$dir" --kunitconfig="$frag")
	elif [ "$k" = prod ]; then
		# The patched kernel as a distribution builds it: without the
		# VM_WARN_ON*/VM_BUG_ON* checks, so nothing reports a bad page
		# that slips through.
		dir=$OUT/$arch-prod
		args+=(--build_dir="$dir" --kconfig_add=CONFIG_DEBUG_VM=n)
		for c in "${configs[@]}"; do
			args+=(--kunitconfig="$c")
		done
	else
		# Exactly what ci/kunit.sh builds for this arch and variant.
		dir=$BUILD/kunit/$arch-$variant
		args+=(--build_dir="$dir")
		for c in "${configs[@]}"; do
			args+=(--kunitconfig="$c")
		done
	fi
	t0=$(now)
	log "selftests: building (or checking) the $arch $k kernel in $dir (from $src)"
	(cd "$src" && python3 tools/testing/kunit/kunit.py "${args[@]}") > "$OUT/$arch-$k.build.log" 2>&1 ||
		die "building the $arch $k kernel failed (see $OUT/$arch-$k.build.log)"
	log "selftests: $arch $k kernel ready in $(( $(now) - t0 )) s"
	echo "$k $dir"
}

for k in "${kernels[@]}"; do
	build "$k"
done
