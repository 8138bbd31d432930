#!/usr/bin/env bash
# What one live rank costs when it is not starved: for each job size
# (default 2, 16 and 64 ranks) a ring of the reference MPICH
# (benches/live/ring.c) is started, and once every rank has blocked, every
# rank is stopped with SIGSTOP, so no spinning rank competes for the
# cores. Then, side by side:
#   - `mpidd job --pid LAUNCHER --timings`: wall time, the median split of a
#     rank's reading (open, stop, queues, world rank, stacks, release), and
#     its system calls (`strace -c -f`: all, ptrace, wait4,
#     process_vm_readv, and per rank);
#   - gdb attaching to each rank in turn (`gdb -batch -p PID -ex 'thread
#     apply all bt'`), each rank stopped again after gdb lets it go.
# mpidd's layout cache is a fresh directory, filled by an untimed first run.
#
#   bash scripts/bench-live-split.sh [N...]
#   BENCH_CALLGRIND=1 bash scripts/bench-live-split.sh 16   # also instructions
#   MPIDD=/path/to/other/mpidd bash scripts/bench-live-split.sh  # another build
#
# Wall times depend on the machine's load (printed beside them); the
# system-call and instruction counts do not. Needs gdb, strace (and
# valgrind for BENCH_CALLGRIND) and the reference MPICH
# (MPIDD_REF_MPICH, else scripts/build-ref-mpich.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 16 64)
for tool in gdb strace; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing: apt-get install $tool" >&2; exit 1; }
done
if [ -n "${BENCH_CALLGRIND:-}" ] && ! command -v valgrind >/dev/null; then
  echo "error: valgrind is missing: apt-get install valgrind" >&2; exit 1
fi
ref="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
if [ -z "${MPIDD:-}" ]; then
  cargo build --release --quiet --locked -p mpidd
fi
mpidd="${MPIDD:-${CARGO_TARGET_DIR:-$PWD/target}/release/mpidd}"
work="$(mktemp -d)"
export MPIDD_CACHE_DIR="$work/cache"
launcher=
pids=
stop_job() {
  if [ -n "$launcher" ]; then
    # SIGKILL ends a stopped rank too; the launcher then ends.
    for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
    kill "$launcher" 2>/dev/null || true
    wait "$launcher" 2>/dev/null || true
  fi
  launcher=
  pids=
}
cleanup() { stop_job; rm -rf "$work"; }
trap cleanup EXIT

"$ref/bin/mpicc" -g -O1 -o "$work/ring" benches/live/ring.c

ms_since() { awk -v ns=$(($(date +%s%N) - $1)) 'BEGIN { printf "%.1f", ns / 1e6 }'; }
# calls SUMMARY NAME: the calls column of one syscall in `strace -c` output.
calls() { awk -v name="$2" '$NF == name { print ($4 ~ /^[0-9]+$/) ? $4 : $3; found = 1 } END { if (!found) print 0 }' "$1"; }

echo "cores: $(nproc); load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-34s %s\n' ranks figure value
for n in "${sizes[@]}"; do
  "$ref/bin/mpiexec" -n "$n" "$work/ring" >"$work/out" 2>"$work/err" &
  launcher=$!
  for _ in $(seq 600); do
    [ "$(grep -c '^READY' "$work/out" || true)" -ge "$n" ] && break
    sleep 0.5
  done
  ready=$(grep -c '^READY' "$work/out" || true)
  [ "$ready" -ge "$n" ] || { echo "error: only $ready of $n ranks became ready" >&2; cat "$work/err" >&2; exit 1; }
  pids=$(awk '/^READY/ { print $3 }' "$work/out")
  sleep 0.5 # into their blocking receive
  for pid in $pids; do kill -STOP "$pid"; done
  for pid in $pids; do
    for _ in $(seq 500); do
      grep -q '^State:.*T' "/proc/$pid/status" && break
      sleep 0.01
    done
    grep -q '^State:.*T' "/proc/$pid/status" || { echo "error: rank $pid did not stop" >&2; exit 1; }
  done

  # Untimed: fills the layout cache and the page cache.
  "$mpidd" job --pid "$launcher" >"$work/report" 2>&1
  grep -q '^DEADLOCK' "$work/report" || { echo "error: no deadlock found:" >&2; cat "$work/report" >&2; exit 1; }

  start=$(date +%s%N)
  "$mpidd" job --pid "$launcher" --timings >"$work/report" 2>/dev/null
  wall=$(ms_since "$start")
  split=$(sed -n 's/^read times, median of [0-9]* rank(s): //p' "$work/report")
  printf '%-6s %-34s %s ms (%s ms a rank)\n' "$n" "mpidd job --pid, wall" "$wall" \
    "$(awk -v w="$wall" -v n="$n" 'BEGIN { printf "%.2f", w / n }')"
  printf '%-6s %-34s %s\n' "$n" "mpidd, median split of a rank" "$split"

  strace -c -f -o "$work/strace" "$mpidd" job --pid "$launcher" >/dev/null 2>&1
  total=$(calls "$work/strace" total)
  printf '%-6s %-34s %s total (%s a rank); ptrace %s, wait4 %s, process_vm_readv %s\n' \
    "$n" "mpidd, strace -c -f syscalls" "$total" \
    "$(awk -v t="$total" -v n="$n" 'BEGIN { printf "%.0f", t / n }')" \
    "$(calls "$work/strace" ptrace)" "$(calls "$work/strace" wait4)" \
    "$(calls "$work/strace" process_vm_readv)"

  if [ -n "${BENCH_CALLGRIND:-}" ]; then
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind" \
      "$mpidd" job --pid "$launcher" --jobs 1 >/dev/null 2>"$work/cg.err"
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/cg.err")
    printf '%-6s %-34s %s\n' "$n" "mpidd --jobs 1, instructions" "$ir"
  fi

  start=$(date +%s%N)
  for pid in $pids; do
    gdb -batch -nx -p "$pid" -ex 'thread apply all bt' </dev/null >/dev/null 2>&1 \
      || { echo "error: gdb -p $pid failed" >&2; exit 1; }
    # gdb lets an attached stopped process run on: stop it again, so the
    # next rank is read as the first was.
    kill -STOP "$pid"
  done
  wall=$(ms_since "$start")
  printf '%-6s %-34s %s ms (%s ms a rank)\n' "$n" "gdb -p each rank in turn, wall" "$wall" \
    "$(awk -v w="$wall" -v n="$n" 'BEGIN { printf "%.1f", w / n }')"
  stop_job
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
