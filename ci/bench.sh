#!/bin/bash
# make bench: time munmap, fork and COW of PTE-mapped large folios on three
# kernels built from one config (kunitconfigs/bench.config): stock 6.12,
# patched, and patched + CONFIG_NO_PAGE_MAPCOUNT.  Each kernel boots under
# QEMU TCG with an initramfs whose init is bench/folio_bench.c; boots
# alternate between the kernels (stock, patched, npm, stock, ...) so that
# drift of the host hits all three alike.  ci/bench_report.py turns the
# samples into $BUILD/bench/results/bench.{csv,md,png}, copied to
# bench/results/ in the checkout (the README shows them).
#
# Settings (environment):
#   BENCH_ROUNDS  boots per kernel (default 2)
#   BENCH_REPS    repetitions of every operation per boot (default 7)
#   BENCH_MB      region size in MiB (default 16)
#   BENCH_SIZES   folio sizes in KiB, e.g. "4,64,2048" (default: all)
#   BENCH_ICOUNT  1: time is QEMU's instruction count (-icount shift=0,
#                 1 ns per guest instruction; default), 0: host time
#   BENCH_SMP     virtual CPUs (default 1: see below)
#   BENCH_TIMEOUT seconds one boot may take (default 1200)
. "$(dirname "$0")/lib.sh"

ROUNDS=${BENCH_ROUNDS:-2}
REPS=${BENCH_REPS:-7}
MB=${BENCH_MB:-16}
SIZES=${BENCH_SIZES:-}
ICOUNT=${BENCH_ICOUNT:-1}
TIMEOUT=${BENCH_TIMEOUT:-1200}
SMP=${BENCH_SMP:-1}
ARCH=${ARCH:-x86_64}
[ "$ARCH" = x86_64 ] || die "make bench runs on ARCH=x86_64 only (its initramfs holds a host-built static binary)"
for v in ROUNDS REPS MB TIMEOUT SMP; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "BENCH_$v must be a positive number, not '${!v}'"
done
[[ $ICOUNT =~ ^[01]$ ]] || die "BENCH_ICOUNT must be 0 or 1, not '$ICOUNT'"
[[ $SIZES =~ ^[0-9,]*$ ]] || die "BENCH_SIZES must be a comma-separated list of KiB, not '$SIZES'"

"$TOP/ci/deps.sh" bench
"$TOP/ci/tree.sh"

OUT=$BUILD/bench
RES=$OUT/results
mkdir -p "$OUT" "$CCACHE_DIR"
rm -rf "$RES"
mkdir -p "$RES"
start=$(now)

export_stock

KERNELS=(stock patched npm)
declare -A SRC=([stock]=$STOCK [patched]=$TREE [npm]=$TREE)
declare -A VARIANT=([stock]="" [patched]="" [npm]=no_page_mapcount)

build_kernel() {	# name
	local name=$1 t0 args
	t0=$(now)
	mapfile -t args < <(kunit_build_args x86_64)
	args=(build "${args[@]}" --build_dir="$OUT/$name"
	      --kunitconfig="$TOP/kunitconfigs/arch/x86_64.config"
	      --kunitconfig="$TOP/kunitconfigs/bench.config")
	[ -n "${VARIANT[$name]}" ] &&
		args+=(--kunitconfig="$TOP/kunitconfigs/variant/${VARIANT[$name]}.config")
	log "bench: building the $name kernel in $OUT/$name (from ${SRC[$name]})"
	(cd "${SRC[$name]}" && python3 tools/testing/kunit/kunit.py "${args[@]}") > "$RES/build-$name.log" 2>&1 ||
		die "building the $name kernel failed (see $RES/build-$name.log)"
	log "bench: $name kernel built in $(( $(now) - t0 )) s"
}
for k in "${KERNELS[@]}"; do
	build_kernel "$k"
done

log "bench: building bench/folio_bench.c (static) and the initramfs"
gcc -O2 -static -Wall -Wextra -Werror -o "$OUT/folio_bench" "$TOP/bench/folio_bench.c" ||
	die "building bench/folio_bench.c failed"
gcc -O2 -o "$OUT/gen_init_cpio" "$TREE/usr/gen_init_cpio.c" || die "building usr/gen_init_cpio failed"
cat > "$OUT/initramfs.list" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /proc 0755 0 0
dir /sys 0755 0 0
file /init $OUT/folio_bench 0755 0 0
EOF
"$OUT/gen_init_cpio" "$OUT/initramfs.list" > "$OUT/initramfs.cpio" || die "gen_init_cpio failed"

qemu_timing=()
if [ "$ICOUNT" = 1 ]; then
	# Virtual time advances by one ns per guest instruction and never
	# with the host's load: runs repeat, and TCG's cost of emulating
	# an instruction does not enter the result.
	qemu_timing=(-icount "shift=0,align=off,sleep=off")
fi
# One vCPU by default: under -icount the virtual clock counts the
# instructions of every vCPU, so with two the child's and kworkers' work
# on the other vCPU landed in the parent's timed sections (fork samples of
# one kernel varied by 40%).  The kernel is still built with SMP=y, so its
# locks and atomics are the ones a distribution kernel runs.
append="console=ttyS0 quiet panic=-1 BENCH_REPS=$REPS BENCH_MB=$MB"
[ -n "$SIZES" ] && append+=" BENCH_SIZES=$SIZES"

boot() {	# name round
	local name=$1 round=$2 t0 log rc=0
	log=$RES/$name-round$round.log
	t0=$(now)
	log "bench: round $round/$ROUNDS, $name kernel ($REPS reps of 5 operations per folio size)"
	timeout "$TIMEOUT" qemu-system-x86_64 -nodefaults -nographic -no-reboot \
		-bios qboot.rom -serial stdio -m 2048 -smp "$SMP" "${qemu_timing[@]}" \
		-kernel "$OUT/$name/arch/x86/boot/bzImage" -initrd "$OUT/initramfs.cpio" \
		-append "$append" < /dev/null > "$log" 2>&1 || rc=$?
	grep -E '^BENCH-(INFO size_kb=[0-9]+ thp_pages|WARN|ERROR)' "$log" | sed 's/^/    /' >&2 || :
	[ "$rc" -eq 124 ] && die "the $name kernel did not finish within $TIMEOUT s (BENCH_TIMEOUT; log: $log)"
	grep -q '^BENCH-DONE' "$log" || die "the benchmark did not finish on the $name kernel (log: $log)"
	log "bench: $name round $round took $(( $(now) - t0 )) s"
}
for round in $(seq 1 "$ROUNDS"); do
	for k in "${KERNELS[@]}"; do
		boot "$k" "$round"
	done
done

timing="QEMU -icount shift=0 (1 ns per guest instruction)"
[ "$ICOUNT" = 1 ] || timing="host time (CLOCK_MONOTONIC in a TCG guest)"
python3 "$TOP/ci/bench_report.py" --out "$RES/bench" --timing "$timing" \
	--setup "$ROUNDS boots per kernel x $REPS reps, ${MB} MiB region, QEMU TCG -smp $SMP" \
	"$RES"/*-round*.log || die "ci/bench_report.py failed"
# The README shows the latest table and plot: keep them in the checkout.
mkdir -p "$TOP/bench/results"
cp "$RES/bench.md" "$RES/bench.csv" "$RES/bench.png" "$TOP/bench/results/"
log "bench: done in $(( $(now) - start )) s; table and plot in $RES and bench/results/"
cat "$RES/bench.md"
