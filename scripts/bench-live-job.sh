#!/usr/bin/env bash
# A live hung job of N ranks (default 64) on the reference MPICH, more ranks
# than cores, run at nice 19: the time `mpidd job --pid LAUNCHER` takes to read every rank
# (queues and stacks) and give its verdict, beside what people run today,
# gdb printing every thread's stack of each rank in turn.
#
#   bash scripts/bench-live-job.sh [N]
#
# Prints each figure as it is taken. Needs what scripts/test.sh installs (gdb, the
# reference MPICH).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-64}"
ref="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
cargo build --release --quiet --locked -p mpidd
mpidd="${CARGO_TARGET_DIR:-$PWD/target}/release/mpidd"
work="$(mktemp -d)"
launcher=
cleanup() {
  if [ -n "$launcher" ]; then kill "$launcher" 2>/dev/null || true; wait "$launcher" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$ref/bin/mpicc" -g -O1 -o "$work/ring" benches/live/ring.c
# The blocked ranks busy-poll: at the lowest priority they leave the cores
# to the readers being timed (mpidd and gdb alike), which would otherwise
# measure mostly their own starvation.
nice -n 19 "$ref/bin/mpiexec" -n "$n" "$work/ring" >"$work/out" 2>"$work/err" &
launcher=$!
for _ in $(seq 600); do
  [ "$(grep -c '^READY' "$work/out" || true)" -ge "$n" ] && break
  sleep 1
done
ready=$(grep -c '^READY' "$work/out" || true)
[ "$ready" -ge "$n" ] || { echo "error: only $ready of $n ranks became ready" >&2; cat "$work/err" >&2; exit 1; }
pids=$(awk '/^READY/ { print $3 }' "$work/out")
# The launcher puts the ranks in a session of their own, and with the
# scheduler's autogroups on, nice acts only inside a session: the ranks'
# whole group is lowered too.
for pid in $pids; do echo 19 >"/proc/$pid/autogroup" 2>/dev/null || true; done

secs() { # secs command...: wall seconds of one run, output discarded
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "error: $* failed" >&2; exit 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.2f", ns / 1e9 }'
}
gdb_all() {
  for pid in $pids; do
    gdb -batch -nx -p "$pid" -ex 'thread apply all bt' </dev/null
  done
}
# Each figure is printed as soon as it is taken: with many spinning ranks
# on few cores the gdb loop can take many minutes.
echo "ranks: $n on $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
# The first run reads the libraries' DWARF from disk for the first time
# since the build (cold page cache for mpidd's own reads); the second finds
# them cached.
start=$(date +%s%N)
"$mpidd" job --pid "$launcher" >"$work/report" 2>&1
first=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.2f", ns / 1e9 }')
grep -qi "^DEADLOCK" "$work/report" || { echo "error: no deadlock found:" >&2; cat "$work/report" >&2; exit 1; }
echo "verdict: $(grep '^DEADLOCK' "$work/report")"
echo "mpidd job --pid LAUNCHER, first run: $first s"
echo "mpidd job --pid LAUNCHER, again: $(secs "$mpidd" job --pid "$launcher") s"
echo "mpidd job --pid LAUNCHER --no-stacks: $(secs "$mpidd" job --pid "$launcher" --no-stacks) s"
echo "gdb -batch -p PID -ex 'thread apply all bt', every rank in turn: $(secs gdb_all) s"
echo "load at the end: $(cut -d' ' -f1 /proc/loadavg)"
