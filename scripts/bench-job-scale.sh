#!/usr/bin/env bash
# The job-scale figures, side by side in one run, each a whole command as a
# user waits for it (wall seconds and peak RSS from /usr/bin/time):
#
#   1. one rank core of the reference MPICH (tests/mpich/queues.c, rank 0):
#      `mpidd queues` native with an empty layout cache (cold), again with
#      the cache filled (warm), with --no-cache, and through MPICH's own
#      libtvmpich.so;
#   2. the same with 100,000 posted receives;
#   3. `mpidd job` on the 4 gcore cores of tests/mpich/hang_ring.c (cold,
#      warm), and on N synthetic rank cores (a ring from the job builder,
#      with its layout profile) for N = 1 and 1000, against a loop of
#      `gdb -batch -ex 'thread apply all bt'` over a sample of the same
#      cores, extrapolated to N.
#
#   bash scripts/bench-job-scale.sh [RUNS]
#
# RUNS (default 3) repeats each row; every run is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
ref="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
cargo build --release --quiet -p mpidd -p mpidd-benches --example write_job_cores
target="${CARGO_TARGET_DIR:-$PWD/target}"
mpidd="$target/release/mpidd"
work="$(mktemp -d)"
export MPIDD_CACHE_DIR="$work/cache"
pids=""
trap 'kill -CONT $pids 2>/dev/null || true; kill -KILL $pids 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

row() {
  local label="$1"; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >"$work/out" 2>"$work/err" || {
    echo "failed: $*"; cat "$work/err"; exit 1; }
  read -r secs kb <"$work/t"
  printf '%-58s %6s s %7s MB\n' "$label" "$secs" "$((kb / 1024))"
}

# A 4-rank job of PROGRAM ARGS... whose ranks stop themselves; sets core0
# to a gcore core of rank 0 and leaves the ranks stopped.
start_queues_job() {
  "$ref/bin/mpiexec.hydra" -n 4 "$work/queues" "$@" >"$work/job.out" 2>&1 &
  for _ in $(seq 600); do
    [ "$(grep -c READY "$work/job.out" || true)" -ge 4 ] && break
    sleep 0.1
  done
  pids="$(awk '/READY/{print $3}' "$work/job.out")"
  local pid0
  pid0="$(awk '/READY 0 /{print $3}' "$work/job.out")"
  for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
  rm -f "$work"/core.*
  gcore -o "$work/core" "$pid0" >/dev/null 2>&1
  core0="$work/core.$pid0"
}
end_job() {
  kill -CONT $pids 2>/dev/null || true
  kill -KILL $pids 2>/dev/null || true
  wait 2>/dev/null || true
  pids=""
}

queue_rows() {
  local what="$1"
  echo "== $what: core $(du -h "$core0" | cut -f1)"
  for _ in $(seq "$runs"); do
    rm -rf "$MPIDD_CACHE_DIR"
    row "native, cold (empty layout cache)" "$mpidd" queues --core "$core0" --json
    row "native, warm (layout cache filled)" "$mpidd" queues --core "$core0" --json
    row "native, --no-cache (DWARF every time)" "$mpidd" queues --core "$core0" --json --no-cache
    row "libtvmpich.so through mpidd's mqs host" "$mpidd" queues --core "$core0" --json \
      --dll "$ref/lib/libtvmpich.so"
  done
}

"$ref/bin/mpicc" -g -O0 -o "$work/queues" tests/mpich/queues.c
start_queues_job
queue_rows "one rank, small queues (tests/mpich/queues.c)"
end_job
start_queues_job scale 100000
queue_rows "one rank, 100,000 posted receives"
end_job

echo "== mpidd job on the 4 gcore cores of tests/mpich/hang_ring.c"
"$ref/bin/mpicc" -g -O0 -o "$work/hang_ring" tests/mpich/hang_ring.c
mkdir -p "$work/ring4"
"$ref/bin/mpiexec.hydra" -n 4 "$work/hang_ring" >"$work/ring.out" 2>&1 &
launcher=$!
for _ in $(seq 600); do
  ranks="$(pgrep -f "$work/hang_ring" | grep -v "^$launcher\$" || true)"
  [ "$(echo "$ranks" | grep -c . || true)" -ge 4 ] && break
  sleep 0.1
done
sleep 2
pids="$ranks $launcher"
for pid in $ranks; do
  case "$(cat /proc/$pid/comm)" in hang_ring) gcore -o "$work/ring4/core" "$pid" >/dev/null 2>&1 ;; esac
done
end_job
for _ in $(seq "$runs"); do
  rm -rf "$MPIDD_CACHE_DIR"
  row "mpidd job, 4 real cores, cold" "$mpidd" job --core-dir "$work/ring4"
  row "mpidd job, 4 real cores, warm" "$mpidd" job --core-dir "$work/ring4"
done
first="$(ls "$work"/ring4/core.* | head -n 1)"
for _ in $(seq "$runs"); do
  row "mpidd job, 1 of those cores, warm" "$mpidd" job --core "$first"
  row "gdb thread apply all bt, 1 of those cores" \
    gdb -batch -ex 'thread apply all bt' "$work/hang_ring" "$first"
done

for n in 1 1000; do
  profile="$("$target/release/examples/write_job_cores" "$work/syn$n" "$n")"
  echo "== mpidd job on $n synthetic rank core(s), $(du -sh "$work/syn$n" | cut -f1) in all"
  for _ in $(seq "$runs"); do
    row "mpidd job, $n synthetic" "$mpidd" job --core-dir "$work/syn$n" --profile "$profile"
    row "mpidd job --json, $n synthetic" "$mpidd" job --core-dir "$work/syn$n" --profile "$profile" --json
  done
done
sample=10
echo "== gdb -batch -ex 'thread apply all bt' over $sample of the 1000 synthetic cores"
start=$(date +%s.%N)
for core in $(ls "$work"/syn1000/core.* | head -n "$sample"); do
  gdb -batch -ex 'thread apply all bt' "$work/syn1000/app" "$core" >"$work/gdb.out" 2>&1
done
end=$(date +%s.%N)
# The synthetic cores carry no dynamic linker list, so gdb finds no
# libraries and prints addresses only: its time is still what a loop costs.
grep -q "MPI_Recv" "$work/gdb.out" || echo "(gdb did not name the frames of the synthetic cores: they have no link map)"
awk -v s="$start" -v e="$end" -v k="$sample" 'BEGIN {
  per = (e - s) / k
  printf "%-58s %6.3f s per core, %.0f s for 1000 (extrapolated)\n", "gdb, stacks only", per, per * 1000
}'
