#!/usr/bin/env bash
# The first read of a build against the vendor library, side by side: on a
# gcore core of rank 0 of the reference MPICH's tests/mpich/queues.c job
# (small queues) and of the same job with 100,000 posted receives,
#
#   cold     `mpidd queues --core C --json`, empty layout cache
#   warm     the same, the cache filled by the run before
#   no-cache the same with --no-cache (DWARF every time)
#   dll      the same through the reference libtvmpich.so (--dll)
#
# as wall seconds (hyperfine's mean and min over RUNS runs, each cold run
# after `rm -rf` of the cache; /usr/bin/time's best of RUNS when hyperfine
# is missing), then each command's instruction count (callgrind) and
# system calls (strace -c), which do not depend on the machine's load.
#
#   bash scripts/bench-cold-read.sh [RUNS]          (RUNS: default 10)
#
# Needs MPIDD_REF_MPICH (or builds it with scripts/build-ref-mpich.sh),
# gcore (gdb), and for the counts valgrind and strace; hyperfine is
# optional. Set MPIDD_BENCH_NO_COUNTS=1 to skip the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
ref="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
command -v gcore >/dev/null || { echo "gcore is missing: apt-get install gdb" >&2; exit 1; }
cargo build --release --quiet -p mpidd
target="${CARGO_TARGET_DIR:-$PWD/target}"
mpidd="$target/release/mpidd"
work="$(mktemp -d)"
export MPIDD_CACHE_DIR="$work/cache"
pids=""
trap 'kill -CONT $pids 2>/dev/null || true; kill -KILL $pids 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

# A 4-rank job of tests/mpich/queues.c ARGS... whose ranks stop
# themselves; leaves a gcore core of rank 0 at $work/NAME and ends the job.
make_core() {
  local name="$1"; shift
  "$ref/bin/mpiexec.hydra" -n 4 "$work/queues" "$@" >"$work/job.out" 2>&1 &
  for _ in $(seq 600); do
    [ "$(grep -c READY "$work/job.out" || true)" -ge 4 ] && break
    sleep 0.1
  done
  [ "$(grep -c READY "$work/job.out" || true)" -ge 4 ] || { cat "$work/job.out" >&2; echo "the job did not get ready" >&2; exit 1; }
  pids="$(awk '/READY/{print $3}' "$work/job.out")"
  local pid0
  pid0="$(awk '/READY 0 /{print $3}' "$work/job.out")"
  for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
  gcore -o "$work/core" "$pid0" >/dev/null 2>&1
  mv "$work/core.$pid0" "$work/$name"
  kill -CONT $pids 2>/dev/null || true
  kill -KILL $pids 2>/dev/null || true
  wait 2>/dev/null || true
  pids=""
}

"$ref/bin/mpicc" -g -O0 -o "$work/queues" tests/mpich/queues.c
make_core small.core
make_core scale.core scale 100000

dll="$ref/lib/libtvmpich.so"
cold() { rm -rf "$MPIDD_CACHE_DIR"; "$mpidd" queues --core "$1" --json >/dev/null; }
declare -A cmd
for c in small scale; do
  core="$work/$c.core"
  cmd[$c.cold]="rm -rf $MPIDD_CACHE_DIR && $mpidd queues --core $core --json"
  cmd[$c.warm]="$mpidd queues --core $core --json"
  cmd[$c.nocache]="$mpidd queues --core $core --json --no-cache"
  cmd[$c.dll]="$mpidd queues --core $core --json --dll $dll"
done

best_of() {
  local best=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e" -o "$work/t" bash -c "$1" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
    local t; t="$(cat "$work/t")"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best="$t"; fi
  done
  echo "$best"
}

for c in small scale; do
  core="$work/$c.core"
  echo "== $c: rank 0 core of tests/mpich/queues.c $([ $c = scale ] && echo 'scale 100000') ($(du -h "$core" | cut -f1))"
  # The warm rows need an entry: one cold run first.
  cold "$core"
  if command -v hyperfine >/dev/null; then
    # The cache is emptied before each cold run by --prepare, which is not
    # timed; the warm runs then find the entry the last cold run wrote.
    hyperfine --style basic --runs "$runs" --warmup 1 --export-markdown "$work/$c.cold.md" \
      --prepare "rm -rf $MPIDD_CACHE_DIR" \
      -n "cold (empty layout cache)" "${cmd[$c.warm]} >/dev/null" >/dev/null
    hyperfine --style basic --runs "$runs" --warmup 1 --export-markdown "$work/$c.md" \
      -n "warm (layout cache filled)" "${cmd[$c.warm]} >/dev/null" \
      -n "no-cache (DWARF every time)" "${cmd[$c.nocache]} >/dev/null" \
      -n "dll (libtvmpich.so)" "${cmd[$c.dll]} >/dev/null" >/dev/null
    cat "$work/$c.cold.md"
    tail -n +3 "$work/$c.md"
  else
    for row in cold warm nocache dll; do
      [ "$row" = warm ] && cold "$core"
      printf '  %-10s best of %s: %s s\n' "$row" "$runs" "$(best_of "${cmd[$c.$row]}")"
    done
  fi
done

[ "${MPIDD_BENCH_NO_COUNTS:-0}" = 1 ] && exit 0
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
command -v strace >/dev/null || { echo "strace is missing: apt-get install strace" >&2; exit 1; }
echo "== instructions (callgrind) and system calls (strace -c -f), one run each"
printf '%-8s %-8s %16s %10s\n' core row instructions syscalls
for c in small scale; do
  for row in cold warm nocache dll; do
    [ "$row" = cold ] && rm -rf "$MPIDD_CACHE_DIR"
    set -- ${cmd[$c.$row]#rm -rf $MPIDD_CACHE_DIR && }
    valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$@" >/dev/null 2>"$work/vg"
    ir="$(grep -o 'Collected : [0-9]*' "$work/vg" | awk '{print $3}')"
    [ "$row" = cold ] && rm -rf "$MPIDD_CACHE_DIR"
    strace -c -f -o "$work/st" "$@" >/dev/null 2>&1
    calls="$(awk '/ total$/{print $4}' "$work/st")"
    printf '%-8s %-8s %16s %10s\n' "$c" "$row" "$ir" "$calls"
  done
done
