#!/usr/bin/env bash
# What the verdict costs a user: `mpidd job` as a whole command on a real
# hung ring of 4 ranks (tests/mpich/hang_ring.c), from its gcore cores cold
# (page cache of the cores and the mapped files dropped) and warm, and live
# through its launcher; each with the queues and with --no-queues (the
# verdict from stacks alone). Three MPIs: the reference MPICH, Debian's
# MPICH, and Debian's Open MPI over its UCX PML (no queue decoder: stacks
# alone either way). Then the analysis alone (criterion, P7).
#
#   bash scripts/bench-verdict.sh [RUNS]
#
# MPIDD_BENCH_BASELINE=/path/to/an/older/mpidd times that binary beside
# this tree's on the same cores, without --no-queues (which older binaries
# lack). RUNS (default 5): each figure is the fastest of RUNS runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
ref="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
cargo build --release --quiet -p mpidd
target="${CARGO_TARGET_DIR:-$PWD/target}"
mpidd="$target/release/mpidd"
baseline="${MPIDD_BENCH_BASELINE:-}"
work="$(mktemp -d)"
export MPIDD_CACHE_DIR="$work/cache"
pids=""
launcher=""
trap 'kill -CONT $pids 2>/dev/null || true; kill -KILL $pids $launcher 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# shellcheck source=scripts/lib/bench-queues-core.sh
source scripts/lib/bench-queues-core.sh

# start_ring NAME MPICC LAUNCHER ARGS...: a hung ring, its ranks' pids in
# `pids`, its launcher in `launcher`.
start_ring() {
  local name=$1 cc=$2
  shift 2
  "$cc" -g -O0 -o "$work/$name" tests/mpich/hang_ring.c
  setsid "$@" -n 4 "$work/$name" >"$work/$name.out" 2>&1 &
  launcher=$!
  for _ in $(seq 1200); do [ "$(grep -c READY "$work/$name.out" || true)" -ge 4 ] && break; sleep 0.1; done
  pids="$(awk '/READY/{print $3}' "$work/$name.out")"
  [ "$(wc -w <<<"$pids")" -eq 4 ] || { cat "$work/$name.out" >&2; exit 1; }
  sleep 1
}

stop_ring() {
  kill -KILL $pids "$launcher" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=""
  launcher=""
}

row() {
  local what=$1
  shift
  printf '| %s | %s |\n' "$what" "$("$@" | awk '{printf "%.3f s, %d MB", $1, $2 / 1024}')"
}

measure() {
  local name=$1
  local dir="$work/$name-cores"
  mkdir -p "$dir"
  for p in $pids; do gcore -o "$dir/core" "$p" >/dev/null 2>&1; done
  local pid0
  pid0="$(head -n 1 <<<"$pids")"
  mapfile -t mapped < <(awk '$6 ~ /^\// {print $6}' "/proc/$pid0/maps" | sort -u)
  cold_files=("${mapped[@]}" "$dir"/core.*)
  # The ranks busy-poll: stopped while their cores are timed, so that the
  # figures are mpidd's, not its share of two cores.
  kill -STOP $pids
  echo
  echo "### $name"
  echo
  echo "| command | fastest of $runs |"
  echo "|---|---|"
  for q in "" "--no-queues"; do
    rm -rf "$MPIDD_CACHE_DIR"
    row "\`mpidd job --core-dir DIR --json $q\`, cold" cold_of "$runs" "$mpidd" job --core-dir "$dir" --json $q
    row "\`mpidd job --core-dir DIR --json $q\`, warm" warm_of "$runs" "$mpidd" job --core-dir "$dir" --json $q
  done
  if [ -n "$baseline" ]; then
    rm -rf "$MPIDD_CACHE_DIR"
    row "baseline \`mpidd job --core-dir DIR --json\`, cold" cold_of "$runs" "$baseline" job --core-dir "$dir" --json
    row "baseline \`mpidd job --core-dir DIR --json\`, warm" warm_of "$runs" "$baseline" job --core-dir "$dir" --json
  fi
  # Live: the ranks run (busy-poll) again, as a user's hung job does.
  kill -CONT $pids
  for q in "" "--no-queues"; do
    row "\`mpidd job --pid LAUNCHER --json $q\`, live" warm_of "$runs" "$mpidd" job --pid "$launcher" --json $q
  done
  if [ -n "$baseline" ]; then
    row "baseline \`mpidd job --pid LAUNCHER --json\`, live" warm_of "$runs" "$baseline" job --pid "$launcher" --json
  fi
}

start_ring ref "$ref/bin/mpicc" nice -n 19 "$ref/bin/mpiexec.hydra"
measure "reference MPICH 4.0.2 (CH3)"
stop_ring
start_ring mpich /usr/bin/mpicc.mpich nice -n 19 /usr/bin/mpiexec.mpich
measure "Debian's MPICH 4.0.2 (ch4:ucx, stripped)"
stop_ring
start_ring ompi /usr/bin/mpicc.openmpi nice -n 19 /usr/bin/mpirun.openmpi --allow-run-as-root \
  --oversubscribe --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
measure "Debian's Open MPI 4.1.4 over UCX (stacks alone)"
stop_ring

echo
echo "### The analysis alone (criterion, P7)"
echo
echo "| shape/ranks | time (criterion's interval) |"
echo "|---|---|"
cargo bench --quiet -p mpidd-benches --bench p7_verdict -- --noplot 2>/dev/null |
  awk '/^p7_verdict/ {name=$1} /time:/ {match($0, /\[.*\]/); print "| " name " | " substr($0, RSTART, RLENGTH) " |"}'
