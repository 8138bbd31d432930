#!/usr/bin/env bash
# `mpidd job --slurm` on a local Slurm cluster (scripts/slurm-cluster.sh):
# for each N, a ring of N reference-MPICH ranks (benches/live/ring.c) over
# NODES nodes, launched by `srun --mpi=pmi2`, is read by one `mpidd agent`
# per node and analysed. Prints, per N: the whole command's wall time; the
# fan-out alone (`srun --overlap` of `true` on every node); the slowest
# agent's own time; the bytes of records on the wire, in all and per rank;
# the ranks that could not be read and the length of the cycle found; and,
# for the same ranks, the local `mpidd job --pid` time without Slurm.
#
#   bash scripts/bench-slurm.sh [NODES] [N...]     (defaults: 2, 4 16 64)
#
# Needs what scripts/test.sh installs (Slurm, munge, the reference MPICH).
set -euo pipefail
cd "$(dirname "$0")/.."
nodes="${1:-2}"
shift || true
sizes=("$@")
((${#sizes[@]})) || sizes=(4 16 64)
ref="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
CARGO_INCREMENTAL=0 cargo build --release --quiet --locked -p mpidd
mpidd="${CARGO_TARGET_DIR:-$PWD/target}/release/mpidd"
work="$(mktemp -d)"
srun_pid=
cleanup() {
  if [ -n "$srun_pid" ]; then kill "$srun_pid" 2>/dev/null || true; fi
  bash scripts/slurm-cluster.sh stop "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

eval "$(bash scripts/slurm-cluster.sh start "$work/cluster" "$nodes" | tail -n 1)"
"$ref/bin/mpicc" -g -O1 -o "$work/ring" benches/live/ring.c

secs() { # secs command...: wall seconds of one run, output discarded
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "error: $* failed" >&2; exit 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.2f", ns / 1e9 }'
}

echo "nodes: $nodes (slurmd on loopback), $(nproc) cores"
printf '%6s %11s %8s %13s %9s %9s %11s %6s %10s\n' N 'job --slurm' 'fan-out' 'slowest agent' 'bytes' 'per rank' 'unreadable' 'cycle' 'local job'
for n in "${sizes[@]}"; do
  per_node=$(((n + nodes - 1) / nodes))
  # The blocked ranks busy-poll: at the lowest priority they leave the
  # cores to the readers being timed.
  srun --mpi=pmi2 -N"$nodes" --ntasks="$n" --ntasks-per-node="$per_node" \
    --job-name="bench-$n" nice -n 19 "$work/ring" >"$work/out" 2>"$work/err" &
  srun_pid=$!
  for _ in $(seq 600); do
    [ "$(grep -c '^READY' "$work/out" || true)" -ge "$n" ] && break
    sleep 0.5
  done
  ready=$(grep -c '^READY' "$work/out" || true)
  [ "$ready" -ge "$n" ] || { echo "error: only $ready of $n ranks became ready" >&2; cat "$work/err" >&2; exit 1; }
  pids=$(awk '/^READY/ { print $3 }' "$work/out")
  for pid in $pids; do echo 19 >"/proc/$pid/autogroup" 2>/dev/null || true; done
  job=$(squeue -h -o %i -n "bench-$n")
  fanout=$(secs srun --jobid="$job" --overlap -N"$nodes" --ntasks-per-node=1 --mpi=none true)
  start=$(date +%s%N)
  "$mpidd" job --slurm "$job" --json >"$work/report.json" 2>"$work/progress"
  end=$(date +%s%N)
  wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.2f", ns / 1e9 }')
  read -r bytes per_rank < <(sed -n 's/.* \([0-9]*\) bytes of records (\([0-9]*\) per rank).*/\1 \2/p' "$work/progress")
  slowest=$(sed -n 's/.* unreadable, in \([0-9.]*\) s$/\1/p' "$work/progress" | sort -n | tail -n 1)
  # Ranks that did not stop in time (starved busy-pollers on a loaded
  # machine) are unreadable and break the cycle: counted, not hidden.
  read -r cycle unreadable < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["cycles"][0]) if r["cycles"] else 0, sum(1 for x in r["ranks"] if x["state"] == "unreadable"))' "$work/report.json")
  local_args=()
  for pid in $pids; do local_args+=(--pid "$pid"); done
  local_wall=$(secs "$mpidd" job "${local_args[@]}" --json)
  printf '%6s %10ss %7ss %12ss %9s %9s %11s %6s %9ss\n' "$n" "$wall" "$fanout" "$slowest" "$bytes" "$per_rank" "$unreadable" "$cycle" "$local_wall"
  scancel "$job"
  wait "$srun_pid" 2>/dev/null || true
  srun_pid=
done
