#!/usr/bin/env bash
# Makes the cores the library examples and examples/consumer read, from
# jobs of the reference MPICH:
# - the 4-rank job of tests/mpich/queues.c (see the comment at the top of
#   that file for the queues each rank holds), stopped, with a gcore of its
#   launcher (mpiexec.hydra, which holds the MPIR process table) and of
#   rank 0: DIR/launcher.core, DIR/rank0.core, and DIR/ready (the job's
#   own "READY <rank> <pid>" lines, the facts the examples' output is
#   checked against);
# - the 4-rank ring deadlock of tests/mpich/hang_ring.c, hung for real in
#   MPI_Recv, with a gcore of every rank: DIR/ring/core.PID;
# - the queues.c job on Debian's own stripped MPICH: DIR/stock/rank0.core
#   and DIR/stock/rank2.core.
# Both jobs are ended before the script returns.
#
#   bash scripts/reference-cores.sh DIR
#
# Needs MPIDD_REF_MPICH, or builds it with scripts/build-ref-mpich.sh, and
# gcore (Debian gdb).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:?usage: reference-cores.sh DIR}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
ref="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
command -v gcore >/dev/null || { echo "gcore is missing: apt-get install gdb" >&2; exit 1; }
"$ref/bin/mpicc" -g -O0 -o "$dir/queues" tests/mpich/queues.c
"$ref/bin/mpiexec.hydra" -n 4 "$dir/queues" >"$dir/out" 2>&1 &
launcher=$!
pids=""
end_job() {
  for p in $pids; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  kill "$launcher" 2>/dev/null || true
  wait "$launcher" 2>/dev/null || true
}
trap end_job EXIT
for _ in $(seq 1200); do
  [ "$(grep -c '^READY' "$dir/out" || true)" -ge 4 ] && break
  kill -0 "$launcher" 2>/dev/null || { cat "$dir/out" >&2; echo "the job ended early" >&2; exit 1; }
  sleep 0.1
done
[ "$(grep -c '^READY' "$dir/out" || true)" -ge 4 ] || { cat "$dir/out" >&2; echo "no 4 READY lines in 2 minutes" >&2; exit 1; }
grep '^READY' "$dir/out" | sort -n -k2 >"$dir/ready"
pids="$(awk '{print $3}' "$dir/ready")"
for p in $pids; do
  for _ in $(seq 600); do grep -q 'State:.*T' "/proc/$p/status" && break; sleep 0.1; done
done
pid0="$(awk '$2 == 0 {print $3}' "$dir/ready")"
gcore -o "$dir/core" "$launcher" >/dev/null 2>&1
gcore -o "$dir/core" "$pid0" >/dev/null 2>&1
mv "$dir/core.$launcher" "$dir/launcher.core"
mv "$dir/core.$pid0" "$dir/rank0.core"
end_job

# The ring: each rank prints READY just before it blocks in MPI_Recv.
mkdir -p "$dir/ring"
"$ref/bin/mpicc" -g -O0 -I tests/mpich -o "$dir/ring/hang_ring" tests/mpich/hang_ring.c
"$ref/bin/mpiexec.hydra" -n 4 "$dir/ring/hang_ring" >"$dir/ring/out" 2>&1 &
launcher=$!
pids=""
for _ in $(seq 1200); do
  [ "$(grep -c '^READY' "$dir/ring/out" || true)" -ge 4 ] && break
  kill -0 "$launcher" 2>/dev/null || { cat "$dir/ring/out" >&2; echo "the ring ended early" >&2; exit 1; }
  sleep 0.1
done
[ "$(grep -c '^READY' "$dir/ring/out" || true)" -ge 4 ] || { cat "$dir/ring/out" >&2; echo "no 4 READY lines in 2 minutes" >&2; exit 1; }
pids="$(awk '/^READY/{print $3}' "$dir/ring/out")"
# From READY to blocked inside MPI_Recv.
sleep 1
for p in $pids; do
  gcore -o "$dir/ring/core" "$p" >/dev/null 2>&1
done
end_job

# The same queues.c on Debian's own stripped MPICH, built by mpicc.mpich
# without -g and run by mpiexec.mpich: DIR/stock/rank0.core and
# DIR/stock/rank2.core, read through the profile mpidd ships for it.
mkdir -p "$dir/stock"
for tool in mpicc.mpich mpiexec.mpich; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install mpich libmpich-dev" >&2; exit 1; }
done
mpicc.mpich -O0 -o "$dir/stock/queues" tests/mpich/queues.c
mpiexec.mpich -n 4 "$dir/stock/queues" >"$dir/stock/out" 2>&1 &
launcher=$!
pids=""
for _ in $(seq 1200); do
  [ "$(grep -c '^READY' "$dir/stock/out" || true)" -ge 4 ] && break
  kill -0 "$launcher" 2>/dev/null || { cat "$dir/stock/out" >&2; echo "the stock job ended early" >&2; exit 1; }
  sleep 0.1
done
[ "$(grep -c '^READY' "$dir/stock/out" || true)" -ge 4 ] || { cat "$dir/stock/out" >&2; echo "no 4 READY lines in 2 minutes" >&2; exit 1; }
pids="$(awk '/^READY/{print $3}' "$dir/stock/out")"
for rank in 0 2; do
  p="$(awk -v r="$rank" '$1 == "READY" && $2 == r {print $3}' "$dir/stock/out")"
  for _ in $(seq 600); do grep -q 'State:.*T' "/proc/$p/status" && break; sleep 0.1; done
  gcore -o "$dir/stock/core" "$p" >/dev/null 2>&1
  mv "$dir/stock/core.$p" "$dir/stock/rank$rank.core"
done
end_job
trap - EXIT
echo "$dir"
