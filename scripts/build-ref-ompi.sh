#!/usr/bin/env bash
# Builds the reference Open MPI (Debian's openmpi source package, 4.1.4 on
# bookworm) with debug info kept, and installs it into a cache directory
# outside the repo. A finished install is reused: only a new machine pays for
# the build. Prints the install prefix on its last line.
#
#   MPIDD_REF_OMPI  install prefix (default ~/.cache/mpidd/openmpi-4.1.4)
#
# The ob1 queue decoder and the handle decoders read Open MPI's private types
# (ompi_communicator_t, mca_pml_ob1_comm_t, the ob1 requests and fragments,
# opal_free_list_t, ...), and the tests compare with the vendor's
# message-queue DLL libompi_dbg_msgq.so. Debian's binary packages are
# stripped and their dbgsym packages are out of reach, so the types come
# from this build's DWARF.
#
# Layouts must equal Debian's: a struct's layout depends on the source, the
# configure options that add or drop members, and the ABI, never on -g or -O.
# So the configure line below is debian/rules' own, minus what provably does
# not reach a struct the decoders read:
#   - Fortran bindings (--disable-mpi-fortran): no member of the communicator,
#     group, proc, request, ob1, free-list or datatype structs depends on
#     OMPI_BUILD_FORTRAN_BINDINGS or the Fortran type sizes (only the
#     predefined Fortran datatypes' contents do). Saves most of the build.
#   - Java bindings, and the network components for hardware this machine
#     does not have (verbs, PSM, PSM2): each only adds MCA components of its
#     own (mtl psm/psm2, btl openib), which Debian's openmpi-mca-params.conf
#     disables by default anyway (btl = ^uct,openib,ofi). ob1 is then the
#     default PML on both builds.
#   - Except where a component reserves a slot in every ompi_proc_t
#     (OMPI_REQUIRE_ENDPOINT_TAG in its configure.m4): OMPI_PROC_ENDPOINT_TAG_MAX
#     sizes ompi_proc_t.proc_endpoints and each slot's index follows the
#     order configure meets them. Debian's has BML (bml r2), MTL (mtl ofi),
#     UCX (osc ucx) and PML (pml ucx), in that order; so this build keeps
#     libfabric (--with-ofi, Debian's --with-libfabric: libfabric-dev) for
#     mtl ofi, and UCX (--with-ucx, against Debian's libucx-dev) for osc ucx
#     and pml ucx. The UCX PML's decoder reads mca_pml_ucx_module_t and the
#     PML's endpoint slot from this build's DWARF. Components that reserve
#     no slot and that nothing reads are left out with
#     --enable-mca-no-build (btl uct, btl ofi).
#   - OpenSHMEM (--disable-oshmem): a layer on top of the MPI library.
#   - The shipped configure is used as is: Debian's autogen.pl rerun only
#     carries its libdir.patch (an install directory name) and the hppa port.
# Debian's own options kept: external PMIx (its pmix2 directory), external
# hwloc and libevent, C++ bindings, IPv6, Slurm, SGE, no TM, devel headers,
# no wrapper runpath. OPAL_ENABLE_DEBUG stays off, as in Debian: it adds
# members to opal_object_t and opal_list_item_t.
set -euo pipefail

version=4.1.4
prefix="${MPIDD_REF_OMPI:-$HOME/.cache/mpidd/openmpi-$version}"
stamp="$prefix/.mpidd-complete"
# Names what the build below puts in the install; an install made by another
# recipe is rebuilt.
recipe="openmpi-$version debian/rules options, no fortran/java/verbs/psm/oshmem, with ucx and ofi (endpoint tags as Debian), CFLAGS=-g -O1"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
  echo "$prefix"
  exit 0
fi

# shellcheck source=scripts/lib/debian-source.sh
. "$(dirname "$0")/lib/debian-source.sh"
ensure_deb_src
# Build-Depends of debian/control that the configuration below uses.
ensure_packages dpkg-dev build-essential perl pkg-config \
  libevent-dev libpmix-dev libhwloc-dev zlib1g-dev libucx-dev libfabric-dev

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pmix_dir=/usr/lib/$multiarch/pmix2
[ -d "$pmix_dir" ] || { echo "error: $pmix_dir is missing (apt-get install libpmix-dev)" >&2; exit 1; }

work="$(dirname "$prefix")/build-openmpi-$version"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
start=$(date +%s)
apt-get source -q "openmpi=$version*" >source.log 2>&1 || apt-get source -q openmpi >source.log 2>&1 || {
  cat source.log >&2
  echo "error: apt-get source openmpi failed (is a deb-src entry reachable?)" >&2
  exit 1
}
srcdir=$(find . -maxdepth 1 -type d -name "openmpi-*" | head -n1)
cd "$srcdir"
# Debian's patches leave configure.ac, some m4 and Makefile.am files newer
# than the configure and Makefile.in generated from them, so make would rerun
# autotools (which are not installed, and not needed: see above). The patched
# files are dated back before the generated ones.
find . -path ./debian -prune -o -type f -newer configure -print0 |
  xargs -0 -r touch -d '2000-01-01 00:00:00'

# -O1 rather than Debian's -O3: optimisation changes no layout, and halves
# the compile time. Debian's USER/HOSTNAME trick keeps the build identity out
# of the binaries, as in debian/rules.
HOSTNAME=hostname USER=username CFLAGS="-g -O1" CXXFLAGS="-g -O1" ./configure --prefix="$prefix" \
  --disable-silent-rules --disable-wrapper-runpath \
  --with-package-string="Debian OpenMPI" \
  --with-pmix="$pmix_dir" --with-libevent=external --with-hwloc=external \
  --enable-mpi-cxx --enable-ipv6 --with-devel-headers \
  --with-slurm --with-sge --without-tm \
  --disable-mpi-fortran --disable-mpi-java --disable-oshmem \
  --with-ucx=/usr --with-ofi=/usr --enable-mca-no-build=btl-uct,btl-ofi \
  --without-verbs --without-psm --without-psm2 \
  >"$work/configure.log" 2>&1 || {
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
# Debian's defaults for component selection (ob1 as the PML among them).
cp opal/etc/openmpi-mca-params.conf "$new/etc/openmpi-mca-params.conf"
end=$(date +%s)

for f in lib/libmpi.so lib/openmpi/libompi_dbg_msgq.so lib/openmpi/mca_pml_ob1.so \
  lib/openmpi/mca_pml_ucx.so bin/mpicc bin/mpirun; do
  [ -e "$new/$f" ] || { echo "error: the build did not install $prefix/$f" >&2; exit 1; }
done
# The endpoint slots must be Debian's (see above); its libopenmpi-dev
# installs its configuration, which says them.
debian_config=/usr/lib/$multiarch/openmpi/include/openmpi/opal_config.h
endpoint_tags() { grep -E '^#define OMPI_PROC_ENDPOINT_TAG_' "$1" || true; }
if [ -f "$debian_config" ] &&
  [ "$(endpoint_tags "$new/include/openmpi/opal_config.h")" != "$(endpoint_tags "$debian_config")" ]; then
  echo "error: this build's ompi_proc_t endpoint slots differ from Debian's:" >&2
  diff <(endpoint_tags "$new/include/openmpi/opal_config.h") <(endpoint_tags "$debian_config") >&2 || true
  exit 1
fi
echo "configure $((configured - start)) s, make+install $((end - configured)) s" >"$new/.mpidd-build-time"
printf '%s\n' "$recipe" >"$new/.mpidd-complete"
mkdir -p "$(dirname "$prefix")"
old="$prefix.old-$$"
if [ -e "$prefix" ]; then mv "$prefix" "$old"; fi
mv "$new" "$prefix"
cd /
rm -rf "$work" "$old"
echo "== reference Open MPI built in $((end - start)) s ($(cat "$prefix/.mpidd-build-time"))" >&2
echo "$prefix"
