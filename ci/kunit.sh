#!/bin/bash
# Build and run the KUnit suites for one architecture and variant under
# QEMU (TCG, never KVM), with kunit.py from the prepared tree.
# Usage: ci/kunit.sh ARCH [VARIANT]      ARCH: x86_64 arm64 i386 arm
# Writes $BUILD/results/ARCH-VARIANT.{json,log,counts}.
. "$(dirname "$0")/lib.sh"

arch=${1:-x86_64}
variant=${2:-default}

cfg=$TOP/kunitconfigs
# Assignments from $(...), not mapfile < <(...): with set -e, an unknown
# ARCH or VARIANT (a die in the helper) stops this script too.
configs=$(kunit_config_files "$arch" "$variant")
build_args=$(kunit_build_args "$arch")
run_args=$(kunit_run_args "$arch")
mapfile -t configs <<<"$configs"
mapfile -t build_args <<<"$build_args"
mapfile -t run_args <<<"$run_args"

only=$(sed -n 's/^# Arches: *//p' "$cfg/variant/$variant.config" | head -1)
case " ${only:-$arch} " in
*" $arch "*) ;;
*) die "VARIANT '$variant' runs on $only only (kunitconfigs/variant/$variant.config)" ;;
esac

# ci/mutants.sh runs on a tree it has changed on purpose.
[ "${SKIP_TREE:-0}" = 1 ] || "$TOP/ci/tree.sh"

mkdir -p "$CCACHE_DIR" "$BUILD/results" "$BUILD/kunit"
out=$BUILD/kunit/$arch-$variant
res=$BUILD/results/${RESULT_NAME:-$arch-$variant}
rm -f "$res".json "$res".log "$res".counts "$res".out "$res".run1.*
# kunit.py leaves test.log alone when the build fails: never report a stale one.
rm -f "$out/test.log"

args=(run --build_dir="$out" "${build_args[@]}" "${run_args[@]}"
      --timeout=600 --json="$res.json")
for c in "${configs[@]}"; do
	args+=(--kunitconfig="$c")
done
# Cases marked slow (KUNIT_CASE_SLOW ...) run only with SLOW=1.
[ "${SLOW:-0}" = 1 ] || args+=(--filter="speed>slow")
# KUNIT_ARGS: more kunit.py options, e.g. "--kernel_args=folio_owner_trace.seed=7".
# shellcheck disable=SC2206
[ -n "${KUNIT_ARGS:-}" ] && args+=(${KUNIT_ARGS})

problems='WARNING:|BUG:|Bad page|Kernel panic|Oops'
kunit_py() {	# run|exec, then the options
	(cd "$TREE" && python3 tools/testing/kunit/kunit.py "$@") 2>&1 | tee "$res.out"
	return "${PIPESTATUS[0]}"
}

log "KUnit $arch/$variant: building in $out and running under QEMU (TCG)"
start=$(now)
rc=0
kunit_py "${args[@]}" || rc=$?

# kunit.py's parser once (in 60 runs of the same kernel) made up results for
# subtests it expected and did not find, although the kernel reported no
# problem and every real case passed: on x86, the TSC's late calibration
# messages had landed inside the KTAP output, which tsc=unstable (see
# kunit_run_args in ci/lib.sh) now prevents at the source.  As a last
# resort, keep that output for a post-mortem, say so loudly (ci/matrix.sh
# counts the re-runs and repeats them under its table), and run the same
# kernel once more: a case that really crashes or hangs fails both runs.
missing=$(python3 "$TOP/ci/kunit_results.py" missing "$res.json" 2>/dev/null || echo 0)
if [ "${RERUN_MISSING:-1}" = 1 ] && [ "$missing" -gt 0 ] && [ -s "$out/test.log" ] && ! grep -qE "$problems" "$out/test.log"; then
	cp "$out/test.log" "$res.run1.log"
	cp "$res.json" "$res.run1.json"
	cp "$res.out" "$res.run1.out"
	warn "$arch/$variant: kunit.py expected $missing subtest(s) it did not find in the output, with no kernel problem in the log; its complaints:"
	grep -E '\[(ERROR|FAILED|CRASHED)\]|missing' "$res.run1.out" | head -20 >&2 || :
	echo "$arch/$variant: run 1 had $missing subtest(s) missing from the output (kept in $res.run1.log); re-ran the same kernel" \
		>> "$BUILD/results/notes"
	log "KUnit $arch/$variant: running the same kernel again"
	exec_args=()
	for a in "${args[@]:1}"; do
		case $a in --jobs=*) ;; *) exec_args+=("$a") ;; esac
	done
	rc=0
	kunit_py exec "${exec_args[@]}" || rc=$?
fi
cp "$out/test.log" "$res.log" 2>/dev/null || : > "$res.log"

# A WARN, BUG or bad page report fails the run even if every case passed.
if grep -nE "$problems" "$res.log" >&2; then
	warn "$arch/$variant: the kernel reported a problem (above; full log: $res.log)"
	rc=1
fi

# Skips are not passes: every skip of a full run is listed, with the
# kernel's reason, in ci/expected-skips/ARCH-VARIANT.txt, and every listed
# skip happens (a list that no longer matches fails the run too).  A run
# with KUNIT_ARGS (a filter, a seed) is not a full run: it is marked so,
# and ci/consumer.sh does not compare its cases.
rm -f "$res.filtered"
if [ -n "${KUNIT_ARGS:-}" ]; then
	echo "$KUNIT_ARGS" > "$res.filtered"
elif [ -z "${RESULT_NAME:-}" ] && [ -s "$res.json" ]; then
	list=$TOP/ci/expected-skips/$arch-$variant.txt
	if [ ! -f "$list" ]; then
		warn "$arch/$variant: no ci/expected-skips/$arch-$variant.txt; the skips of this run, with the kernel's reasons:"
		python3 "$TOP/ci/skips.py" list "$res.json" "$res.log" >&2 || :
		rc=1
	elif ! python3 "$TOP/ci/skips.py" check "$list" "$res.json" "$res.log" >&2; then
		warn "$arch/$variant: the skips differ from ci/expected-skips/$arch-$variant.txt (above)"
		echo "$arch/$variant: the skips differ from ci/expected-skips/$arch-$variant.txt" >> "$BUILD/results/notes"
		rc=1
	fi
fi

python3 "$TOP/ci/kunit_results.py" counts "$res.json" > "$res.counts" 2>/dev/null || echo "0 0 0" > "$res.counts"
read -r passed failed skipped < "$res.counts"
if [ "$rc" -eq 0 ] && [ "$passed" -eq 0 ]; then
	warn "$arch/$variant: no case ran"
	rc=1
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1	# build failure, crash, time-out, kernel warning or no case run
	echo "$passed $failed $skipped" > "$res.counts"
fi
log "KUnit $arch/$variant: $passed passed, $failed failed, $skipped skipped in $(( $(now) - start )) s"
exit "$rc"
