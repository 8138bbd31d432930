#!/usr/bin/env bash
# `mpidd job` on many synthetic rank cores, side by side in one run: a
# hung ring of N synthetic MPICH CH3 ranks written as real cores (one
# shared `app`, `libmpi.so.12` and `libc.so.6`, one core per rank, and the
# layout profile of that libmpi), read back with
# `mpidd job --core-dir DIR --profile FILE`. For each N it prints
#
#   - wall time, mean ± sd of RUNS runs (hyperfine), and the user and
#     system CPU time hyperfine measured;
#   - the system calls of one run, every thread (strace -c -f);
#   - peak RSS (/usr/bin/time -v), over N and beyond the 1-rank run;
#
# then the N = 1,000 run against N = 1 (the goal: at most 20 times), and
# gdb's stacks alone (`gdb -batch -ex 'thread apply all bt'`) over 10 of
# the 1,000 cores, projected to 1,000 (the goal: mpidd at least 1,000
# times faster).
#
#   bash scripts/bench-many-cores.sh [RUNS] [N...]
#
# RUNS defaults to 10 (at most 3 for N >= 10,000, whose run takes seconds);
# N defaults to 1 100 1000 10000. The cores of 10,000 ranks take 2.4 GB
# (each rank's MPI_COMM_WORLD lists every rank), under $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
shift || true
sizes=("$@")
[ "${#sizes[@]}" -gt 0 ] || sizes=(1 100 1000 10000)

need() {
  command -v "$1" >/dev/null 2>&1 || {
    echo "error: $1 is missing: apt-get install $2" >&2
    exit 1
  }
}
need hyperfine hyperfine
need strace strace
need gdb gdb
need python3 python3
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }

cargo build --release --quiet -p mpidd --bin mpidd
cargo build --release --quiet -p mpidd-benches --example write_job_cores
target="${CARGO_TARGET_DIR:-$PWD/target}"
mpidd="$target/release/mpidd"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %-20s %-10s %-10s %-10s %-9s %-14s\n' \
  N "wall (mean ± sd)" user system syscalls "peak RSS" "RSS per rank"

rss1=""
declare -A wall
for n in "${sizes[@]}"; do
  dir="$work/syn$n"
  profile="$("$target/release/examples/write_job_cores" "$dir" "$n")"
  cmd=("$mpidd" job --core-dir "$dir" --profile "$profile")
  "${cmd[@]}" >"$work/out" || { echo "failed: ${cmd[*]}" >&2; exit 1; }
  r="$runs"
  [ "$n" -ge 10000 ] && [ "$r" -gt 3 ] && r=3
  hyperfine -N --warmup 1 --runs "$r" --export-json "$work/h.json" "${cmd[*]}" \
    >"$work/hyperfine" 2>&1 || { cat "$work/hyperfine" >&2; exit 1; }
  read -r mean sd user sys < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r["mean"], r["stddev"] or 0, r["user"], r["system"])' "$work/h.json")
  wall[$n]="$mean"
  strace -c -f -o "$work/strace" "${cmd[@]}" >/dev/null
  # "100.00 SECONDS USECS/CALL CALLS [ERRORS] total"
  calls="$(awk '$NF == "total" {print $4}' "$work/strace")"
  /usr/bin/time -v "${cmd[@]}" 2>"$work/time" >/dev/null
  kb="$(awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$work/time")"
  [ -n "$rss1" ] || rss1="$kb"
  per="$(python3 -c '
import sys
n, kb, kb1 = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
over = f"{(kb - kb1) / (n - 1):.1f} KiB beyond 1" if n > 1 else "-"
print(f"{kb / n:.1f} KiB; {over}")' "$n" "$kb" "$rss1")"
  printf '%-7s %-20s %-10s %-10s %-10s %-9s %s\n' "$n" \
    "$(python3 -c "import sys; print(f'{float(sys.argv[1])*1e3:.1f} ± {float(sys.argv[2])*1e3:.1f} ms')" "$mean" "$sd")" \
    "$(python3 -c "import sys; print(f'{float(sys.argv[1])*1e3:.1f} ms')" "$user")" \
    "$(python3 -c "import sys; print(f'{float(sys.argv[1])*1e3:.1f} ms')" "$sys")" \
    "$calls" "$((kb / 1024)) MiB" "$per"
  echo "        command: ${cmd[*]}"
done

if [ -n "${wall[1]:-}" ] && [ -n "${wall[1000]:-}" ]; then
  python3 -c "import sys; print(f'1,000 ranks against 1: {float(sys.argv[2])/float(sys.argv[1]):.1f} times (goal: at most 20)')" \
    "${wall[1]}" "${wall[1000]}"
fi

if [ -d "$work/syn1000" ]; then
  sample=10
  start=$(date +%s.%N)
  for core in $(ls "$work"/syn1000/core.* | head -n "$sample"); do
    gdb -batch -ex 'thread apply all bt' "$work/syn1000/app" "$core" >"$work/gdb.out" 2>&1
  done
  end=$(date +%s.%N)
  python3 -c '
import sys
s, e, k, ours = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
per = (e - s) / k
print(f"gdb -batch -ex \"thread apply all bt\" APP CORE over {k} of the 1,000 cores: "
      f"{per:.3f} s per core, {per * 1000:.0f} s for 1,000 (projected)")
print(f"mpidd job on 1,000 against gdb projected: {per * 1000 / ours:.0f} times (goal: at least 1,000)")' \
    "$start" "$end" "$sample" "${wall[1000]}"
fi
