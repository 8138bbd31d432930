#!/usr/bin/env bash
# make-cores.sh: build mpir_target.c as a dynamically linked PIE for foreign
# CPUs, run it under qemu-user (no binfmt_misc: qemu-<cpu> is called
# explicitly) and keep the guest core file qemu writes when the program
# abort()s, together with what the program printed.
#
# usage: make-cores.sh OUTDIR [ARCH...]
#   ARCH: s390x powerpc armhf i686 s390x_packed (default: all five;
#   s390x_packed is s390x with the MPI-2 records packed, as the draft says)
#
# For each ARCH, OUTDIR receives (old copies are replaced, so reruns are safe):
#   mpir_target-ARCH            the guest executable (PIE, -g -O0, unstripped)
#   libmpidd_fixture-ARCH.so    a shared library it links (found through
#                               $ORIGIN, so the core's link_map names the
#                               scratch directory, which is gone afterwards)
#   mpir_target-ARCH.core       the guest core written by qemu-user
#   mpir_target-ARCH.expected   the program's stdout: key=value lines
# and OUTDIR/MANIFEST lists tool versions and sha256 sums.
#
# Debian 12 packages needed (one line):
#   apt-get install --no-install-recommends qemu-user \
#     gcc-s390x-linux-gnu gcc-powerpc-linux-gnu gcc-arm-linux-gnueabihf \
#     gcc-i686-linux-gnu libc6-dev-s390x-cross libc6-dev-powerpc-cross \
#     libc6-dev-armhf-cross libc6-dev-i386-cross
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src="$here/mpir_target.c"
lib_src="$here/fixture_lib.c"

die() { echo "make-cores.sh: error: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 OUTDIR [s390x|powerpc|armhf|i686|s390x_packed ...]"
outdir=$1; shift
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(s390x powerpc armhf i686 s390x_packed)

# ARCH -> "gcc-triple qemu-binary libc6-dev-package"
arch_info() {
  case $1 in
    s390x|s390x_packed) echo "s390x-linux-gnu qemu-s390x libc6-dev-s390x-cross" ;;
    powerpc) echo "powerpc-linux-gnu qemu-ppc libc6-dev-powerpc-cross" ;;
    armhf)   echo "arm-linux-gnueabihf qemu-arm libc6-dev-armhf-cross" ;;
    i686)    echo "i686-linux-gnu qemu-i386 libc6-dev-i386-cross" ;;
  esac
}
for arch in "${archs[@]}"; do
  [ -n "$(arch_info "$arch")" ] ||
    die "unknown arch '$arch' (known: s390x powerpc armhf i686 s390x_packed)"
done

# Check every tool first, so a missing one fails before anything is built.
[ -f "$src" ] || die "missing source $src"
[ -f "$lib_src" ] || die "missing source $lib_src"
for arch in "${archs[@]}"; do
  read -r triple qemu devpkg <<<"$(arch_info "$arch")"
  command -v "$triple-gcc" >/dev/null ||
    die "$triple-gcc not found (apt-get install gcc-$triple)"
  command -v "$qemu" >/dev/null ||
    die "$qemu not found (apt-get install qemu-user)"
  [ -e "/usr/$triple/lib/Scrt1.o" ] ||
    die "/usr/$triple/lib/Scrt1.o not found (apt-get install $devpkg)"
done
command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"

# qemu-user only writes a guest core when RLIMIT_CORE is non-zero, and it
# truncates the guest core at RLIMIT_CORE: it must be unlimited.
ulimit -c unlimited 2>/dev/null ||
  die "cannot set 'ulimit -c unlimited' (hard limit is $(ulimit -H -c))"

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
manifest="$outdir/MANIFEST"
: >"$manifest.tmp"

for arch in "${archs[@]}"; do
  read -r triple qemu devpkg <<<"$(arch_info "$arch")"
  name="mpir_target-$arch"
  exe="$outdir/$name"
  lib="libmpidd_fixture-$arch.so"
  run="$outdir/.run-$arch"
  rm -rf "$run" "$exe" "$exe.core" "$exe.expected" "$exe.stderr" "$outdir/$lib"

  # Dynamically linked PIE; static-pie is not needed under qemu-user.
  # Compiled from $here with the path mapped away, so the binary does not
  # depend on where the repository or OUTDIR is.
  (cd "$here" && "$triple-gcc" -std=gnu99 -Wall -Wextra -fPIC -shared -g -O0 -Wl,-soname,"$lib" \
    -fdebug-prefix-map="$here"=. -o "$outdir/$lib" fixture_lib.c) ||
    die "$arch: compilation of $lib failed"
  layout=()
  [ "$arch" != s390x_packed ] || layout=(-DMPI2DD_PACKED)
  (cd "$here" && "$triple-gcc" -std=gnu99 -Wall -Wextra -fPIE -pie -g -O0 "${layout[@]}" \
    -fdebug-prefix-map="$here"=. -o "$exe" mpir_target.c \
    "$outdir/$lib" -Wl,-rpath,'$ORIGIN') ||
    die "$arch: compilation failed"

  # Run in a scratch directory: qemu writes the guest core to the current
  # directory as qemu_<exe basename>_<YYYYmmdd-HHMMSS>_<host pid>.core.
  # qemu 7.2 (Debian 12) then also lets the host kernel dump qemu itself
  # (~150 MB, its core-dumped path returns an error so it never lowers
  # RLIMIT_CORE). With core_pattern "core" a directory named "core" makes
  # the kernel's O_EXCL create fail, so no host core is written; with other
  # core_patterns any host core left in the scratch directory is removed.
  mkdir -p "$run/core"
  cp "$exe" "$run/$name"
  cp "$outdir/$lib" "$run/$lib"
  # The subshell waits for qemu itself (the trailing `exit` stops bash from
  # exec'ing it), so its "Aborted (core dumped)" notice goes to /dev/null.
  status=0
  (cd "$run" && env -i PATH=/usr/bin:/bin \
    "$qemu" -L "/usr/$triple" -seed 1 "./$name" \
    >"$exe.expected" 2>"$exe.stderr"; exit $?) 2>/dev/null || status=$?
  [ "$status" -eq 134 ] ||
    die "$arch: expected exit status 134 (SIGABRT), got $status; see $exe.stderr"
  grep -qx 'end=1' "$exe.expected" ||
    die "$arch: program output incomplete: $exe.expected"
  cores=("$run"/qemu_"$name"_*.core)
  [ -f "${cores[0]}" ] && [ ${#cores[@]} -eq 1 ] ||
    die "$arch: expected exactly one guest core qemu_${name}_*.core in $run"
  mv "${cores[0]}" "$exe.core"
  rm -rf "$run"
  [ -s "$exe.stderr" ] || rm -f "$exe.stderr"

  {
    echo "$arch triple=$triple qemu=$qemu"
    echo "  gcc: $("$triple-gcc" --version | head -n1)"
    echo "  qemu: $("$qemu" --version | head -n1)"
    echo "  libc: $(dpkg-query -W -f='${Package} ${Version}' "$devpkg" 2>/dev/null || echo unknown)"
    (cd "$outdir" && sha256sum "$name" "$lib" "$name.core" "$name.expected" | sed 's/^/  /')
  } >>"$manifest.tmp"
  echo "$arch: $exe.core ($(stat -c %s "$exe.core") bytes)"
done

mv "$manifest.tmp" "$manifest"
