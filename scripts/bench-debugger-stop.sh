#!/usr/bin/env bash
# P8: what a debugger that embeds the crates pays per stop of an MPI rank to
# read its message queues. For each MPI (the reference MPICH with CH3 and
# debug info; Debian 12's stripped MPICH 4.0.2, ch4:ucx, through its shipped
# profile; Debian 12's stripped Open MPI 4.1.4, ob1, through its shipped
# profile), starts a 4-rank job of tests/mpich/queues.c or
# tests/openmpi/queues.c in `scale N` mode (rank 0 posts N receives from
# rank 1, which sends nothing, and stops itself with SIGSTOP), runs the
# criterion benchmark benches/benches/p8_debugger_stop.rs on rank 0 (first
# stop, later stop, read only), and times the whole `mpidd queues --pid PID
# --json` command (best of 3) beside it. Every job is continued and ends,
# whatever happens. Prints the BENCHMARKS.md section on standard output;
# scripts/benchmarks.sh includes it.
#
#   bash scripts/bench-debugger-stop.sh [N]     (default N = 300)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-300}"
for tool in /usr/bin/mpicc.mpich /usr/bin/mpiexec.mpich /usr/bin/mpicc.openmpi /usr/bin/mpirun.openmpi; do
  [ -x "$tool" ] || { echo "error: $tool is missing: apt-get install mpich libmpich-dev openmpi-bin libopenmpi-dev" >&2; exit 1; }
done
ref="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
cargo build --release --quiet --locked -p mpidd
cargo bench --quiet --locked -p mpidd-benches --bench p8_debugger_stop --no-run >/dev/null
mpidd="$target_dir/release/mpidd"
work="$(mktemp -d)"
pids=
launcher=
cleanup() {
  if [ -n "$pids" ]; then kill -CONT $pids 2>/dev/null || true; fi
  [ -z "$launcher" ] || wait "$launcher" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Seconds of one run of a command (wall, from the nanosecond clock).
timed() {
  local start end
  start=$(date +%s%N)
  "$@" >"$work/json" 2>"$work/err" ||
    { echo "bench-debugger-stop.sh: failed: $*" >&2; cat "$work/err" >&2; return 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.1f\n", ns / 1e6 }'
}
best_of() { # best_of N command...: milliseconds of the fastest run
  local k=$1
  shift
  for _ in $(seq "$k"); do timed "$@"; done | sort -n | head -n 1
}
criterion_ms() { # criterion_ms NAME-PREFIX: mean in ms of the latest P8 run
  python3 - "$target_dir/criterion/P8" "$1" <<'PY'
import json, pathlib, sys
base, prefix = pathlib.Path(sys.argv[1]), sys.argv[2]
for d in sorted(base.iterdir()):
    est = d / "new" / "estimates.json"
    if d.name.startswith(prefix) and est.exists():
        print(f"{json.load(open(est))['mean']['point_estimate'] / 1e6:.2f}")
        break
PY
}

rows=
# measure LABEL CC SOURCE CFLAGS LAUNCHER...: one MPI's row.
measure() {
  local label=$1 cc=$2 source=$3 cflags=$4
  shift 4
  echo "== P8: $label, $n posted receives" >&2
  # shellcheck disable=SC2086
  "$cc" $cflags -o "$work/queues" "$source"
  "$@" -n 4 "$work/queues" scale "$n" >"$work/out" 2>&1 &
  launcher=$!
  for _ in $(seq 1200); do [ "$(grep -c READY "$work/out" || true)" -ge 4 ] && break; sleep 0.1; done
  pids="$(awk '/READY/{print $3}' "$work/out")"
  local pid0
  pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
  [ -n "$pid0" ] || { cat "$work/out" >&2; echo "error: the $label job did not start" >&2; exit 1; }
  for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
  grep -q 'State:.*T' "/proc/$pid0/status" || { echo "error: rank 0 ($pid0) did not stop" >&2; exit 1; }
  rm -rf "$target_dir/criterion/P8"
  MPIDD_BENCH_STOP_PID="$pid0" MPIDD_BENCH_STOP_RECEIVES="$n" \
    cargo bench --quiet --locked -p mpidd-benches --bench p8_debugger_stop >"$work/criterion" 2>&1 ||
    { cat "$work/criterion" >&2; exit 1; }
  local provenance first later read own cli ops
  provenance="$(sed -n 's/^P8 on //p' "$work/criterion" | head -n 1)"
  first=$(criterion_ms first)
  later=$(criterion_ms later)
  read=$(criterion_ms read)
  own=$(criterion_ms target)
  cli=$(best_of 3 "$mpidd" queues --pid "$pid0" --json)
  ops=$(grep -c '"desired_tag"' "$work/json" || true)
  [ "$ops" -ge "$n" ] || { echo "error: mpidd queues found $ops of $n receives" >&2; exit 1; }
  kill -CONT $pids
  wait "$launcher" 2>/dev/null || true
  pids=
  launcher=
  rows+="| ${label} | ${first} ms | ${later} ms | ${read} ms | ${own} ms | ${cli} ms |"$'\n'
  echo "   $provenance" >&2
  provenances+="- ${label}: ${provenance}"$'\n'
}

provenances=
measure "reference MPICH 4.0.2, CH3, debug info" "$ref/bin/mpicc" tests/mpich/queues.c "-g -O0" \
  "$ref/bin/mpiexec.hydra"
measure "Debian 12's MPICH 4.0.2, ch4:ucx, stripped" mpicc.mpich tests/mpich/queues.c "-O0" \
  mpiexec.mpich
measure "Debian 12's Open MPI 4.1.4, ob1, stripped" mpicc.openmpi tests/openmpi/queues.c "-O0" \
  mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader
load="$(cut -d' ' -f1-3 /proc/loadavg)"

cat <<MD
## P8: a debugger's stop: ${n} posted receives, first stop and later stops

Rank 0 of \`tests/mpich/queues.c scale ${n}\` (MPICH) or
\`tests/openmpi/queues.c scale ${n}\` (Open MPI), 4 ranks, stopped by itself
(SIGSTOP) with ${n} receives from rank 1 that nothing matches. What a
debugger that embeds the crates pays to show them
(\`MPIDD_BENCH_STOP_PID=PID MPIDD_BENCH_STOP_RECEIVES=${n} cargo bench -p
mpidd-benches --bench p8_debugger_stop\`, criterion means):

- first stop: a new \`Session\`, \`LiveTarget::open(pid)\` and
  \`session.read_queues(&target, target.symbols())\`: cold within the
  process (the OS page cache is warm);
- later stop: one \`Session\` and one \`LiveTarget\` kept across stops,
  \`target.refresh()\` then \`session.read_queues\`: the per-stop cost
  (goal: at most 5 ms);
- read only: the decoder built once (\`detect(..)?.into_decoder()\`), then
  its \`read_queues\`: the share of reading the rank's bytes, with the
  layouts it asks answered from a table, as a session keeps them;
- read only, the target's layouts: the same decoder over
  \`LiveTarget\`'s own layouts (its DWARF, then the shipped profiles,
  asked at every question), as a caller of \`detect\` alone has them;
- the whole command \`mpidd queues --pid PID --json\` (a new process each
  time: symbols, layouts, reading, JSON), best of 3.

Each reading is checked to hold all ${n} receives before it is timed.
Measured by \`bash scripts/bench-debugger-stop.sh ${n}\` on
$(date -u +%Y-%m-%d), $(nproc) cores ($(uname -m)), load average ${load}
at the end (the machine is shared).

| MPI | first stop | later stop | read only | read only, the target's layouts | \`mpidd queues --pid\` |
|---|---|---|---|---|---|
${rows}
Where the layouts came from:

${provenances}
MD
