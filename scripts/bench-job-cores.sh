#!/usr/bin/env bash
# `mpidd job` on the gcore cores of all 4 ranks of the reference MPICH's
# tests/mpich/queues.c (scale 10), beside gdb's stacks of the same cores:
#
#   cold   `mpidd job --core-dir DIR --json`, the layout cache emptied first
#   warm   the same, the cache filled by the run before
#   gdb    `gdb -batch -ex "thread apply all bt" EXE CORE` for each core in
#          turn: the stacks alone, no queues
#
# hyperfine's mean over RUNS runs (default 10), then the warm ratio to gdb,
# then the instructions of a warm run (callgrind), the figure
# scripts/speed-budgets.sh guards as `ref-job-4-warm`.
#
#   bash scripts/bench-job-cores.sh [RUNS]
#
# Needs MPIDD_REF_MPICH (or builds it), gdb, hyperfine and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
ref="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
for tool in gcore gdb hyperfine valgrind; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing: apt-get install ${tool/gcore/gdb}" >&2; exit 1; }
done
cargo build --release --quiet --locked -p mpidd
target="${CARGO_TARGET_DIR:-$PWD/target}"
mpidd="$target/release/mpidd"
# shellcheck source=lib/bench-queues-core.sh
. scripts/lib/bench-queues-core.sh
export MPIDD_CACHE_DIR="$work/cache"

all_rank_cores "$ref/bin/mpicc" "$ref/bin/mpiexec.hydra" "$work"

# gdb over each core in turn, as a script of its own: hyperfine runs its
# command through a shell, which would expand a loop variable written
# inline before the loop ran.
cat >"$work/gdb_all.sh" <<EOF
for c in $work/cores/core.*; do
  gdb -batch -ex 'thread apply all bt' $work/queues "\$c" >/dev/null 2>&1 || exit 1
done
EOF
gdb_all="bash $work/gdb_all.sh"
echo "4 rank cores of tests/mpich/queues.c ($(du -sh "$work/cores" | cut -f1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
hyperfine --style basic --runs "$runs" --warmup 1 --export-markdown "$work/cold.md" \
  --prepare "rm -rf $MPIDD_CACHE_DIR" \
  -n "mpidd job, cold (empty layout cache)" "$mpidd job --core-dir $work/cores --json" >/dev/null
hyperfine --style basic --runs "$runs" --warmup 1 --export-markdown "$work/warm.md" --export-json "$work/warm.json" \
  -n "mpidd job, warm (layout cache filled)" "$mpidd job --core-dir $work/cores --json" \
  -n "gdb thread apply all bt, each core in turn" "$gdb_all" >/dev/null
cat "$work/cold.md"
tail -n +3 "$work/warm.md"
echo
python3 - "$work/warm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
mpidd, gdb = r[0]["mean"], r[1]["mean"]
print(f"gdb's stacks against mpidd job, warm: {gdb / mpidd:.1f} times (goal: at least 20)")
EOF
"$mpidd" job --core-dir "$work/cores" --json >/dev/null
valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$mpidd" job --core-dir "$work/cores" --json >/dev/null 2>"$work/vg"
echo "instructions of a warm run: $(grep -o 'Collected : [0-9]*' "$work/vg" | awk '{print $3}')"
