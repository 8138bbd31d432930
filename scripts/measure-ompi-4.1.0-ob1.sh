#!/usr/bin/env bash
# Measures ob1's types as Open MPI 4.1.0 lays them out, for the evidence of
# the Open MPI 4.1.0 family (the variant the Open MPI 4.1.4 profile
# declares): mca_pml_ob1.so's types are private to it and Debian does not
# install their headers, so examples/tests/debian11.rs cannot measure them
# against Debian 11's headers, as it does every other type of the family.
#
#   measure-ompi-4.1.0-ob1.sh OMPI_GIT_DIR
#
#   OMPI_GIT_DIR         a clone of upstream open-mpi/ompi with its release
#                        tags (its git directory is enough; nothing of it is
#                        kept or committed)
#   MPIDD_DEBIAN11_ROOT  the Debian 11 root (scripts/python-envs.sh debian11)
#   MPIDD                the mpidd binary (default: cargo run -p mpidd)
#
# A local script, not run by the suite: CI has no upstream clone. It prints
# each fact gcc measured and compares it with the family's layouts; it
# exits 1 on any difference.
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$(pwd)"
git_dir="${1:?usage: $0 OMPI_GIT_DIR}"
root="${MPIDD_DEBIAN11_ROOT:-$HOME/.cache/mpidd/debian11}"
[ -x "$root/usr/bin/mpicc.openmpi" ] || {
  echo "error: no Debian 11 root with Open MPI at $root: run bash scripts/python-envs.sh debian11" >&2
  exit 1
}
commit="$(git --git-dir="$git_dir" rev-parse 'v4.1.0^{commit}')"
echo "upstream v4.1.0: $commit"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/up"
git --git-dir="$git_dir" archive v4.1.0 ompi opal | tar -x -C "$work/up"

# The family's layouts, as mpidd reads them, ob1's types alone.
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q -p mpidd --); fi
"${mpidd[@]}" profile family-layouts "Open MPI" 4.1.0 x86_64 >"$work/family.json"
python3 - "$work/family.json" "$work/ob1.json" <<'EOF'
import json, sys
table = json.load(open(sys.argv[1]))
json.dump({k: v for k, v in table.items() if k.startswith("mca_pml_ob1")}, open(sys.argv[2], "w"))
EOF

# Debian 11 installs peruse-internal.h without the peruse.h it includes;
# the type it needs is not one measured here.
mkdir -p "$work/standin/ompi/peruse"
echo 'typedef void *peruse_event_h;' >"$work/standin/ompi/peruse/peruse.h"
headers=(ompi_config.h)
for h in pml_ob1.h pml_ob1_comm.h pml_ob1_hdr.h pml_ob1_recvfrag.h pml_ob1_recvreq.h pml_ob1_sendreq.h; do
  headers+=("ompi/mca/pml/ob1/$h")
done
python3 scripts/lib/layouts-in-c.py "$work/ob1.json" "$work/ob1.c" "${headers[@]/#/--header=}"
include=/usr/lib/x86_64-linux-gnu/openmpi/include
# Debian 11's own headers first (its configuration), upstream's for what it
# does not install.
bash scripts/lib/in-debian-root.sh "$root" --bind "$work" gcc -I "$work/standin" \
  -I "$include/openmpi" -I "$include" -idirafter "$work/up" -o "$work/ob1" "$work/ob1.c"
bash scripts/lib/in-debian-root.sh "$root" --bind "$work" "$work/ob1" >"$work/measured.txt"
python3 scripts/lib/compare-layouts.py "$work/family.json" "$work/measured.txt"
