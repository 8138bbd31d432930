#!/usr/bin/env bash
# What Python frames cost, and `mpidd job` on a job of mpi4py ranks beside
# py-spy, the tool Python users reach for.
#   1. Per rank: a 2-rank mpi4py ring (tests/python/ring_recv.py, pip's
#      MPICH, Debian's CPython 3.11), its ranks' gcore cores read by
#      `mpidd job --core-dir` with and without --no-python (hyperfine), and
#      the instructions of both (callgrind).
#   2. A whole job: the same ring with N ranks (default 64), every rank
#      stopped with SIGSTOP once all are blocked, so no spinning rank
#      competes for the cores; `mpidd job --pid LAUNCHER` (which also
#      reads every rank's native stack and tries its queues, and holds each
#      rank still while it reads it) against `py-spy dump --nonblocking
#      --pid PID` run on each rank in turn (py-spy from pip, in a virtual
#      environment cached outside the repo).
#
#   bash scripts/bench-python.sh [N]
#
# Needs the Python MPI environment of scripts/python-envs.sh (made when
# missing), gdb, hyperfine and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks="${1:-64}"
for tool in gdb hyperfine valgrind; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing: apt-get install $tool" >&2; exit 1; }
done
venv="${MPIDD_PY_MPICH_VENV:-}"
if [ -z "$venv" ]; then
  bash scripts/python-envs.sh mpich >/dev/null
  venv="${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/py311-mpich"
fi
pyspy_venv="${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/bench-py-spy"
if [ ! -x "$pyspy_venv/bin/py-spy" ]; then
  /usr/bin/python3.11 -m venv "$pyspy_venv"
  "$pyspy_venv/bin/pip" install --quiet "py-spy==0.4.1"
fi
pyspy="$pyspy_venv/bin/py-spy"
cargo build --release --quiet --locked -p mpidd
mpidd="${CARGO_TARGET_DIR:-$PWD/target}/release/mpidd"
work="$(mktemp -d)"
launcher=
stop_job() {
  if [ -n "$launcher" ]; then
    pkill -KILL -f "$work/ring_recv.py" 2>/dev/null || true
    kill "$launcher" 2>/dev/null || true
    wait "$launcher" 2>/dev/null || true
  fi
  launcher=
}
cleanup() { stop_job; rm -rf "$work"; }
trap cleanup EXIT
cp tests/python/ring_recv.py "$work/"

# start N: the ring on N ranks, returning once every rank said READY.
start() {
  : >"$work/out"
  "$venv/bin/mpiexec" -n "$1" "$venv/bin/python" "$work/ring_recv.py" >"$work/out" 2>&1 &
  launcher=$!
  for _ in $(seq 600); do
    [ "$(grep -c READY "$work/out")" -ge "$1" ] && break
    sleep 0.5
  done
  [ "$(grep -c READY "$work/out")" -ge "$1" ] || { echo "error: the ring did not start:" >&2; cat "$work/out" >&2; exit 1; }
  # READY is printed just before the receive: let every rank reach it.
  sleep 2
}

echo "== Python frames per rank: 2 ranks' cores, with and without --no-python"
start 2
mkdir "$work/cores"
for pid in $(awk '/READY/ { print $3 }' "$work/out"); do
  gcore -o "$work/cores/core" "$pid" >/dev/null 2>&1
done
stop_job
"$mpidd" job --core-dir "$work/cores" | grep -m1 "at pass_token at ring_recv.py" >/dev/null ||
  { echo "error: mpidd found no Python frame in the cores" >&2; exit 1; }
hyperfine --warmup 2 --runs 20 --style basic \
  "$mpidd job --core-dir $work/cores" \
  "$mpidd job --core-dir $work/cores --no-python" 2>&1 | grep -E "Time|±|job --core"
for flag in "" "--no-python"; do
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$mpidd" job --core-dir "$work/cores" $flag >/dev/null 2>"$work/cg.err"
  printf "instructions, whole command %-12s %s\n" "${flag:-(python)}" "$(awk '/^summary:/ { print $2 }' "$work/cg")"
done
# The Python part alone, for both ranks: the interpreter's memory read
# (read_python), and that plus the mixing into the stacks and the source
# line (add_python).
for f in read_python add_python; do
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" --toggle-collect="*$f*" "$mpidd" job --core-dir "$work/cores" >/dev/null 2>"$work/cg.err"
  printf "instructions in %-12s %s (2 ranks)\n" "$f" "$(awk '/^summary:/ { print $2 }' "$work/cg")"
done

echo "== $ranks ranks live, stopped: mpidd job against py-spy dump on each rank"
start "$ranks"
pids="$(awk '/READY/ { print $3 }' "$work/out")"
for pid in $pids; do kill -STOP "$pid"; done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s%N)
"$mpidd" job --pid "$launcher" >"$work/job.txt" 2>/dev/null
t1=$(date +%s%N)
python_ranks="$(grep -c "at pass_token at ring_recv.py" "$work/job.txt" || true)"
for pid in $pids; do kill -STOP "$pid" 2>/dev/null || true; done
t2=$(date +%s%N)
# --nonblocking: py-spy reads a rank without suspending it, the only way
# it reads one that is already stopped (its own suspension fails there).
for pid in $pids; do "$pyspy" dump --nonblocking --pid "$pid" >>"$work/pyspy.txt" 2>&1 || echo "py-spy failed on $pid" >&2; done
t3=$(date +%s%N)
pyspy_ranks="$(grep -c "pass_token (ring_recv.py:15)" "$work/pyspy.txt" || true)"
awk -v a=$((t1 - t0)) -v b=$((t3 - t2)) -v n="$ranks" -v m="$python_ranks" -v p="$pyspy_ranks" 'BEGIN {
  printf "mpidd job --pid LAUNCHER: %.2f s for %d ranks (%.1f ms a rank), %d ranks shown at ring_recv.py:15\n", a / 1e9, n, a / 1e6 / n, m
  printf "py-spy dump, rank by rank: %.2f s (%.1f ms a rank), %d ranks shown at ring_recv.py:15\n", b / 1e9, b / 1e6 / n, p
  printf "ratio: %.1fx\n", b / a
}'
