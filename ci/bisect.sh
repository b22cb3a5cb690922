#!/bin/bash
# Bisectability: build the kernel at every patch of the series, in order,
# for each ARCH given (default: x86_64 i386, one 64-bit and one 32-bit
# layout).  A git worktree of the tree is checked out at each commit and
# built incrementally in one directory per arch, with the .config that
# kunit.py made for the matrix (run `make kunit ARCH=...` first), suites
# included: each suite comes with the patch that adds it, so every patch
# builds the suites it has.  The .config is copied again before every
# patch, so that a suite's symbol, unknown before its patch, is on from it.
# Not part of `make test`: the header changes make it a near-full rebuild
# per patch.  Usage: ci/bisect.sh [ARCH...]
# BISECT_FROM=N starts at patch N (the build directory keeps the objects of
# the last run, so checking only new patches is incremental).
# BISECT_VARIANT=no_page_mapcount builds with that variant's .config.
. "$(dirname "$0")/lib.sh"

arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 i386)
"$TOP/ci/tree.sh"

wt=$BUILD/bisect/src
if [ ! -e "$wt/.git" ]; then
	rm -rf "$wt"
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$wt" pristine
fi
mapfile -t commits < <(git -C "$TREE" rev-list --reverse pristine..HEAD)
[ ${#commits[@]} -gt 0 ] || die "no patches on top of pristine"

for arch in "${arches[@]}"; do
	case $arch in
	x86_64|i386) cross= ;;
	arm64)       cross=aarch64-linux-gnu- ;;
	arm)         cross=arm-linux-gnueabihf- ;;
	*)           die "unknown ARCH '$arch' (x86_64, arm64, i386 or arm)" ;;
	esac
	out=$BUILD/bisect/$arch-${BISECT_VARIANT:-default}
	variant=${BISECT_VARIANT:-default}
	kcfg=$BUILD/kunit/$arch-$variant/.config
	[ -f "$kcfg" ] || die "no $kcfg: run 'make kunit ARCH=$arch VARIANT=$variant' first"
	mkdir -p "$out" "$CCACHE_DIR"
	i=0
	for c in "${commits[@]}"; do
		i=$((i + 1))
		[ "$i" -ge "${BISECT_FROM:-1}" ] || continue
		subject=$(git -C "$TREE" log -1 --format=%s "$c")
		git -C "$wt" checkout -q --detach "$c"
		log "bisect $arch: $i/${#commits[@]} $subject"
		start=$(now)
		mk=(make -C "$wt" O="$out" ARCH="$arch" CROSS_COMPILE="$cross"
		    CC="ccache ${cross}gcc" HOSTCC="ccache gcc")
		cp "$kcfg" "$out/.config"
		"${mk[@]}" -s olddefconfig >/dev/null
		# Each suite symbol the matrix has and this patch knows is on.
		while read -r sym; do
			grep -q "^config ${sym#CONFIG_}\$" -r --include='Kconfig*' "$wt/mm" "$wt/fs" ||
				continue
			grep -qx "$sym=y" "$out/.config" ||
				die "$arch, patch $i/${#commits[@]} ($subject): $sym is defined but not on after olddefconfig"
		done < <(sed -n 's/^\(CONFIG_.*_KUNIT_TEST\)=y$/\1/p' "$kcfg")
		if ! "${mk[@]}" -s -j"$(nproc)" vmlinux > "$out/build.log" 2>&1; then
			tail -30 "$out/build.log" >&2
			die "$arch does not build at patch $i/${#commits[@]}: $subject (log: $out/build.log)"
		fi
		log "bisect $arch: patch $i builds ($(( $(now) - start )) s)"
	done
done
log "every patch builds on: ${arches[*]}"
