#!/usr/bin/env bash
# Times `mpi queues` inside gdb (the Python module mpidd.gdb) on one rank
# with N posted receives (default 1,000) of the reference-MPICH job
# tests/mpich/queues.c, stopped by itself: at gdb's first stop (the module
# reads the rank's objects and resolves its layouts), again within that
# stop (pages kept), and at later stops (after one instruction of the
# stopped thread: the pages are forgotten, the objects and layouts kept),
# beside the whole command `mpidd queues --pid` on the same rank. gdb
# times each command itself (Python's perf_counter around gdb.execute), so
# gdb's own start-up and attach are not counted; the mpidd figure is the
# whole command, process start to exit.
#
#   bash scripts/bench-gdb-module.sh [N] [STOPS]
#
# STOPS (default 5) later stops are timed; the median is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000}"
stops="${2:-5}"
ref="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
site="$(bash scripts/build-python-module.sh 2>/dev/null | tail -n 1)"
cargo build --release --quiet -p mpidd
mpidd="$PWD/target/release/mpidd"
work="$(mktemp -d)"
trap 'kill -CONT $pids 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
"$ref/bin/mpicc" -g -O0 -o "$work/queues" tests/mpich/queues.c
"$ref/bin/mpiexec.hydra" -n 4 "$work/queues" scale "$n" >"$work/out" 2>&1 &
for _ in $(seq 600); do
  [ "$(grep -c READY "$work/out" || true)" -ge 4 ] && break
  sleep 0.1
done
pids="$(awk '/READY/{print $3}' "$work/out")"
pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
echo "rank 0 (pid $pid0) with $n posted receives"

cat >"$work/time.py" <<EOF
import statistics, time
import gdb
import mpidd.gdb

def timed(command):
    start = time.perf_counter()
    gdb.execute(command, to_string=True)
    return (time.perf_counter() - start) * 1000

first = timed("mpi queues -json")
again = timed("mpi queues -json")
gdb.execute("set scheduler-locking on")
later = []
for _ in range($stops):
    gdb.execute("stepi", to_string=True)
    later.append(timed("mpi queues -json"))
print("@@ first stop %.1f ms; again in that stop %.1f ms; later stops median %.1f ms (of %d: %s)"
      % (first, again, statistics.median(later), len(later), ", ".join("%.1f" % t for t in later)))
EOF
gdb -nx -batch -p "$pid0" \
  -ex "python import sys; sys.path.insert(0, '$site')" \
  -ex "source $work/time.py" 2>/dev/null | sed -n 's/^@@ /mpi queues in gdb: /p'
# gdb left the rank stopped as it found it.
for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done

whole() {
  local start end
  start=$(date +%s%N)
  "$mpidd" queues --pid "$pid0" --json >/dev/null
  end=$(date +%s%N)
  echo $(((end - start) / 100000))
}
times=()
for _ in 1 2 3 4 5; do times+=("$(whole)"); done
sorted="$(printf '%s\n' "${times[@]}" | sort -n)"
median="$(sed -n 3p <<<"$sorted")"
echo "mpidd queues --pid (whole command): median $((median / 10)).$((median % 10)) ms of 5 (tenths of ms: ${times[*]})"
