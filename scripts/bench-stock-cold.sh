#!/usr/bin/env bash
# The first read of a build on the MPIs a user already has: `mpidd queues
# --core` on a gcore core of rank 0 of a 4-rank job of Debian's own
# stripped MPICH (ch4:ucx) and Open MPI (ob1), whose layouts come from the
# shipped profiles. For each, a small core (`queues.c scale 10`) and a
# large one (`scale N`, default 100,000 posted receives), timed:
#
#   cold  the layout cache is empty and the page cache of the core, of
#         mpidd and of every file the rank mapped is dropped before each
#         run (best of 3): what a new user waits for;
#   warm  the layout cache filled, files cached (best of 5, after one
#         unmeasured run);
#
# and, for Open MPI, the same core through Debian's own
# libompi_dbg_msgq.so under mpidd's mqs host (`--dll`), which needs the
# DWARF types of a build: on Debian's stripped one the table says it
# cannot read the core. Prints a Markdown table on standard output.
#
#   bash scripts/bench-stock-cold.sh [N]
#
# Needs what scripts/test.sh installs (Debian's MPICH and Open MPI, gdb).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-100000}"
for tool in mpicc.mpich mpiexec.mpich mpicc.openmpi mpirun.openmpi gcore; do
  command -v "$tool" >/dev/null ||
    { echo "error: $tool is missing: bash scripts/test.sh installs it" >&2; exit 1; }
done
ompi_dll=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/libompi_dbg_msgq.so
[ -f "$ompi_dll" ] || { echo "error: $ompi_dll is missing: apt-get install openmpi-bin" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
cargo build --release --quiet --locked -p mpidd
mpidd="$target/release/mpidd"
# shellcheck source=lib/bench-queues-core.sh
. scripts/lib/bench-queues-core.sh
export MPIDD_CACHE_DIR="$work/cache"
cold_cache="$MPIDD_CACHE_DIR"

cell() { # "wall s (cpu s CPU, RSS MB)" of a "seconds KB cpu" triple
  awk -v s="$1" -v kb="$2" -v c="$3" 'BEGIN {
    if (s == "failed") { print "failed"; exit }
    printf "%.3f s (%.2f s CPU, %d MB)", s, c, kb / 1024 }'
}

echo "| MPI, core | posted receives found | cold | warm | vendor library, cold | vendor library, warm |"
echo "|---|---|---|---|---|---|"
for mpi in mpich openmpi; do
  for scale in 10 "$n"; do
    echo "== $mpi, scale $scale" >&2
    case $mpi in
      mpich)
        queues_src=tests/mpich/queues.c
        queues_scale_core mpicc.mpich mpiexec.mpich "$scale" -O0
        ;;
      openmpi)
        queues_src=tests/openmpi/queues.c
        queues_scale_core mpicc.openmpi \
          "mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader" \
          "$scale" -O0
        ;;
    esac
    cold_files=("$mpidd" "$core" "${mapped[@]}")
    "$mpidd" queues --core "$core" --json >"$work/q.json"
    found=$(python3 - "$work/q.json" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
print(sum(len(c["pending_receives"].get("operations", [])) for c in q["communicators"]))
EOF
)
    [ "$found" -ge "$scale" ] || { echo "error: $mpi: the decoder found $found of $scale receives" >&2; exit 1; }
    read -r cs ckb ccpu < <(cold_of 3 "$mpidd" queues --core "$core" --json)
    read -r ws wkb wcpu < <(warm_of 5 "$mpidd" queues --core "$core" --json)
    dll_cold=n/a
    dll_warm=n/a
    if [ "$mpi" = openmpi ] &&
      ! "$mpidd" queues --core "$core" --dll "$ompi_dll" --json >/dev/null 2>"$work/dll.err"; then
      # Open MPI's library needs the DWARF types Debian strips: it cannot
      # read this core at all, which the table says instead of a time.
      grep -q "not found" "$work/dll.err" || { cat "$work/dll.err" >&2; exit 1; }
      dll_cold="cannot read it: $(grep -o "the library asked for the type \`[a-z_]*\`" "$work/dll.err" | head -n 1), which Debian strips"
      dll_warm=$dll_cold
    elif [ "$mpi" = openmpi ]; then
      cold_files+=("$ompi_dll")
      read -r ds dkb dcpu < <(cold_of 3 "$mpidd" queues --core "$core" --dll "$ompi_dll" --json)
      dll_cold=$(cell "$ds" "$dkb" "$dcpu")
      read -r ds dkb dcpu < <(warm_of 5 "$mpidd" queues --core "$core" --dll "$ompi_dll" --json)
      dll_warm=$(cell "$ds" "$dkb" "$dcpu")
    fi
    echo "| Debian's $mpi, scale $scale (${core_mb} MB) | $found | $(cell "$cs" "$ckb" "$ccpu") | $(cell "$ws" "$wkb" "$wcpu") | $dll_cold | $dll_warm |"
  done
done
