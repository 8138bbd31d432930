#!/usr/bin/env bash
# Writes the layout profile mpidd ships for MPICH 4.0.x with the
# ch3:nemesis device, for builds no profile names by build-id (a site's
# Spack or EasyBuild build, compiled without -g): the layouts come from the
# DWARF of the reference CH3 build (scripts/build-ref-mpich.sh ch3), whose
# configure choices are the family's, and the profile declares the release
# family they hold for. A library of the family is offered the profile by
# the version it states, and believed only after the check on the process
# (mpihandles::check_layouts).
#
#   write-mpich-ch3-profile.sh [OUTPUT]
#
#   MPIDD            the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_REF_MPICH  the reference CH3 build (made by build-ref-mpich.sh)
#
# The family (its versions, configure choices and the upstream commits
# that back it) is a person's claim, not DWARF's answer: a rewrite keeps it
# from the file it replaces (scripts/lib/keep-family.py). How it was
# measured: docs/stock-mpich.md, "MPICH's ch3:nemesis release families".
#
# The layouts hold only for the reference build's configure choices that
# move members: --enable-debuginfo (MPIR_Request.u.persist.dbg_next before
# real_request, and the debugger's globals the CH3 decoder starts from),
# no hcoll, --disable-fortran and --disable-cxx (which add enumerators to
# MPIR_Lang_t and two members at the end of MPIR_Process_t only).
set -euo pipefail

cd "$(dirname "$0")/.."
out="${1:-mpidd-read/profiles/mpich-4.0.2-ch3-nemesis-x86_64.json}"
ref="$(bash scripts/build-ref-mpich.sh ch3 | tail -n 1)"
lib="$ref/lib/libmpi.so.12.2.2"
[ -e "$lib" ] || {
  echo "error: $lib is missing (scripts/build-ref-mpich.sh ch3)" >&2
  exit 1
}

# Every type the CH3 queue decoder and the MPICH handle decoders read,
# whole (the handle decoders ask as they meet each object); CH3's virtual
# connection table gives a communicator's world ranks.
types=(
  MPIDI_VCRT MPIDI_VC
  MPIR_Comm MPIR_Group MPII_Group_pmap_t MPIR_Request
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
  --object "$lib" \
  --decoder mpich-ch3 \
  "${type_args[@]}" \
  --implementation MPICH \
  --impl-version 4.0.2 \
  --build "ch3:nemesis, --enable-debuginfo, --disable-fortran, --disable-cxx; layouts from the reference build of Debian 12's mpich 4.0.2 source (scripts/build-ref-mpich.sh ch3, scripts/write-mpich-ch3-profile.sh)" \
  --output "$out"
python3 scripts/lib/keep-family.py "$previous" "$out"
rm -f "$previous"
echo "$out"
