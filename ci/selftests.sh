#!/bin/bash
# make selftests: real processes on real kernels.  For each architecture,
# boot stock 6.12, patched and patched + NO_PAGE_MAPCOUNT (the matrix's
# kernels and a stock build: ci/selftests_kernels.sh) under QEMU TCG with
# an initramfs whose init (selftests/init.c) runs, in each kernel:
#   - folio_proc_test (selftests/): /proc as users see a shared 64 KiB
#     folio, and COW reuse, with the values expected of each kernel;
#   - the 6.12 tree's own tools/testing/selftests/mm tests of this code:
#     split_huge_page_test, khugepaged (PMD and order-2 mTHP), cow.
# On x86_64, the same three kernels (and, in the HVO groups, the patched
# kernel built without DEBUG_VM, "prod") boot again with the options users set
# and debug with (BOOT_GROUPS below: HVO with hugetlb_free_vmemmap=on, alone
# and with init_on_free=1 or debug_pagealloc=on; page_owner=on with and
# without slub_min_order=3) and run folio_proc_test, selftests/
# kpage_scan_test (a HugeTLB pool filled, used, COW'd and dissolved three
# times, then all of /proc/kpagecgroup, kpageflags, kpagecount and
# /sys/kernel/debug/page_owner read) and the tree's HugeTLB selftests.
# ci/selftests_report.py prints the results side by side and fails if a
# patched kernel fails a case stock passes, if folio_proc_test fails, or if
# a kernel warns (stock's known HVO bad pages are named, not failed).
#
# Settings (environment):
#   SELFTESTS_ARCHES   default "x86_64 arm64"
#   SELFTESTS_RUN      programs to run, comma-separated, ':' between the
#                      arguments of one (default: all of the above)
#   SELFTESTS_GROUPS   boot-option groups to run on x86_64 (default: all of
#                      BOOT_GROUPS; "none" for none)
#   SELFTESTS_TIMEOUT  seconds one program may run (default 1500)
. "$(dirname "$0")/lib.sh"

ARCHES=${SELFTESTS_ARCHES:-x86_64 arm64}
RUN=${SELFTESTS_RUN:-folio_proc_test,split_huge_page_test,khugepaged,khugepaged:-s:2,cow}
# The tree's HugeTLB selftests that build and run without a hugetlbfs mount
# (hugepage-mremap would also need CONFIG_USERFAULTFD, which these kernels
# do not have).
HUGETLB_TESTS="hugepage-vmemmap hugetlb-madvise map_hugetlb hugetlb_fault_after_madv"
# map_hugetlb maps 4 MiB instead of its 256: the groups reserve 20 pages
# (hugetlb-madvise needs 20 free).
GROUP_RUN=folio_proc_test,kpage_scan_test,hugepage-vmemmap,hugetlb-madvise,map_hugetlb:4,hugetlb_fault_after_madv
GROUP_HUGEPAGES=20
# Boot-option groups (x86_64): NAME|kernel arguments.  The kernels have
# HVO on by default (kunitconfigs/extra/hvo.config): the page_owner groups
# turn it off, so that they test page_owner alone.  Stock 6.12's HVO
# restore leaves copies of folio metadata in the struct pages it restores
# (fixed by the series' first patch): in the groups named hvo*, stock's
# bad page reports are listed as that known bug, not failed.
BOOT_GROUPS=(
	"hvo|hugetlb_free_vmemmap=on"
	"hvo+init_on_free|hugetlb_free_vmemmap=on init_on_free=1"
	"hvo+debug_pagealloc|hugetlb_free_vmemmap=on debug_pagealloc=on"
	"page_owner+slub_min_order=3|page_owner=on slub_min_order=3 hugetlb_free_vmemmap=off"
	"page_owner|page_owner=on hugetlb_free_vmemmap=off"
)
TIMEOUT=${SELFTESTS_TIMEOUT:-1500}
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "SELFTESTS_TIMEOUT must be a positive number, not '$TIMEOUT'"
[[ $RUN =~ ^[A-Za-z0-9_,:-]+$ ]] || die "SELFTESTS_RUN must be programs separated by commas, not '$RUN'"
KERNELS=(stock patched npm)

"$TOP/ci/deps.sh"
"$TOP/ci/tree.sh"
export_stock
OUT=$BUILD/selftests
RES=$BUILD/results/selftests
rm -rf "$RES"
mkdir -p "$OUT" "$RES"
start=$(now)

# The selftests come from the stock tree: the same programs judge every kernel.
ST=$STOCK/tools/testing/selftests/mm

userspace() {	# arch: static programs and the initramfs in $OUT/user-ARCH
	local arch=$1 cc u hdr t
	case $arch in
	x86_64) cc=gcc ;;
	arm64)  cc=aarch64-linux-gnu-gcc ;;
	esac
	u=$OUT/user-$arch
	hdr=$OUT/headers-$arch
	mkdir -p "$u/bin"
	if [ ! -f "$hdr/.done" ]; then
		log "selftests: installing the $arch UAPI headers of 6.12 into $hdr"
		rm -rf "$hdr"
		make -s -C "$STOCK" ARCH="$arch" O="$hdr/build" INSTALL_HDR_PATH="$hdr" headers_install \
			> "$RES/headers-$arch.log" 2>&1 || die "headers_install for $arch failed (see $RES/headers-$arch.log)"
		touch "$hdr/.done"
	fi
	log "selftests: building the $arch test programs (static) and the initramfs"
	# What the selftests' Makefile would generate: no liburing here.
	echo "// No liburing support found" > "$u/local_config.h"
	for t in cow khugepaged split_huge_page_test $HUGETLB_TESTS; do
		(cd "$ST" && $cc -static -O2 -Wall -D_GNU_SOURCE= -U_FORTIFY_SOURCE \
			-I "$u" -isystem "$hdr/include" -I ../../../.. -include ../kselftest.h \
			-o "$u/bin/$t" "$t.c" vm_util.c thp_settings.c -lrt -lpthread -lm) \
			> "$RES/cc-$arch-$t.log" 2>&1 || die "building selftest $t for $arch failed (see $RES/cc-$arch-$t.log)"
	done
	for t in init folio_proc_test kpage_scan_test; do
		$cc -static -O2 -Wall -Wextra -Werror -o "$u/bin/$t" "$TOP/selftests/$t.c" \
			> "$RES/cc-$arch-$t.log" 2>&1 || die "building selftests/$t.c for $arch failed (see $RES/cc-$arch-$t.log)"
	done
	gcc -O2 -o "$OUT/gen_init_cpio" "$TREE/usr/gen_init_cpio.c" || die "building usr/gen_init_cpio failed"
	{
		printf 'dir /dev 0755 0 0\nnod /dev/console 0600 0 0 c 5 1\n'
		printf 'dir /proc 0755 0 0\ndir /sys 0755 0 0\ndir /tmp 01777 0 0\ndir /bin 0755 0 0\n'
		printf 'file /selftests-initramfs /dev/null 0644 0 0\n'
		printf 'file /init %s 0755 0 0\n' "$u/bin/init"
		for t in cow khugepaged split_huge_page_test folio_proc_test kpage_scan_test $HUGETLB_TESTS; do
			printf 'file /bin/%s %s 0755 0 0\n' "$t" "$u/bin/$t"
		done
	} > "$u/initramfs.list"
	"$OUT/gen_init_cpio" "$u/initramfs.list" > "$u/initramfs.cpio" || die "gen_init_cpio failed"
}

boot() {	# arch kernel build-dir [group run-list kernel-arguments]
	local arch=$1 k=$2 dir=$3 group=${4:-} run=${5:-$RUN} extra=${6:-} t0 rc=0 qemu
	local log=$RES/$1${group:+-$group}-$2.log
	# prod is the patched kernel without DEBUG_VM: the tests expect patched.
	local append="loglevel=5 kunit.enable=0 panic=-1 $extra selftests.kernel=${k/prod/patched} selftests.run=$run selftests.timeout=$TIMEOUT"
	# shellcheck disable=SC2054	# the comma is part of the arm64 -cpu value
	case $arch in
	x86_64) qemu=(qemu-system-x86_64 -bios qboot.rom -kernel "$dir/arch/x86/boot/bzImage")
		append="console=ttyS0 $append" ;;
	arm64)  qemu=(qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on
		      -kernel "$dir/arch/arm64/boot/Image.gz")
		append="console=ttyAMA0 $append" ;;
	esac
	t0=$(now)
	log "selftests: $arch $k kernel${group:+ ($extra)}: running $run under QEMU (TCG, -smp 2)"
	# One program's time-out is the init's; the whole boot gets them all.
	timeout $(( TIMEOUT * 6 )) "${qemu[@]}" -nodefaults -nographic -no-reboot \
		-serial stdio -smp 2 -m 2048 -initrd "$OUT/user-$arch/initramfs.cpio" \
		-append "$append" < /dev/null > "$log" 2>&1 || rc=$?
	[ $rc -eq 124 ] && warn "$arch $k: QEMU killed after $(( TIMEOUT * 6 )) s"
	grep -E '^SELFTEST-END' "$log" | sed "s|^|    $arch${group:+/$group} $k: |" >&2 || :
	log "selftests: $arch $k done in $(( $(now) - t0 )) s"
}

for arch in $ARCHES; do
	case $arch in x86_64|arm64) ;; *) die "make selftests runs on x86_64 and arm64, not '$arch'" ;; esac
	"$TOP/ci/selftests_kernels.sh" "$arch" "${KERNELS[@]}" > "$OUT/$arch-kernels"
	userspace "$arch"
	while read -r k dir; do
		boot "$arch" "$k" "$dir"
	done < "$OUT/$arch-kernels"
done

# The boot-option groups, x86_64 only.
groups=()
if [[ " $ARCHES " == *" x86_64 "* ]] && [ "${SELFTESTS_GROUPS:-all}" != none ]; then
	for g in "${BOOT_GROUPS[@]}"; do
		name=${g%%|*}
		case " ${SELFTESTS_GROUPS:-all} " in
		" all "|*" $name "*) groups+=("$g") ;;
		esac
	done
fi
# The HVO groups also boot the patched kernel without DEBUG_VM ("prod"):
# the production-like build, where nothing reports a bad page.
if [[ " ${groups[*]%%|*} " == *" hvo"* ]]; then
	"$TOP/ci/selftests_kernels.sh" x86_64 prod > "$OUT/x86_64-prod-kernel"
fi
group_kernels() {	# group name: its kernels' names
	case $1 in hvo*) echo "${KERNELS[*]} prod" ;; *) echo "${KERNELS[*]}" ;; esac
}
for g in "${groups[@]}"; do
	while read -r k dir; do
		[[ " $(group_kernels "${g%%|*}") " == *" $k "* ]] || continue
		boot x86_64 "$k" "$dir" "${g%%|*}" "$GROUP_RUN" "${g#*|} selftests.hugepages=$GROUP_HUGEPAGES"
	done < <(cat "$OUT/x86_64-kernels" "$OUT/x86_64-prod-kernel" 2>/dev/null)
done

logs=()
for arch in $ARCHES; do
	for k in "${KERNELS[@]}"; do
		logs+=("$arch:$k=$RES/$arch-$k.log")
	done
done
for g in "${groups[@]}"; do
	for k in $(group_kernels "${g%%|*}"); do
		logs+=("x86_64/${g%%|*}:$k=$RES/x86_64-${g%%|*}-$k.log")
	done
done
rc=0
python3 "$TOP/ci/selftests_report.py" --out "$RES/selftests" --known-stock-warnings hvo \
	"${logs[@]}" || rc=$?
log "selftests: done in $(( $(now) - start )) s; results in $RES"
exit $rc
