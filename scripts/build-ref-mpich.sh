#!/usr/bin/env bash
# Builds a reference MPICH (Debian's mpich source package, 4.0.2 on
# bookworm) with debug info kept, and installs it into a cache directory
# outside the repo. A finished install is reused: only a new machine pays for
# the build. Prints the install prefix on its last line.
#
#   build-ref-mpich.sh [ch3|ch3-nodebugger|ch4]      (default ch3)
#
#   ch3: --with-device=ch3:nemesis, the device MPICH's own message-queue
#        library reads.
#        MPIDD_REF_MPICH      install prefix (default ~/.cache/mpidd/mpich-4.0.2)
#   ch3-nodebugger: the same without --enable-debuginfo, the other choice of
#        the one configure option that moves a member of the 4.0 ch3:nemesis
#        family's layouts (MPIR_Request.u.persist.real_request); what the
#        check on the process must refuse that family's profile for
#        (examples/tests/site_builds.rs). Shared libraries only.
#        MPIDD_REF_MPICH_NODEBUGGER  install prefix
#                             (default ~/.cache/mpidd/mpich-4.0.2-ch3-nodebugger)
#   ch4: --with-device=ch4:ucx on Debian's UCX, Debian's own amd64 choice,
#        with the other layout-changing options of Debian's rules, and the
#        dataloop datatype engine (see below).
#        MPIDD_REF_MPICH_CH4  install prefix (default ~/.cache/mpidd/mpich-4.0.2-ch4)
#
# The queue and handle decoders need MPICH's private types (MPIR_Comm,
# MPIR_Request, ...) in DWARF, and the tests need the vendor message-queue DLL
# libtvmpich.so; Debian's binary packages are stripped and ship neither.
set -euo pipefail

version=4.0.2
device="${1:-ch3}"
case "$device" in
  ch3)
    prefix="${MPIDD_REF_MPICH:-$HOME/.cache/mpidd/mpich-$version}"
    # Names what the build below puts in the install; an install made by an
    # older recipe (an empty stamp: ROMIO without debug info) is rebuilt.
    recipe="mpich-$version ch3:nemesis, debug info in ROMIO too (CFLAGS=-g)"
    device_flags=(--enable-debuginfo --with-device=ch3:nemesis)
    device_packages=()
    ;;
  ch3-nodebugger)
    prefix="${MPIDD_REF_MPICH_NODEBUGGER:-$HOME/.cache/mpidd/mpich-$version-ch3-nodebugger}"
    recipe="mpich-$version ch3:nemesis without --enable-debuginfo, debug info in ROMIO too (CFLAGS=-g)"
    device_flags=(--with-device=ch3:nemesis --disable-static)
    device_packages=()
    ;;
  ch4)
    prefix="${MPIDD_REF_MPICH_CH4:-$HOME/.cache/mpidd/mpich-$version-ch4}"
    recipe="mpich-$version ch4:ucx on Debian's UCX, dataloop, debug info in ROMIO too (CFLAGS=-g)"
    # The flags that change a struct layout the decoders read are Debian's
    # amd64 ones (debian/rules): the UCX netmod on the system UCX, the
    # system hwloc. One departure keeps the build lean: Debian's CH4 uses
    # MPICH's embedded yaksa as its datatype engine (--without-yaksa only
    # stops the search for an installed one), whose hundreds of generated files
    # take over an hour on 2 cores; dataloop builds in minutes. The engine
    # changes only MPIR_Datatype.typerep.handle, a yaksa_type_t (uint64_t)
    # or a pointer, 8 bytes at the same offset on LP64, and
    # MPIR_Typerep_req inside MPIDI_POSIX_rma_req_t, which no decoder reads
    # (src/mpi/datatype/typerep/src/typerep_pre.h).
    # Shared libraries only: libtool would compile every file a second time
    # for a libmpi.a no test reads (only CH3's is, by fuzz/seed.sh). That
    # changes no layout, so an install of the same recipe with the static
    # archives in it is kept.
    device_flags=(--enable-debuginfo --with-device=ch4:ucx --with-ucx=/usr --with-hwloc-prefix=/usr --with-datatype-engine=dataloop --disable-static)
    # libucx-dev: the UCX netmod's headers; libhwloc-dev: the system hwloc.
    device_packages=(libucx-dev libhwloc-dev)
    ;;
  *)
    echo "usage: $0 [ch3|ch3-nodebugger|ch4]" >&2
    exit 2
    ;;
esac
stamp="$prefix/.mpidd-complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
  echo "$prefix"
  exit 0
fi

# shellcheck source=scripts/lib/debian-source.sh
. "$(dirname "$0")/lib/debian-source.sh"
ensure_deb_src
ensure_packages dpkg-dev build-essential python3 perl pkg-config "${device_packages[@]}"

work="$(dirname "$prefix")/build-mpich-$version-$device"
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
  "${device_flags[@]}" --disable-fortran --disable-cxx \
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

installed=(lib/libmpi.so bin/mpicc bin/mpiexec.hydra include/mpi_interface.h)
# The vendor message-queue library is built only with debugger support.
[ "$device" = ch3-nodebugger ] || installed+=(lib/libtvmpich.so)
for f in "${installed[@]}"; do
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
echo "== reference MPICH ($device) built in $((end - start)) s ($(cat "$prefix/.mpidd-build-time"))" >&2
echo "$prefix"
