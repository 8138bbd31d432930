#!/usr/bin/env bash
# Times `mpidd procs --core` on a 1,000,000-entry MPIR table (15,625 hosts)
# written as a real x86_64 core by the synthetic job builder, next to gdb
# reading every entry's strings with a Python loop, and `cat` (the floor).
# usage: scripts/bench-1m-table.sh [OUTDIR]   (default /tmp/mpidd-bench-1m)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/mpidd-bench-1m}
mkdir -p "$out"
cargo build --quiet --release -p mpidd -p mpidd-read --examples
cargo build --quiet --release -p mpidd
./target/release/examples/write_synthetic_core "$out" x86_64 1000000 >/dev/null
ls -l "$out/job.core"
t() { /usr/bin/time -f "  %e s wall, %M KB peak RSS" "$@"; }
echo "== cat (floor)"
t cat "$out/job.core" >/dev/null
echo "== mpidd procs --core --summary (every entry read, as the gdb script does)"
t ./target/release/mpidd procs --core "$out/job.core" --summary
echo "== mpidd procs --core --json (every entry printed)"
t ./target/release/mpidd procs --core "$out/job.core" --json >"$out/mpidd.json"
echo "== gdb -batch with a Python loop"
t gdb -batch -nx "$out/mpirun" "$out/job.core" -x scripts/gdb_mpir_table.py >"$out/gdb.out" 2>&1
tail -n1 "$out/gdb.out"
