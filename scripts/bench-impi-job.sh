#!/usr/bin/env bash
# A live hung 4-rank Intel MPI job (tests/mpich/hang_ring.c, pip's impi-rt
# on shared memory, at nice 19): the time `mpidd job --pid LAUNCHER` takes
# with queues (the refusal counts the pools' live requests through layouts
# derived from the process), without them (--no-queues), and `mpidd handle`
# of MPI_COMM_WORLD on one rank (layouts derived and checked each run),
# beside gdb printing every rank's stack in turn.
#
#   bash scripts/bench-impi-job.sh
#
# Needs MPIDD_PY_IMPI_VENV (bash scripts/python-envs.sh impi), gcc, Debian's
# MPICH headers (libmpich-dev), gdb and hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${MPIDD_PY_IMPI_VENV:-/root/.cache/mpidd/py311-impi}"
[ -x "$venv/bin/mpiexec.hydra" ] || { echo "error: no Intel MPI venv at $venv: bash scripts/python-envs.sh impi" >&2; exit 1; }
# MPIDD_BIN: an mpidd already built (else the release build is made).
if [ -z "${MPIDD_BIN:-}" ]; then cargo build --release --quiet --locked -p mpidd; fi
mpidd="${MPIDD_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/mpidd}"
work="$(mktemp -d)"
launcher=
cleanup() {
  if [ -n "$launcher" ]; then kill -- "-$launcher" 2>/dev/null || kill "$launcher" 2>/dev/null || true; wait "$launcher" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

gcc -g -O0 -I/usr/include/x86_64-linux-gnu/mpich -o "$work/ring" tests/mpich/hang_ring.c \
  -L"$venv/lib" -lmpi -Wl,-rpath,"$venv/lib"
I_MPI_FABRICS=shm setsid nice -n 19 "$venv/bin/mpiexec.hydra" -n 4 "$work/ring" >"$work/out" 2>"$work/err" &
launcher=$!
for _ in $(seq 120); do
  [ "$(grep -c '^READY' "$work/out" || true)" -ge 4 ] && break
  sleep 1
done
[ "$(grep -c '^READY' "$work/out" || true)" -ge 4 ] || { echo "error: the ranks did not start" >&2; cat "$work/err" >&2; exit 1; }
rank0=$(awk '$1 == "READY" && $2 == 0 { print $3 }' "$work/out")
mpiexec=$launcher
pids=$(awk '/^READY/ { print $3 }' "$work/out")
printf 'for pid in %s; do gdb -batch -nx -p "$pid" -ex "thread apply all bt" </dev/null; done\n' \
  "$(echo $pids)" >"$work/gdb_all.sh"
echo "Intel MPI $(ls "$venv"/lib/python3*/site-packages | sed -n 's/^impi_rt-\(.*\)\.dist-info$/\1/p'), 4 ranks on $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
hyperfine --warmup 1 --runs 10 -N --style basic \
  "$mpidd job --pid $mpiexec" \
  "$mpidd job --pid $mpiexec --no-queues" \
  "$mpidd handle --pid $rank0 --kind comm --value 0x44000000"
hyperfine --runs 3 -N --style basic "bash $work/gdb_all.sh"
