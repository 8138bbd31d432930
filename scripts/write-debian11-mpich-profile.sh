#!/usr/bin/env bash
# Writes the layout profile mpidd ships for Debian 11's own, stripped
# MPICH 3.4.1 (libmpich12 3.4.1-5~deb11u1, amd64, ch3:nemesis, no debugger
# support), keyed by bullseye's libmpich.so.12.1.10 build-id, with the
# globals the stripped library hides, and declaring the 3.4 ch3:nemesis
# family (kept from the file it replaces: scripts/lib/keep-family.py).
# Run once, locally; the tests check the committed profile on the real
# package (examples/tests/debian11_mpich.rs). See docs/stock-mpich.md.
#
#   write-debian11-mpich-profile.sh [OUTPUT]
#
#   MPIDD                the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_DEBIAN11_ROOT  the Debian 11 root (default ~/.cache/mpidd/debian11)
#
# - Layouts: the objects that define the types the decoders read are
#   compiled in a tree configured as debian/rules does, in the root
#   (scripts/debian11-mpich-tree.sh), and linked into a stand-in library
#   named as the stock file, for its DWARF.
# - Symbols: scripts/lib/stock-symbols.py finds each hidden global in the
#   stock file from the references that byte-identical functions of the
#   same objects make to it; every reference must agree.
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$(pwd)
out="${1:-mpidd-read/profiles/mpich-3.4.1-debian11-amd64.json}"
root="${MPIDD_DEBIAN11_ROOT:-$HOME/.cache/mpidd/debian11}"
build_dir="$(bash scripts/debian11-mpich-tree.sh | tail -n 1)"
tree="$root$build_dir"
stock="$(readlink -f "$root/usr/lib/x86_64-linux-gnu/libmpich.so.12")"
package="$(chroot "$root" dpkg-query -W -f='${Version}' libmpich12)"

# shellcheck source=lib/debian-source.sh
. scripts/lib/debian-source.sh
# scripts/lib/stock-symbols.py reads ELF files with pyelftools.
ensure_packages python3-pyelftools

# The objects that define the types and globals the CH3 queue decoder and
# the handle decoders read: the handle pools and their users, CH3's
# requests, receive queues, communicators and connections.
objects=(
  src/mpi/attr/lib_libmpich_la-attrutil.lo
  src/mpi/comm/lib_libmpich_la-comm_split.lo
  src/mpi/comm/lib_libmpich_la-commutil.lo
  src/mpi/coll/op/lib_libmpich_la-op_create.lo
  src/mpi/coll/op/lib_libmpich_la-op_free.lo
  src/mpi/coll/op/lib_libmpich_la-oputil.lo
  src/mpi/datatype/lib_libmpich_la-typeutil.lo
  src/mpi/datatype/lib_libmpich_la-type_get_contents.lo
  src/mpi/errhan/lib_libmpich_la-errutil.lo
  src/mpi/errhan/lib_libmpich_la-dynerrutil.lo
  src/mpi/group/lib_libmpich_la-grouputil.lo
  src/mpi/info/lib_libmpich_la-info_create.lo
  src/mpi/info/lib_libmpich_la-info_set.lo
  src/mpi/info/lib_libmpich_la-infoutil.lo
  src/mpi/init/lib_libmpich_la-globals.lo
  src/mpi/request/lib_libmpich_la-mpir_request.lo
  src/mpi/rma/lib_libmpich_la-win_create.lo
  src/mpi/rma/lib_libmpich_la-win_free.lo
  src/mpi/rma/lib_libmpich_la-winutil.lo
  src/mpi/topo/lib_libmpich_la-topoutil.lo
  src/mpid/ch3/src/lib_libmpich_la-ch3u_comm.lo
  src/mpid/ch3/src/lib_libmpich_la-ch3u_recvq.lo
  src/mpid/ch3/src/lib_libmpich_la-ch3u_request.lo
  src/mpid/ch3/src/lib_libmpich_la-mpid_init.lo
  src/mpid/ch3/src/lib_libmpich_la-mpid_vc.lo
  src/mpid/ch3/src/lib_libmpich_la-mpidi_pg.lo
  src/util/lib_libmpich_la-mpir_handlemem.lo
)
bash scripts/lib/in-debian-root.sh "$root" sh -c "cd '$build_dir' && nice -n 10 make -s ${objects[*]} >/dev/null"
# ROMIO's file (MPI_File handles) and its table of Fortran file handles.
romio_objects=(adio/common/ad_open.lo adio/common/ad_init.lo mpi-io/glue/mpich/mpio_file.lo)
bash scripts/lib/in-debian-root.sh "$root" sh -c \
  "cd '$build_dir/src/mpi/romio' && nice -n 10 make -s ${romio_objects[*]} >/dev/null"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# mpi.h declares enum MPIR_Win_flavor (a window's create_flavor), which no
# object of 3.4.1 uses, so no object's DWARF holds it: a probe of the
# configured tree's own mpi.h gives it.
probe_dir="$build_dir/mpidd-probe"
mkdir -p "$root$probe_dir"
printf '#include "mpi.h"\nMPIR_Win_flavor_t mpidd_win_flavor;\n' >"$root$probe_dir/win_flavor.c"
bash scripts/lib/in-debian-root.sh "$root" sh -c \
  "cd '$build_dir' && gcc -g -O2 -fPIC -I src/include -I src/mpi/romio/include -c mpidd-probe/win_flavor.c -o mpidd-probe/win_flavor.o"
pic=("$root$probe_dir/win_flavor.o")
for o in "${objects[@]}"; do
  pic+=("$tree/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
for o in "${romio_objects[@]}"; do
  pic+=("$tree/src/mpi/romio/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
# Named as the stock file is loaded, so the profile's object is that name.
standin="$work/$(basename "$stock")"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all

# The hidden globals the decoders start from: the handle pools, and CH3's
# file-local receive queue heads (ch3u_recvq.c), which a build with
# debugger support points to from MPID_Recvq_*_head_ptr. The builtin
# requests, ops and windows are optional: no compiled function of the
# stock file's may reference them.
required=(
  MPIR_Process
  MPIR_Comm_builtin MPIR_Comm_direct MPIR_Comm_mem
  MPIR_Request_direct MPIR_Request_mem
  recvq_posted_head recvq_unexpected_head
)
optional=(
  MPIR_Request_builtins
  MPIR_Group_builtin MPIR_Group_direct MPIR_Group_mem
  MPIR_Datatype_builtin MPIR_Datatype_direct MPIR_Datatype_mem
  MPIR_Errhandler_builtin MPIR_Errhandler_direct MPIR_Errhandler_mem
  MPIR_Info_builtin MPIR_Info_direct MPIR_Info_mem
  MPIR_Op_builtin MPIR_Op_direct MPIR_Op_mem
  MPIR_Win_direct MPIR_Win_mem
  MPII_Keyval_direct MPII_Keyval_mem MPIR_Topology_keyval
  ADIOI_Ftable ADIOI_Ftable_ptr
)
found="$work/found.txt"
/usr/bin/python3 scripts/lib/stock-symbols.py "$stock" "$tree/src" "${required[@]}" "${optional[@]}" >"$found"
awk -v lib="$(basename "$stock")" '/^[A-Za-z_0-9]+: 0x[0-9a-f]+ in \.[a-z.]+, size [0-9]+,/ {
  sub(":", "", $1); sub(",", "", $6); print lib, $1, $2, $6 }' "$found" >"$work/symbols"
missing=()
for g in "${required[@]}"; do
  grep -q " $g " "$work/symbols" || missing+=("$g")
done
if ((${#missing[@]})); then
  cat "$found" >&2
  echo "error: no agreed address for ${missing[*]}" >&2
  exit 1
fi
cat "$found" >&2

types=(
  MPIR_Comm MPIR_Group MPII_Group_pmap_t MPIR_Request MPIDI_VCRT MPIDI_VC
  MPIR_Datatype MPIR_Datatype_contents MPIR_Attribute MPIR_Errhandler
  MPIR_Info MPIR_Op MPIR_Topology MPIR_Win MPIR_Object_alloc_t MPII_Keyval
  MPIR_Grequest_fns MPI_Status MPIR_Process_t ADIOI_FileD MPIR_Handle_common
  MPII_Object_kind "enum MPIR_Combiner_enum" MPIR_Win_flavor
)
type_args=()
for t in "${types[@]}"; do type_args+=(--type "$t"); done
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
previous="$(mktemp)"
if [ -f "$out" ]; then cp "$out" "$previous"; else rm -f "$previous"; fi
"${mpidd[@]}" profile write \
  --object "$standin" \
  --decoder mpich-ch3 \
  "${type_args[@]}" \
  --symbols "$work/symbols" \
  --implementation MPICH \
  --impl-version 3.4.1 \
  --build "Debian 11 libmpich12 $package (amd64, ch3:nemesis, no debugger support); layouts from Debian's configuration (scripts/write-debian11-mpich-profile.sh), symbols located in the stock file" \
  --for-build "$stock" \
  --output "$repo/$out"
python3 scripts/lib/keep-family.py "$previous" "$out"
rm -f "$previous"
echo "$out"
