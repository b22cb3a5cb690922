#!/bin/bash
# The test, in two tiers (TIER=gate or full; the tiers are defined in
# ci/lib.sh).  Both: series applies exactly, checkpatch, the KUnit matrix,
# the mutation check.  The gate (make test) runs the KUnit matrix on
# GATE_ARCHES x GATE_VARIANTS and the "Tier: gate" mutants; the full tier
# (make test-full) runs every arch x every variant in kunitconfigs/variant/,
# the userspace selftests on stock vs patched kernels, the build with
# Debian's own config (ci/distro_config.sh) and every mutant.
# Ends with one table and the line "N passed, N failed"; exits non-zero on
# any failure.  ARCHES and VARIANTS override the tier's matrix.
. "$(dirname "$0")/lib.sh"

TIER=${TIER:-gate}
case $TIER in
gate)
	ARCHES=${ARCHES:-$GATE_ARCHES}
	VARIANTS=${VARIANTS:-$GATE_VARIANTS}
	export MUTANTS_TIER=${MUTANTS_TIER:-gate}
	SELFTESTS=${SELFTESTS:-0}
	CONSUMER_ROWS=${CONSUMER_ROWS:-$GATE_CONSUMER_ROWS}
	;;
full)
	ARCHES=${ARCHES:-$ALL_ARCHES}
	VARIANTS=${VARIANTS:-$(cd "$TOP/kunitconfigs/variant" && ls ./*.config | sed 's|^\./||; s|\.config$||' | xargs)}
	SELFTESTS=${SELFTESTS:-1}
	CONSUMER_ROWS=${CONSUMER_ROWS:-$FULL_CONSUMER_ROWS}
	;;
*)	die "unknown TIER '$TIER' (gate or full)" ;;
esac
log "test tier '$TIER': KUnit on $ARCHES x $VARIANTS, consumer path $CONSUMER_ROWS, selftests $([ "$SELFTESTS" = 1 ] && echo on || echo off), mutants ${MUTANTS_TIER:-all}"
start=$(now)
rows=()
notes=()	# what the table cannot say: failed cases, re-runs
mkdir -p "$BUILD/results"
rm -f "$BUILD/results/notes"
passed=0 failed=0 skipped=0 reruns=0

step() {	# label, command...: one passed/failed check
	local label=$1 t0 rc=0
	shift
	t0=$(now)
	log "$label"
	"$@" || rc=$?
	if [ $rc -eq 0 ]; then
		rows+=("$(printf '%-30s %6s %6s %7s  %-4s %5ss' "$label" 1 0 0 PASS $(( $(now) - t0 )))")
		passed=$((passed + 1))
	else
		rows+=("$(printf '%-30s %6s %6s %7s  %-4s %5ss' "$label" 0 1 0 FAIL $(( $(now) - t0 )))")
		failed=$((failed + 1))
	fi
}

step "tree (extract + git am)" "$TOP/ci/tree.sh"
step "series applies exactly" "$TOP/ci/check-series.sh"
step "checkpatch --strict" "$TOP/ci/checkpatch.sh"
step "lint (shellcheck, actionlint)" "$TOP/ci/lint.sh"
step "Kconfig dependencies" "$TOP/ci/kconfig_check.sh"

# A variant whose file has an "# Arches: ..." line runs on those arches only.
variant_arches() {
	local only
	only=$(sed -n 's/^# Arches: *//p' "$TOP/kunitconfigs/variant/$1.config" | head -1)
	if [ -z "$only" ]; then
		echo "$ARCHES"
		return
	fi
	for a in $ARCHES; do
		case " $only " in *" $a "*) printf '%s ' "$a" ;; esac
	done
}

for variant in $VARIANTS; do
	for arch in $(variant_arches "$variant"); do
		t0=$(now)
		rc=0
		"$TOP/ci/kunit.sh" "$arch" "$variant" || rc=$?
		read -r p f s < "$BUILD/results/$arch-$variant.counts"
		[ $rc -eq 0 ] && [ "$f" -eq 0 ] && r=PASS || r=FAIL
		[ "$p" -gt 0 ] || r=FAIL	# a run that ran no case is no pass
		[ $r = FAIL ] && [ "$f" -eq 0 ] && f=1
		if [ $r = FAIL ]; then
			cases=$(python3 "$TOP/ci/kunit_results.py" failed "$BUILD/results/$arch-$variant.json" 2>/dev/null | xargs || true)
			notes+=("$arch/$variant failed: ${cases:-no case failed (build, kernel warning, time-out or unexpected skips: see the output of ci/kunit.sh and $BUILD/results/$arch-$variant.log)}")
		fi
		label="kunit $arch $variant"
		if [ -f "$BUILD/results/$arch-$variant.run1.log" ]; then
			label="$label (re-run)"
			reruns=$((reruns + 1))
		fi
		rows+=("$(printf '%-30s %6s %6s %7s  %-4s %5ss' "$label" "$p" "$f" "$s" $r $(( $(now) - t0 )))")
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	done
done

# The consumer path: a tree made by git am of patches/ alone, and the
# cover letter's kunit.py command line, for the tier's rows.
for row in $CONSUMER_ROWS; do
	arch=${row%/*} variant=${row#*/}
	case " $ARCHES " in *" $arch "*) ;; *) continue ;; esac
	t0=$(now)
	rc=0
	"$TOP/ci/consumer.sh" "$arch" "$variant" || rc=$?
	read -r p f s < "$BUILD/results/consumer-$arch-$variant.counts" 2>/dev/null || { p=0 f=0 s=0; }
	[ $rc -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ] && r=PASS || r=FAIL
	[ $r = FAIL ] && [ "$f" -eq 0 ] && f=1
	[ $r = PASS ] || notes+=("consumer path $arch/$variant failed: see the output of ci/consumer.sh above and $BUILD/results/consumer-$arch-$variant.log")
	rows+=("$(printf '%-30s %6s %6s %7s  %-4s %5ss' "consumer $arch $variant" "$p" "$f" "$s" $r $(( $(now) - t0 )))")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done

# Real processes on stock, patched and NO_PAGE_MAPCOUNT kernels (own builds).
SELFTESTS_MD=$BUILD/results/selftests/selftests.md
rm -f "$SELFTESTS_MD"
st_arches=${SELFTESTS_ARCHES:-$(for a in $ARCHES; do case $a in x86_64|arm64) printf '%s ' "$a" ;; esac; done)}
if [ "$SELFTESTS" != 1 ]; then
	notes+=("selftests not run in the '$TIER' tier: make test-full runs them")
elif [ -n "${st_arches// }" ]; then
	SELFTESTS_ARCHES=$st_arches step "selftests (stock vs patched)" "$TOP/ci/selftests.sh"
	[ -f "$SELFTESTS_MD" ] || notes+=("selftests wrote no report: see the output of ci/selftests.sh above")
else
	notes+=("selftests skipped: they run on x86_64 and arm64, and ARCHES is '$ARCHES'")
fi

if [ "$TIER" = full ]; then
	step "distro config (Debian amd64)" "$TOP/ci/distro_config.sh"
fi

step "mutants${MUTANTS_TIER:+ ($MUTANTS_TIER tier)}" "$TOP/ci/mutants.sh"

echo
printf '%-30s %6s %6s %7s  %-4s %6s\n' "check" passed failed skipped "" time
printf '%s\n' "${rows[@]}"
echo "total time: $(( $(now) - start )) s; KUnit kernels re-run after a lost KTAP line: $reruns"
if [ -f "$SELFTESTS_MD" ]; then
	echo
	echo "selftests, side by side ($SELFTESTS_MD):"
	cat "$SELFTESTS_MD"
fi
if [ -f "$BUILD/results/notes" ]; then
	mapfile -t -O "${#notes[@]}" notes < "$BUILD/results/notes"
fi
if [ ${#notes[@]} -gt 0 ]; then
	echo
	printf 'note: %s\n' "${notes[@]}"
fi
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
