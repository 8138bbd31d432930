#!/usr/bin/env bash
# Times one rank's message-queue dump with N posted receives (default
# 100,000): the native MPICH decoder, MPICH's libtvmpich.so through mpidd's
# mqs host, and our libmpiq_mqs.so through the same host, on the same gcore core of the reference-MPICH job
# tests/mpich/queues.c, and live on the stopped process. Prints wall time
# and peak RSS of each.
#
#   bash scripts/bench-queues.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
ref="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
cargo build --release --quiet -p mpidd -p mpiq-mqs
mpidd="$PWD/target/release/mpidd"
ours="$PWD/target/release/libmpiq_mqs.so"
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
gcore -o "$work/core" "$pid0" >/dev/null 2>&1
core="$work/core.$pid0"
echo "rank 0 with $n posted receives; core $(du -h "$core" | cut -f1)"
run() {
  local label="$1"; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >"$work/json"
  local ops
  ops=$(grep -c '"desired_tag"' "$work/json" || true)
  printf '%-34s %6s s %8s KB  (%s operations)\n' "$label" $(cat "$work/t") "$ops"
}
for i in 1 2 3; do
  run "native, core" "$mpidd" queues --core "$core" --json
  run "libtvmpich.so via host, core" "$mpidd" queues --core "$core" --dll "$ref/lib/libtvmpich.so" --json
  run "libmpiq_mqs.so via host, core" "$mpidd" queues --core "$core" --dll "$ours" --json
done
run "native, live (stopped)" "$mpidd" queues --pid "$pid0" --json
run "libtvmpich.so via host, live" "$mpidd" queues --pid "$pid0" --dll "$ref/lib/libtvmpich.so" --json
run "libmpiq_mqs.so via host, live" "$mpidd" queues --pid "$pid0" --dll "$ours" --json
