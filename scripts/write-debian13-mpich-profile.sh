#!/usr/bin/env bash
# Writes the layout profile mpidd ships for Debian 13's own, stripped
# MPICH 4.2.1 (libmpich12 4.3.0+really4.2.1-1, amd64, ch4:ucx, no debugger
# support), keyed by trixie's libmpich.so.12.4.1 build-id, with the globals
# the stripped library hides. Run once, locally; the tests check the
# committed profile on the real package (examples/tests/debian13_mpich.rs).
# See docs/stock-mpich.md.
#
#   write-debian13-mpich-profile.sh [OUTPUT]
#
#   MPIDD                the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_DEBIAN13_ROOT  the Debian 13 root (scripts/python-envs.sh debian13)
#   MPIDD_MPICH_GIT, MPIDD_JSONC_GIT, MPIDD_YAKSA_GIT: as
#                        scripts/debian13-mpich-tree.sh takes them
#   MPIDD_UCX_GIT        as scripts/ucx-release-tree.sh takes it
#
# - Layouts: the objects that define the types the decoders read are
#   compiled in the root's gcc, in upstream v4.2.1 configured with the
#   stock file's own configure line (scripts/debian13-mpich-tree.sh), and
#   linked into a stand-in library named as the stock file, for its DWARF.
# - Symbols: scripts/lib/stock-symbols.py finds each hidden global in the
#   stock file from the references that byte-identical functions of the
#   same objects make to it; every reference must agree. That the
#   functions are byte-identical is itself the evidence that the tree
#   compiles as Debian's did.
# - UCX's request: Debian 13's libucp has a profile of its own
#   (ucx-1.18.1-debian13-amd64.json), chosen by its build-id beside this
#   one. The CH4 decoder asks what it reads past UCX's request (a send's
#   endpoint, and CH4's address vector that names its rank) only where
#   `ucp_request_t` is described: so it is, from upstream v1.18.1
#   configured as Debian's (scripts/ucx-release-tree.sh v1.18.1, the tree
#   that profile came from), and this profile is for that libucp build too.
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$(pwd)
out="${1:-mpidd-read/profiles/mpich-4.2.1-debian13-amd64.json}"
root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
tree="$(bash scripts/debian13-mpich-tree.sh | tail -n 1)"
top="$(dirname "$tree")"
stock="$(readlink -f "$root/usr/lib/x86_64-linux-gnu/libmpich.so.12")"
package="$(chroot "$root" dpkg-query -W -f='${Version}' libmpich12)"
ucx_package="$(chroot "$root" dpkg-query -W -f='${Version}' libucx0)"
read -r _ commit _ <"$tree/.mpidd-configured"

# shellcheck source=lib/debian-source.sh
. scripts/lib/debian-source.sh
# scripts/lib/stock-symbols.py reads ELF files with pyelftools.
ensure_packages python3-pyelftools

# In the root, with the host's make the tree script put beside it.
in_tree() {
  bash scripts/lib/in-debian13.sh --bind "$top" /bin/sh -c "cd '$tree/$1' && PATH='$top/tools':\$PATH $2"
}

# The objects that define the types and globals the CH4 queue decoder and
# the handle decoders read (the handle pools and their users, CH4's
# globals and requests, the UCX netmod's globals, topologies), and the C
# bindings (one file from 4.1: c_binding.c), whose byte-identical code
# places the hidden globals.
objects=(
  src/mpi/attr/lib_libmpich_la-attrutil.lo
  src/mpi/attr/lib_libmpich_la-attr_impl.lo
  src/mpi/coll/op/lib_libmpich_la-op_impl.lo
  src/mpi/comm/lib_libmpich_la-comm_impl.lo
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
  src/mpi/init/lib_libmpich_la-initinfo.lo
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
  src/binding/c/lib_libmpich_la-c_binding.lo
)
have=()
for o in "${objects[@]}"; do
  if grep -q "$o" "$tree/Makefile"; then have+=("$o"); else echo "write-debian13-mpich-profile: no $o" >&2; fi
done
in_tree . "nice -n 10 make -s -j2 ${have[*]} >/dev/null"
# ROMIO's file (MPI_File handles) and its table of Fortran file handles.
romio_objects=(adio/common/ad_open.lo adio/common/ad_init.lo mpi-io/glue/mpich/mpio_file.lo)
in_tree src/mpi/romio "nice -n 10 make -s ${romio_objects[*]} >/dev/null"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# mpi.h declares enum MPIR_Win_flavor (a window's create_flavor, a plain
# int) and, from 4.1 on, MPIR_Topo_type only for the values of
# MPIR_Topology's `int kind`; no object uses them: a probe of the tree's
# own mpi.h gives them.
mkdir -p "$tree/mpidd-probe"
printf '#include "mpi.h"\nMPIR_Win_flavor_t mpidd_win_flavor;\nMPIR_Topo_type mpidd_topo_type;\n' \
  >"$tree/mpidd-probe/win_flavor.c"
in_tree . "gcc -g -O2 -fPIC -I src/include -I src/mpi/romio/include -c mpidd-probe/win_flavor.c -o mpidd-probe/win_flavor.o"
pic=("$tree/mpidd-probe/win_flavor.o")
for o in "${have[@]}"; do
  pic+=("$tree/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
for o in "${romio_objects[@]}"; do
  pic+=("$tree/src/mpi/romio/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
# Named as the stock file is loaded, so the profile's object is that name.
standin="$work/$(basename "$stock")"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all
ucx_tree="$(bash scripts/ucx-release-tree.sh v1.18.1 | tail -n 1)"
(cd "$ucx_tree/src/ucp" && nice -n 10 make -s core/libucp_la-ucp_request.lo >/dev/null)
stock_ucp="$(readlink -f "$root/usr/lib/x86_64-linux-gnu/libucp.so.0")"
ucp_standin="$work/$(basename "$stock_ucp")"
gcc -shared -nostdlib -o "$ucp_standin" "$ucx_tree/src/ucp/core/.libs/libucp_la-ucp_request.o" \
  -Wl,--unresolved-symbols=ignore-all

# The hidden globals the decoders start from; MPIR_Topology_keyval is
# topoutil.c's file-local static, ADIOI_Ftable ROMIO's table of Fortran
# file handles. The version strings are hidden too from 4.1 on (what
# names the build: version, device, configure line).
strings=(MPII_Version_string MPII_Version_device MPII_Version_configure)
globals=(
  "${strings[@]}"
  MPIR_Process MPIDI_global MPIDI_UCX_global
  MPIR_Comm_builtin MPIR_Comm_direct MPIR_Comm_mem
  MPIR_Request_builtin MPIR_Request_direct MPIR_Request_mem
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
awk -v lib="$(basename "$stock")" '/^[A-Za-z_0-9]+: 0x[0-9a-f]+ in \.[a-z.]+, size [0-9]+,/ {
  sub(":", "", $1); sub(",", "", $6); print lib, $1, $2, $6 }' "$found" >"$work/symbols"
missing=()
for g in "${globals[@]}"; do
  grep -q " $g " "$work/symbols" || missing+=("$g")
done
if ((${#missing[@]})); then
  cat "$found" >&2
  echo "error: no agreed address for ${missing[*]}" >&2
  exit 1
fi
cat "$found" >&2
# A string's size is the stock file's (its configure line is not the
# tree's): up to its NUL, read at the address found.
/usr/bin/python3 - "$stock" "$work/symbols" "${strings[@]}" <<'PY'
import sys
from elftools.elf.elffile import ELFFile
stock, path, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
elf = ELFFile(open(stock, "rb"))
ro = elf.get_section_by_name(".rodata")
base, data = ro["sh_addr"], ro.data()
lines = []
for line in open(path):
    lib, name, addr, size = line.split()
    if name in names:
        at = int(addr, 16) - base
        end = data.index(b"\0", at)
        size = str(end - at + 1)
        print(f"{name}: {data[at:end].decode()!r}", file=sys.stderr)
    lines.append(f"{lib} {name} {addr} {size}\n")
open(path, "w").writelines(lines)
PY

# Every type the CH4 queue decoder and the MPICH handle decoders read.
types=(
  MPIR_Comm MPIR_Group MPII_Group_pmap_t MPIR_Request MPIDIG_req_ext_t
  MPIDI_CH4_Global_t MPIDI_per_vci_t MPIDI_rank_map_t MPIDI_gpid_t MPIDI_av_table_t MPIDI_av_entry_t
  MPIDI_UCX_global_t MPIDI_UCX_context_t
  MPIR_Datatype MPIR_Datatype_contents MPIR_Attribute MPIR_Errhandler
  MPIR_Info MPIR_Op MPIR_Topology MPIR_Win MPIR_Object_alloc_t MPII_Keyval
  MPIR_Grequest_fns MPI_Status MPIR_Process_t ADIOI_FileD MPIR_Handle_common
  MPII_Object_kind "enum MPIR_Combiner_enum" MPIR_Win_flavor MPIR_Topo_type "struct info_entry"
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
  --impl-version 4.2.1 \
  --build "Debian 13 libmpich12 $package (amd64, ch4:ucx, no debugger support) on libucx0 $ucx_package; layouts from upstream pmodels/mpich v4.2.1 ($commit) configured with the stock file's configure line (scripts/write-debian13-mpich-profile.sh), symbols located in the stock file" \
  --for-build "$stock" \
  --for-build "$stock_ucp" \
  --output "$repo/$out"
echo "$out"
