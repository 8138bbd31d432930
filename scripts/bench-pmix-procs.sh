#!/usr/bin/env bash
# How long `mpidd procs --pid PRTERUN` takes to get an Open MPI 5 job's
# process table through its launcher's PMIx server (a helper process,
# the launcher's libpmix loaded, one tool session), and `mpidd job --pid
# PRTERUN --no-queues` to find and read the ranks, for jobs of 4 and 16
# ranks (or the sizes given) of tests/openmpi5/recv_ring.c on pip's Open
# MPI 5.0.11. Then the system calls of one `procs` (strace -c -f).
#
#   bash scripts/bench-pmix-procs.sh [N...]
#
# Needs hyperfine, strace and MPIDD_PY_OMPI5_VENV (bash scripts/python-envs.sh
# ompi5 makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${MPIDD_PY_OMPI5_VENV:-$HOME/.cache/mpidd/py311-ompi5}"
[ -x "$venv/bin/mpirun" ] || { echo "error: no Open MPI 5 venv at $venv: run bash scripts/python-envs.sh ompi5" >&2; exit 1; }
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4 16)
cargo build --release --quiet --locked -p mpidd
mpidd="${CARGO_TARGET_DIR:-$PWD/target}/release/mpidd"
work="$(mktemp -d)"
launcher=
stop_job() {
  if [ -n "$launcher" ]; then
    kill -TERM "$launcher" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$launcher" 2>/dev/null || true
    wait "$launcher" 2>/dev/null || true
    launcher=
  fi
}
trap 'stop_job; rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR="$work"
"$venv/bin/mpicc" -O1 -o "$work/recv_ring" tests/openmpi5/recv_ring.c
for n in "${sizes[@]}"; do
  : >"$work/out"
  setsid nice -n 19 "$venv/bin/mpirun" --oversubscribe --mca btl self,sm -n "$n" "$work/recv_ring" >"$work/out" 2>"$work/err" &
  launcher=$!
  for _ in $(seq 300); do
    [ "$(grep -c '^READY' "$work/out" || true)" -ge "$n" ] && break
    sleep 1
  done
  [ "$(grep -c '^READY' "$work/out" || true)" -ge "$n" ] || { echo "error: $n ranks did not start" >&2; cat "$work/err" >&2; exit 1; }
  prterun=$(awk '/^READY/ { print $3; exit }' "$work/out" | xargs -I{} awk '{ print $4 }' /proc/{}/stat)
  echo "== $n ranks, prterun $prterun"
  hyperfine --warmup 2 --runs 20 \
    "$mpidd procs --pid $prterun" \
    "$mpidd job --pid $prterun --no-queues"
  strace -c -f -o "$work/strace" "$mpidd" procs --pid "$prterun" >/dev/null
  echo "system calls of one procs (mpidd and its helper):"
  tail -n 3 "$work/strace"
  stop_job
done
