#!/usr/bin/env bash
# Writes the layout profile of an MPICH CH4 release family as pip's
# MPICH wheels build it (mpi4py/mpi-publish: ch4:ucx,ofi from 4.3,
# ch4:ofi,ucx before, stripped, no
# build-id, hidden globals), from upstream pmodels/mpich's source at a
# release tag configured as the wheels are (scripts/mpich-release-tree.sh):
#
# - Layouts: the objects that define the types and globals the CH4 queue
#   decoder and the handle decoders read are compiled there with -g and
#   linked into a stand-in libmpi.so.12, for its DWARF (`mpidd profile
#   write`, every type whole).
# - The family's hidden globals (`family.hidden_globals`): how a stripped
#   library of the family keeps them, measured from the stand-in
#   (scripts/lib/hidden-global-recipes.py): the allocators' initialisers,
#   and the offsets into each global that exported functions reference.
#   mpidd locates them in a wheel's own libmpi.so.12 from these facts
#   (mpidd_read::locate_hidden_globals).
# - The family (its versions, the commits compared) is a person's claim:
#   a rewrite keeps it from the file it replaces (scripts/lib/keep-family.py);
#   the first write takes it from FAMILY_JSON.
#
#   write-mpich-wheel-profile.sh REF OUTPUT [FAMILY_JSON]
#
#   MPIDD_MPICH_LIBRARY  libmpi (default) or libmpi_abi: the library the
#                     profile is for. libmpi_abi.so.1 (5.0 on, built with
#                     --enable-mpi-abi, what `mpicc_abi` links) is MPICH
#                     compiled again with -DBUILD_MPI_ABI: its MPI_Status
#                     is the standard ABI's (so MPIR_Request is laid out
#                     otherwise), its MPI_ANY_SOURCE, MPI_ANY_TAG and
#                     MPI_PROC_NULL are the ABI's values, and its bindings
#                     (whose references place the hidden globals) are
#                     other code; so it has a profile of its own, measured
#                     from the same tree's objects of that library.
#   MPIDD             the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_MPICH_GIT, MPIDD_YAKSA_GIT, MPIDD_JSONC_GIT: as
#                     scripts/mpich-release-tree.sh takes them
#
# Nothing of MPICH's source goes into the repo: only offsets, sizes,
# values and function names.
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$(pwd)
ref="${1:?usage: write-mpich-wheel-profile.sh REF OUTPUT [FAMILY_JSON]}"
out="${2:?usage: write-mpich-wheel-profile.sh REF OUTPUT [FAMILY_JSON]}"
family_json="${3:-}"
case "$out" in /*) ;; *) out="$repo/$out" ;; esac
library="${MPIDD_MPICH_LIBRARY:-libmpi}"
case "$library" in
  libmpi) la=lib_libmpi_la soname=libmpi.so.12 abi_flags=() ;;
  libmpi_abi) la=lib_libmpi_abi_la soname=libmpi_abi.so.1 abi_flags=(-DBUILD_MPI_ABI -I src/binding/abi) ;;
  *) echo "write-mpich-wheel-profile: MPIDD_MPICH_LIBRARY is libmpi or libmpi_abi, not '$library'" >&2; exit 2 ;;
esac
tree="$(bash scripts/mpich-release-tree.sh "$ref" | tail -n 1)"
if [ "$library" = libmpi_abi ] && ! grep -q -- "--enable-mpi-abi" "$tree/.mpidd-configured"; then
  echo "write-mpich-wheel-profile: $ref is not configured --enable-mpi-abi: it builds no libmpi_abi" >&2
  exit 2
fi
# libmpi_abi's so-version: libtool's current minus age, from the release's
# -version-info (5.0.2 on: libmpi_abi.so.1), or libtool's 0 where the
# release sets none (5.0.0, 5.0.1: libmpi_abi.so.0).
if [ "$library" = libmpi_abi ]; then
  read -r current age < <(sed -n 's/^ABI_ABIVERSIONFLAGS = -version-info \([0-9]*\):[0-9]*:\([0-9]*\).*/\1 \2/p' "$tree/Makefile") || true
  soname="libmpi_abi.so.$((${current:-0} - ${age:-0}))"
fi
read -r _ commit version _ <"$tree/.mpidd-configured"
# The netmods in the build's order: ch4:ucx,ofi from 4.3, ch4:ofi,ucx before.
device="$(sed -n 's/.*--with-device=\([^ ]*\).*/\1/p' "$tree/.mpidd-configured")"

# shellcheck source=lib/debian-source.sh
. scripts/lib/debian-source.sh
ensure_packages python3-pyelftools binutils

# The objects that define the types and globals the decoders read (the
# handle pools and their users, CH4's globals, requests and UCX netmod;
# 3.4 names MPIDIG's files ch4r_*),
# and the bindings whose references place the hidden globals.
objects=(
  src/mpi/attr/${la}-attrutil.lo
  src/mpi/attr/${la}-attr_impl.lo
  src/mpi/coll/op/${la}-op_impl.lo
  src/mpi/comm/${la}-comm_impl.lo
  src/mpi/comm/${la}-commutil.lo
  src/mpi/datatype/${la}-typeutil.lo
  src/mpi/datatype/${la}-type_contents.lo
  src/mpi/errhan/${la}-dynerrutil.lo
  src/mpi/errhan/${la}-errutil.lo
  src/mpi/errhan/${la}-errhan_impl.lo
  src/mpi/group/${la}-grouputil.lo
  src/mpi/info/${la}-infoutil.lo
  src/mpi/init/${la}-globals.lo
  src/mpi/init/${la}-initinfo.lo
  src/mpi/init/${la}-mpir_init.lo
  src/mpi/request/${la}-mpir_request.lo
  src/mpi/request/${la}-request_impl.lo
  src/mpi/rma/${la}-winutil.lo
  src/mpi/topo/${la}-topo_impl.lo
  src/mpi/topo/${la}-topoutil.lo
  src/mpid/ch4/netmod/ucx/${la}-globals.lo
  src/mpid/ch4/netmod/ucx/${la}-ucx_init.lo
  src/mpid/ch4/src/${la}-ch4_comm.lo
  src/mpid/ch4/src/${la}-ch4_globals.lo
  src/mpid/ch4/src/${la}-ch4_init.lo
  src/mpid/ch4/src/${la}-ch4_proc.lo
  src/mpid/ch4/src/${la}-mpidig_recvq.lo
  src/mpid/ch4/src/${la}-ch4r_recvq.lo
  src/mpid/ch4/src/${la}-ch4r_proc.lo
  src/util/${la}-mpir_handlemem.lo
)
bindings=(
  comm/comm_rank comm/comm_size comm/comm_split comm/comm_dup comm/comm_free comm/comm_get_name
  comm/comm_set_name comm/comm_compare comm/comm_group
  pt2pt/send pt2pt/recv pt2pt/isend pt2pt/irecv pt2pt/iprobe pt2pt/probe pt2pt/improbe pt2pt/mprobe
  pt2pt/imrecv pt2pt/mrecv pt2pt/sendrecv pt2pt/ssend pt2pt/issend pt2pt/rsend pt2pt/send_init
  pt2pt/recv_init rma/put rma/get rma/win_lock rma/win_unlock rma/win_flush rma/accumulate
  request/start request/waitall request/testall
  request/wait request/test request/request_free request/cancel
  init/initialized init/finalized init/query_thread init/is_thread_main init/abort
  info/info_create info/info_get info/info_set info/info_free
  topo/cart_create topo/topo_test topo/cartdim_get
  group/group_size group/group_rank group/group_free
  datatype/type_size datatype/type_commit datatype/type_get_name datatype/type_contiguous
  datatype/type_set_name datatype/type_get_extent datatype/type_dup datatype/type_free
  datatype/type_get_envelope datatype/type_get_true_extent datatype/pack_size datatype/get_elements
  errhan/comm_get_errhandler errhan/comm_set_errhandler errhan/errhandler_free
  op/op_create op/op_free
  rma/win_get_name rma/win_free
  attr/comm_get_attr attr/comm_create_keyval attr/comm_free_keyval
  misc/get_library_version
)
# Up to 4.2 the bindings are one generated file.
if [ "$library" = libmpi_abi ]; then
  objects+=(src/binding/abi/${la}-c_binding_abi.lo src/binding/abi/${la}-mpi_abi_util.lo)
elif grep -q "src/binding/c/${la}-c_binding.lo" "$tree/Makefile"; then
  objects+=(src/binding/c/${la}-c_binding.lo)
else
  # Before 4.0 each binding is a file of src/mpi.
  for b in "${bindings[@]}"; do
    o="src/binding/c/$(dirname "$b")/${la}-$(basename "$b").lo"
    if ! grep -q "$o" "$tree/Makefile"; then
      o="$(grep -o "src/mpi/[a-z0-9_/]*/${la}-$(basename "$b")\.lo" "$tree/Makefile" | awk 'NR == 1')" || true
      [ -n "$o" ] || o="src/binding/c/$(dirname "$b")/${la}-$(basename "$b").lo"
    fi
    objects+=("$o")
  done
fi
romio_objects=(adio/common/ad_open.lo adio/common/ad_init.lo mpi-io/glue/mpich/mpio_file.lo
  mpi-io/lib_libpromio_la-close.lo mpi-io/lib_libpromio_la-fsync.lo)
if [ "$library" = libmpi_abi ]; then
  romio_objects=(adio/common/libromio_abi_la-ad_open.lo adio/common/libromio_abi_la-ad_init.lo
    mpi-io/glue/mpich/libromio_abi_la-mpio_file.lo mpi-io/libromio_abi_la-close.lo
    mpi-io/libromio_abi_la-fsync.lo)
fi
have=()
for o in "${objects[@]}"; do
  if grep -q "$o" "$tree/Makefile"; then have+=("$o"); else echo "write-mpich-wheel-profile: $ref has no $o" >&2; fi
done
(cd "$tree" && nice -n 10 make -s -j2 "${have[@]}" >/dev/null)
romio_have=()
for o in "${romio_objects[@]}"; do
  if grep -q "$(basename "$o")" "$tree/src/mpi/romio/Makefile"; then romio_have+=("$o"); fi
done
(cd "$tree/src/mpi/romio" && nice -n 10 make -s "${romio_have[@]}" >/dev/null)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pic=()
for o in "${have[@]}"; do
  pic+=("$tree/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
for o in "${romio_have[@]}"; do
  pic+=("$tree/src/mpi/romio/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
# mpi.h declares enum MPIR_Win_flavor (a window's create_flavor, a plain
# int), which no object uses: a probe of the tree's own mpi.h gives it.
# The ABI library has no such enums: its window flavors and combiners are
# mpi_abi.h's constants, of an unnamed enum; the probe names an enum of
# their values (under names of its own: the constants' are taken), and
# the profile takes their names back.
if [ "$library" = libmpi_abi ]; then
  {
    echo '#include "mpi.h"'
    for e in MPIR_Win_flavor:MPI_WIN_FLAVOR_ MPIR_Combiner_enum:MPI_COMBINER_; do
      echo "enum ${e%%:*} {"
      grep -o "\b${e#*:}[A-Z_0-9]*" "$tree/src/binding/abi/mpi_abi.h" | sort -u |
        sed 's/^MPI_\(.*\)/  MPIDD_ABI_\1 = MPI_\1,/'
      echo "};"
      echo "enum ${e%%:*} mpidd_${e%%:*};"
    done
  } >"$work/win_flavor.c"
else
  printf '#include "mpi.h"\nMPIR_Win_flavor_t mpidd_win_flavor;\n' >"$work/win_flavor.c"
fi
(cd "$tree" && gcc -g -O2 -fPIC "${abi_flags[@]}" -I src/include -I src/mpi/romio/include -c "$work/win_flavor.c" -o "$work/win_flavor.o")
pic+=("$work/win_flavor.o")
standin="$work/$soname"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all

types=(
  MPIR_Comm MPIR_Group MPII_Group_pmap_t MPIR_Request MPIDIG_req_ext_t MPIDIG_rreq_t
  MPIDI_CH4_Global_t MPIDI_per_vci_t MPIDI_rank_map_t MPIDI_gpid_t MPIDI_av_table_t MPIDI_av_entry_t
  MPIDI_UCX_global_t MPIDI_UCX_context_t
  MPIR_Datatype MPIR_Datatype_contents MPIR_Attribute MPIR_Errhandler
  MPIR_Info MPIR_Op MPIR_Topology MPIR_Win MPIR_Object_alloc_t MPII_Keyval
  MPIR_Grequest_fns MPI_Status MPIR_Process_t ADIOI_FileD MPIR_Handle_common
  MPII_Object_kind "enum MPIR_Combiner_enum" MPIR_Win_flavor
)
# A type a release no longer has (5.0's groups keep no MPII_Group_pmap_t,
# its communicators no CH4 rank maps) is left out, saying so.
type_args=()
for t in "${types[@]}"; do
  if [[ "$t" == MPI* ]] && ! grep -rqw "$t" "$tree/src/include" "$tree/src/mpid/ch4" "$tree/src/mpi/romio/adio/include"; then
    echo "write-mpich-wheel-profile: $ref has no type $t" >&2
    continue
  fi
  type_args+=(--type "$t")
done
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
previous="$(mktemp)"
if [ -f "$out" ]; then cp "$out" "$previous"; elif [ -n "$family_json" ]; then
  python3 -c 'import json,sys; print(json.dumps({"family": json.load(open(sys.argv[1]))}))' "$family_json" >"$previous"
else rm -f "$previous"; fi
"${mpidd[@]}" profile write \
  --object "$standin" \
  "${type_args[@]}" \
  --implementation MPICH \
  --impl-version "$version" \
  --build "$device as pip's MPICH wheels configure it (mpi4py/mpi-publish), its $soname, stripped, no build-id, hidden globals; layouts from upstream pmodels/mpich $ref ($commit) configured so, with -g (scripts/mpich-release-tree.sh, scripts/write-mpich-wheel-profile.sh)" \
  --output "$out"
if [ "$library" = libmpi_abi ]; then sed -i 's/"MPIDD_ABI_/"MPI_/' "$out"; fi
python3 scripts/lib/keep-family.py "$previous" "$out"
rm -f "$previous"
# The direct arrays beside the builtin ones are listed too, though their
# allocators point at them: their stand-in addresses undo a builtin
# array's tie (5.0's datatype allocator points at none, and the same two
# functions reference both arrays at their first byte; in libmpi_abi one
# exported function references the builtin operations and an ABI table).
globals=(
  MPIR_Process MPIDI_global MPIDI_UCX_global
  MPIR_Comm_builtin MPIR_Request_builtin MPIR_Request_direct MPIR_Request_mem
  MPIR_Group_builtin MPIR_Datatype_builtin MPIR_Datatype_direct MPIR_Errhandler_builtin
  MPIR_Info_builtin MPIR_Info_direct MPIR_Op_builtin MPIR_Op_direct
  MPIR_Topology_keyval ADIOI_Ftable ADIOI_Ftable_ptr
)
# 4.0 names the builtin requests MPIR_Request_builtins.
for i in "${!globals[@]}"; do
  g="${globals[$i]}"
  if ! grep -rqw "$g" "$tree/src/mpi" "$tree/src/mpid/ch4/src" "$tree/src/include" &&
    grep -rqw "${g}s" "$tree/src/mpi" "$tree/src/include"; then
    globals[i]="${g}s"
  fi
done
# Each global's alignment as the compiler gives it (a start the family's
# build could not have is no candidate): a probe compiled with CH4's own
# flags, whose arrays are as long as each global's alignment.
flags="$(cd "$tree" && make -n -W src/mpid/ch4/src/ch4_globals.c src/mpid/ch4/src/${la}-ch4_globals.lo |
  sed -n 's/.*--mode=compile gcc \(.*\) -c -o .*/\1/p' | head -n 1)"
{
  echo '#include "mpidimpl.h"'
  echo '#include "ucx_types.h"'
  for g in "${globals[@]}"; do
    case "$g" in ADIOI_* | MPIR_Topology_keyval) continue ;; esac
    echo "char mpidd_align_$g[__alignof__($g)];"
  done
} >"$work/align.c"
# shellcheck disable=SC2086
(cd "$tree" && gcc $flags "${abi_flags[@]}" -I./src/mpid/ch4/netmod/ucx -c "$work/align.c" -o "$work/align.o")
nm -S "$work/align.o" | while read -r _ size _ name; do
  case "$name" in mpidd_align_*) echo "${name#mpidd_align_} $((16#$size))" ;; esac
done >"$work/align.txt"
MPIDD_ALIGNMENTS="$work/align.txt" /usr/bin/python3 scripts/lib/hidden-global-recipes.py "$standin" "$out" "$soname" "${globals[@]}"
echo "$out"
