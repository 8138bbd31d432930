#!/usr/bin/env bash
# Builds the reference MPICH (Debian's mpich source package, 4.0.2 on
# bookworm) with debug info kept, and installs it into a cache directory
# outside the repo. A finished install is reused: only a new machine pays for
# the build. Prints the install prefix on its last line.
#
#   MPIDD_REF_MPICH  install prefix (default ~/.cache/mpidd/mpich-4.0.2)
#
# The queue and handle decoders need MPICH's private types (MPIR_Comm,
# MPIR_Request, ...) in DWARF, and the tests need the vendor message-queue DLL
# libtvmpich.so; Debian's binary packages are stripped and ship neither.
set -euo pipefail

version=4.0.2
prefix="${MPIDD_REF_MPICH:-$HOME/.cache/mpidd/mpich-$version}"
stamp="$prefix/.mpidd-complete"
# Names what the build below puts in the install; an install made by an
# older recipe (an empty stamp: ROMIO without debug info) is rebuilt.
recipe="mpich-$version ch3:nemesis, debug info in ROMIO too (CFLAGS=-g)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
  echo "$prefix"
  exit 0
fi

# shellcheck source=scripts/lib/debian-source.sh
. "$(dirname "$0")/lib/debian-source.sh"
ensure_deb_src
ensure_packages dpkg-dev build-essential python3 perl pkg-config

work="$(dirname "$prefix")/build-mpich-$version"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
start=$(date +%s)
apt-get source -q "mpich=$version*" >source.log 2>&1 || apt-get source -q mpich >source.log 2>&1 || {
  cat source.log >&2
  echo "error: apt-get source mpich failed (is a deb-src entry reachable?)" >&2
  exit 1
}
srcdir=$(find . -maxdepth 1 -type d -name "mpich-*" | head -n1)
cd "$srcdir"

# -g and -O1 kept, nothing stripped: the oracle reads these types.
# --enable-g=dbg adds -g only to MPICH's own flags; ROMIO (and hydra) are
# configured with the user's flags alone, so CFLAGS=-g is what gives ROMIO's
# ADIOI_FileD (behind MPI_File) to the handle decoders. User CFLAGS do not
# reach the mpicc wrapper.
CFLAGS=-g ./configure --prefix="$prefix" \
  --enable-debuginfo --with-device=ch3:nemesis --disable-fortran --disable-cxx \
  --enable-g=dbg --enable-fast=O1 --with-pm=hydra \
  --disable-doc >"$work/configure.log" 2>&1 || {
  tail -n 40 "$work/configure.log" >&2
  exit 1
}
configured=$(date +%s)
make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -n 60 "$work/make.log" >&2; exit 1; }
# Installed under a staging root and then moved into place in one rename,
# so that tests running against an older install meanwhile keep a complete
# one (the paths baked into mpicc and the libraries are $prefix's).
stage="$work/stage"
make install DESTDIR="$stage" >"$work/install.log" 2>&1 || { tail -n 40 "$work/install.log" >&2; exit 1; }
new="$stage$prefix"
# The header that defines the mqs C layout, for the tests' C DLL and hosts.
cp src/mpi/debugger/mpi_interface.h "$new/include/"
end=$(date +%s)

for f in lib/libmpi.so lib/libtvmpich.so bin/mpicc bin/mpiexec.hydra include/mpi_interface.h; do
  [ -e "$new/$f" ] || { echo "error: the build did not install $prefix/$f" >&2; exit 1; }
done
echo "configure $((configured - start)) s, make+install $((end - configured)) s" >"$new/.mpidd-build-time"
printf '%s\n' "$recipe" >"$new/.mpidd-complete"
mkdir -p "$(dirname "$prefix")"
old="$prefix.old-$$"
if [ -e "$prefix" ]; then mv "$prefix" "$old"; fi
mv "$new" "$prefix"
cd /
rm -rf "$work" "$old"
echo "== reference MPICH built in $((end - start)) s ($(cat "$prefix/.mpidd-build-time"))" >&2
echo "$prefix"
