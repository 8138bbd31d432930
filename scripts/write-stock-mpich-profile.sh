#!/usr/bin/env bash
# Regenerates the layout profile mpidd ships for Debian 12's own, stripped
# MPICH 4.0.2 (libmpich12 4.0.2-3+b1, amd64, ch4:ucx), keyed by the stock
# libmpich.so.12.2.2's build-id. See docs/stock-mpich.md for why it can be
# made this way.
#
#   write-stock-mpich-profile.sh [OUTPUT]
#
#   MPIDD  the mpidd binary to run (default: cargo run -p mpidd)
#
# - Layouts: MPICH's struct layouts depend on its source and configure
#   options, not on the code yaksa's generator shuffles. So the few objects
#   that define the types the decoders read are compiled in a tree that
#   Debian's own rules configured (scripts/rebuild-debian-mpich.sh
#   --configured-tree, about 10 minutes once), and linked into a stand-in
#   library for its DWARF. The reference CH4 build cannot serve: its
#   --enable-debuginfo changes MPIR_Comm and MPIR_Request.
# - Symbols: the stock library hides the globals the decoders start from.
#   scripts/lib/stock-symbols.py finds each one's address in the stock file
#   from the references that byte-identical functions of the same objects
#   make to it; every reference must agree.
#
# - UCX's request: a receive or send MPICH hands to UCX is described only in
#   UCX's own `ucp_request_t`, and Debian's libucp.so.0 is stripped. Its
#   layout comes the same way from Debian's UCX source (ucx 1.13.1-1),
#   configured with debian/rules' options by scripts/debian-ucx-tree.sh in
#   a tree kept in ~/.cache/mpidd/debian-ucx (MPIDD_DEBIAN_UCX_TREE); the
#   profile then holds only for that libucp build too. UCX's worker (its
#   unexpected messages) is described by UCX's own profile
#   (scripts/write-ucx-profile.sh), which layers under this one.
#
# The real-job test (examples/tests/stock_mpich.rs) reads a job of
# Debian's MPICH through the shipped profile and fails if it is wrong.
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$(pwd)
out="${1:-mpidd-read/profiles/mpich-4.0.2-debian12-amd64.json}"
stock=/usr/lib/x86_64-linux-gnu/libmpich.so.12.2.2
[ -e "$stock" ] || {
  echo "error: $stock is missing: install Debian's MPICH (apt-get install libmpich12)" >&2
  exit 1
}
package="$(dpkg-query -W -f='${Version}' libmpich12)"
tree="$(bash scripts/rebuild-debian-mpich.sh --configured-tree | tail -n 1)"

# shellcheck source=lib/debian-source.sh
. scripts/lib/debian-source.sh
# scripts/lib/stock-symbols.py reads ELF files with pyelftools.
ensure_packages python3-pyelftools
ucx_version=1.13.1-1
stock_ucp=/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0
# Debian's UCX source, configured with debian/rules' options
# (MPIDD_DEBIAN_UCX_TREE, made once by scripts/debian-ucx-tree.sh).
ucx_tree="$(bash scripts/debian-ucx-tree.sh | tail -n 1)"
(cd "$ucx_tree/src/ucp" && nice -n 10 make -s core/libucp_la-ucp_request.lo >/dev/null)

# The objects that define the types and globals the decoders read: the
# handle pools and their users, CH4's global state and requests, the UCX
# netmod's globals, topologies, and ROMIO's file (for MPI_File handles).
objects=(
  src/binding/c/comm/lib_libmpich_la-comm_split.lo
  src/binding/c/pt2pt/lib_libmpich_la-irecv.lo
  src/binding/c/pt2pt/lib_libmpich_la-isend.lo
  src/binding/c/pt2pt/lib_libmpich_la-recv.lo
  src/binding/c/pt2pt/lib_libmpich_la-send.lo
  src/binding/c/rma/lib_libmpich_la-put.lo
  src/binding/c/info/lib_libmpich_la-info_get.lo
  src/binding/c/info/lib_libmpich_la-info_create.lo
  src/binding/c/topo/lib_libmpich_la-cart_create.lo
  src/binding/c/topo/lib_libmpich_la-topo_test.lo
  src/mpi/attr/lib_libmpich_la-attrutil.lo
  src/mpi/attr/lib_libmpich_la-attr_impl.lo
  src/mpi/coll/op/lib_libmpich_la-op_impl.lo
  src/mpi/comm/lib_libmpich_la-comm_impl.lo
  src/mpi/comm/lib_libmpich_la-comm_split.lo
  src/mpi/comm/lib_libmpich_la-commutil.lo
  src/mpi/datatype/lib_libmpich_la-typeutil.lo
  src/mpi/datatype/lib_libmpich_la-type_contents.lo
  src/mpi/errhan/lib_libmpich_la-dynerrutil.lo
  src/mpi/errhan/lib_libmpich_la-errutil.lo
  src/mpi/errhan/lib_libmpich_la-errhan_impl.lo
  src/mpi/group/lib_libmpich_la-grouputil.lo
  src/mpi/info/lib_libmpich_la-infoutil.lo
  src/mpi/init/lib_libmpich_la-globals.lo
  src/mpi/init/lib_libmpich_la-init_impl.lo
  src/mpi/init/lib_libmpich_la-mpir_init.lo
  src/mpi/request/lib_libmpich_la-mpir_request.lo
  src/mpi/request/lib_libmpich_la-request_impl.lo
  src/mpi/rma/lib_libmpich_la-winutil.lo
  src/mpi/topo/lib_libmpich_la-topo_impl.lo
  src/mpi/topo/lib_libmpich_la-topoutil.lo
  src/mpid/ch4/netmod/ucx/lib_libmpich_la-globals.lo
  src/mpid/ch4/netmod/ucx/lib_libmpich_la-ucx_init.lo
  src/mpid/ch4/src/lib_libmpich_la-ch4_comm.lo
  src/mpid/ch4/src/lib_libmpich_la-ch4_globals.lo
  src/mpid/ch4/src/lib_libmpich_la-ch4_init.lo
  src/mpid/ch4/src/lib_libmpich_la-ch4_proc.lo
  src/mpid/ch4/src/lib_libmpich_la-ch4_win.lo
  src/mpid/ch4/src/lib_libmpich_la-mpidig_recvq.lo
  src/util/lib_libmpich_la-mpir_handlemem.lo
)
(cd "$tree" && nice -n 10 make -s "${objects[@]}" >/dev/null)
romio_objects=(adio/common/ad_open.lo adio/common/ad_init.lo mpi-io/glue/mpich/mpio_file.lo)
(cd "$tree/src/mpi/romio" && nice -n 10 make -s "${romio_objects[@]}" >/dev/null)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pic=()
for o in "${objects[@]}"; do
  pic+=("$tree/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
for o in "${romio_objects[@]}"; do
  pic+=("$tree/src/mpi/romio/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
# Named as the stock file is loaded, so the profile's object is that name.
standin="$work/libmpich.so.12.2.2"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all
ucp_standin="$work/libucp.so.0.0.0"
gcc -shared -nostdlib -o "$ucp_standin" "$ucx_tree/src/ucp/core/.libs/libucp_la-ucp_request.o" \
  -Wl,--unresolved-symbols=ignore-all

# The hidden globals the decoders start from; MPIR_Topology_keyval is
# topoutil.c's file-local static, ADIOI_Ftable ROMIO's table of Fortran
# file handles.
globals=(
  MPIR_Process MPIDI_global MPIDI_UCX_global
  MPIR_Comm_builtin MPIR_Comm_direct MPIR_Comm_mem
  MPIR_Request_builtins MPIR_Request_direct MPIR_Request_mem
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
/usr/bin/python3 scripts/lib/stock-symbols.py "$stock" "$tree/src" "${globals[@]}" >"$found"
# "NAME: 0xADDR in .bss, size N, K reference(s) agree" per found name.
awk '/^[A-Za-z_0-9]+: 0x[0-9a-f]+ in \.[a-z.]+, size [0-9]+,/ {
  sub(":", "", $1); sub(",", "", $6); print "libmpich.so.12.2.2", $1, $2, $6 }' "$found" >"$work/symbols"
missing=()
for g in "${globals[@]}"; do
  grep -q " $g " "$work/symbols" || missing+=("$g")
done
if ((${#missing[@]})); then
  cat "$found" >&2
  echo "error: no agreed address for ${missing[*]}" >&2
  exit 1
fi

# Every type the CH4 queue decoder and the MPICH handle decoders read.
types=(
  MPIR_Comm MPIR_Group MPII_Group_pmap_t MPIR_Request MPIDIG_req_ext_t
  MPIDI_CH4_Global_t MPIDI_per_vci_t MPIDI_rank_map_t MPIDI_gpid_t MPIDI_av_table_t MPIDI_av_entry_t
  MPIDI_UCX_global_t MPIDI_UCX_context_t
  MPIR_Datatype MPIR_Datatype_contents MPIR_Attribute MPIR_Errhandler
  MPIR_Info MPIR_Op MPIR_Topology MPIR_Win MPIR_Object_alloc_t MPII_Keyval
  MPIR_Grequest_fns MPI_Status MPIR_Process_t ADIOI_FileD MPIR_Handle_common
  MPII_Object_kind "enum MPIR_Combiner_enum" MPIR_Win_flavor
  ucp_request_t
)
type_args=()
for t in "${types[@]}"; do type_args+=(--type "$t"); done
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
"${mpidd[@]}" profile write \
  --object "$standin" \
  --object "$ucp_standin" \
  --decoder mpich-ch4 \
  "${type_args[@]}" \
  --symbols "$work/symbols" \
  --implementation MPICH \
  --impl-version 4.0.2 \
  --build "Debian 12 libmpich12 $package (amd64, ch4:ucx, no debugger support) on libucx0 $ucx_version; layouts from Debian's configuration (scripts/write-stock-mpich-profile.sh), symbols located in the stock file" \
  --for-build "$stock" \
  --for-build "$stock_ucp" \
  --output "$repo/$out"
echo "$out"
