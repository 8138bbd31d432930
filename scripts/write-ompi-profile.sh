#!/usr/bin/env bash
# Regenerates the layout profile mpidd ships for Debian 12's own, stripped
# Open MPI 4.1.4 on amd64 (mpidd-read/profiles/), from the DWARF of the
# reference build (scripts/build-ref-ompi.sh: the same source package and
# the configure options that shape the structs). The profile is chosen at
# run time by the build-ids of the installed Debian objects, so it is written
# on a machine that has Debian's openmpi packages installed.
#
#   write-ompi-profile.sh [OUTPUT]
#
#   MPIDD  the mpidd binary to run (default: cargo run -p mpidd)
#
# The test examples/tests/ompi_profile.rs fails when the shipped profile no
# longer equals what this script writes, or when the installed packages are
# another build; rerun this script then, and review the diff.
set -euo pipefail

cd "$(dirname "$0")/.."
out="${1:-mpidd-read/profiles/openmpi-4.1.4-debian12-amd64.json}"
ref="${MPIDD_REF_OMPI:-$(bash scripts/build-ref-ompi.sh | tail -n 1)}"
arch_dir=/usr/lib/x86_64-linux-gnu
components="$arch_dir/openmpi/lib/openmpi3"
for f in "$arch_dir/libmpi.so.40" "$arch_dir/libopen-pal.so.40" "$components/mca_pml_ob1.so" \
  "$components/mca_pml_ucx.so" "$components/mca_io_ompio.so"; do
  if [ ! -e "$f" ]; then
    echo "error: $f is missing: install Debian's Open MPI (apt-get install openmpi-bin libopenmpi-dev)" >&2
    exit 1
  fi
done
package="$(dpkg-query -W -f='${Version}' libopenmpi3)"

# The objects whose DWARF holds the types each reader asks about: libmpi
# (ompi_*, mca_pml_base_*), libopen-pal (opal_*), the ob1 component
# (mca_pml_ob1_*, mca_bml_*, mca_btl_*) for ob1's queue decoder, the UCX
# component (mca_pml_ucx_module_t) for the UCX PML's (UCX's own types are
# in UCX's profile, not here), and OMPIO (mca_common_ompio_data_t) for the
# handle decoders' files. The questions Open MPI's own message-queue
# library asks (ompi-msgq) are recorded too, so that mpidd can answer them
# for it on this stripped build.
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
# The profile's release family is a person's claim, not DWARF's answer: kept
# from the file this run replaces (scripts/lib/keep-family.py).
previous="$(mktemp)"
if [ -f "$out" ]; then cp "$out" "$previous"; else rm -f "$previous"; fi
"${mpidd[@]}" profile write \
  --object "$ref/lib/libmpi.so.40" \
  --object "$ref/lib/libopen-pal.so.40" \
  --object "$ref/lib/openmpi/mca_pml_ob1.so" \
  --object "$ref/lib/openmpi/mca_pml_ucx.so" \
  --object "$ref/lib/openmpi/mca_io_ompio.so" \
  --decoder ompi-ob1 \
  --decoder ompi-ucx \
  --decoder ompi-handles \
  --decoder ompi-msgq \
  --implementation "Open MPI" \
  --impl-version 4.1.4 \
  --build "Debian 12 openmpi $package (amd64), layouts from scripts/build-ref-ompi.sh" \
  --for-build "$arch_dir/libmpi.so.40" \
  --for-build "$arch_dir/libopen-pal.so.40" \
  --for-build "$components/mca_pml_ob1.so" \
  --for-build "$components/mca_pml_ucx.so" \
  --for-build "$components/mca_io_ompio.so" \
  --output "$out"
python3 "$(dirname "$0")/lib/keep-family.py" "$previous" "$out"
rm -f "$previous"
echo "$out"
