# Shared by the benchmarks that time `mpidd queues` on a core of rank 0 of
# tests/mpich/queues.c in its scale mode (bench-ch4-queues.sh,
# bench-stock-mpich-queues.sh, bench-stock-cold.sh, bench-ucx-unexpected.sh).
# Sourced: it makes the scratch directory `work` and the list `pids` of
# ranks left stopped, and traps EXIT to continue those ranks and remove
# `work`.
#
#   queues_scale_core MPICC MPIEXEC N [CFLAGS...]
#     builds queues.c with MPICC (tests/mpich/queues.c, or `queues_src` when
#     the caller sets it), runs `MPIEXEC -n 4 queues scale N` (MPIEXEC is
#     split into words: a launcher with its options), gcores
#     rank 0 once it has stopped, and ends the job. Sets `core`, `core_mb`
#     and `mapped` (the files rank 0 had mapped, for cold runs).
#   all_rank_cores MPICC MPIEXEC DIR
#     the same job of tests/mpich/queues.c (scale 10, built -g -O0 at
#     DIR/queues), with a gcore core of every rank in DIR/cores; sets
#     `rank0_core`.
#   timed COMMAND...     "seconds KB cpu-seconds" of one run, or "failed"
#   cold_of N COMMAND... the fastest of N runs, each after the page cache of
#                        `cold_files` (an array the caller sets) is dropped
#                        and, when the caller sets `cold_cache`, that layout
#                        cache directory is removed
#   warm_of N COMMAND... the fastest of N runs after one unmeasured

work="$(mktemp -d)"
pids=
bench_cleanup() {
  if [ -n "$pids" ]; then kill -CONT $pids 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap bench_cleanup EXIT

queues_scale_core() {
  local cc=$1 mpiexec=$2 n=$3
  shift 3
  "$cc" "$@" -o "$work/queues" "${queues_src:-tests/mpich/queues.c}"
  # shellcheck disable=SC2086
  $mpiexec -n 4 "$work/queues" scale "$n" >"$work/out" 2>&1 &
  for _ in $(seq 1200); do [ "$(cat "$work/out" 2>/dev/null | grep -c READY)" -ge 4 ] && break; sleep 0.1; done
  pids="$(awk '/READY/{print $3}' "$work/out")"
  local pid0
  pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
  [ -n "$pid0" ] || { cat "$work/out" >&2; echo "error: the job did not start" >&2; exit 1; }
  for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
  mapfile -t mapped < <(awk '$6 ~ /^\// {print $6}' "/proc/$pid0/maps" | sort -u)
  gcore -o "$work/core" "$pid0" >/dev/null 2>&1
  core="$work/core.$pid0"
  core_mb=$(du -m "$core" | cut -f1)
  # The job ends (rank 0 cancels its receives), so that nothing but other
  # processes keeps its files mapped.
  kill -CONT $pids
  wait 2>/dev/null || true
  pids=
}

all_rank_cores() {
  local cc=$1 mpiexec=$2 dir=$3 pid
  mkdir -p "$dir/cores"
  "$cc" -g -O0 -o "$dir/queues" tests/mpich/queues.c
  # shellcheck disable=SC2086
  $mpiexec -n 4 "$dir/queues" scale 10 >"$dir/out" 2>&1 &
  for _ in $(seq 1200); do [ "$(cat "$dir/out" 2>/dev/null | grep -c READY)" -ge 4 ] && break; sleep 0.1; done
  pids="$(awk '/READY/{print $3}' "$dir/out")"
  [ "$(wc -w <<<"$pids")" -eq 4 ] || { cat "$dir/out" >&2; echo "error: the 4-rank job did not start" >&2; exit 1; }
  for pid in $pids; do
    for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid/status" && break; sleep 0.1; done
    gcore -o "$dir/cores/core" "$pid" >/dev/null 2>&1
  done
  rank0_core="$dir/cores/core.$(awk '/READY 0 /{print $3}' "$dir/out")"
  # shellcheck disable=SC2086
  kill -CONT $pids
  wait 2>/dev/null || true
  pids=
}

timed() {
  local start end kb user sys
  start=$(date +%s%N)
  # A command that fails is reported as such, never timed as if it worked.
  if ! /usr/bin/time -f "%M %U %S" -o "$work/t" "$@" >/dev/null 2>"$work/timed.err"; then
    echo "failed: $* ($(tail -n 1 "$work/timed.err"))" >&2
    echo "failed"
    return 0
  fi
  end=$(date +%s%N)
  read -r kb user sys <"$work/t"
  awk -v ns=$((end - start)) -v kb="$kb" -v u="$user" -v s="$sys" \
    'BEGIN { printf "%.4f %s %.2f\n", ns / 1e9, kb, u + s }'
}

# Drops the page cache of the given files.
evict() {
  python3 - "$@" <<'EOF'
import os, sys
for path in sys.argv[1:]:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        continue
    try:
        # Dirty pages (a fresh core's) are written back first, or they stay.
        try:
            os.fsync(fd)
        except OSError:
            pass
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
EOF
}

cold_of() {
  local runs=$1
  shift
  for _ in $(seq "$runs"); do
    if [ -n "${cold_cache:-}" ]; then rm -rf "$cold_cache"; fi
    evict "${cold_files[@]}"
    timed "$@"
  done | sort -n | head -n 1
}

warm_of() {
  local runs=$1
  shift
  timed "$@" >/dev/null
  for _ in $(seq "$runs"); do timed "$@"; done | sort -n | head -n 1
}

#   unexpected_scale_core MPICC LAUNCHER_COMMAND N
#     builds tests/mpich/unexpected_scale.c with MPICC, runs
#     `LAUNCHER_COMMAND... unexpected_scale N` (two ranks), gcores rank 0,
#     where the N messages wait unexpected, once it has stopped, and ends
#     the job. Sets `core`, `core_mb`, `mapped` and `pid0`; leaves the job
#     stopped when `keep_job` is set (its pids in `pids`), for live runs.
unexpected_scale_core() {
  local cc=$1 launcher=$2 n=$3
  "$cc" -O0 -o "$work/unexpected_scale" tests/mpich/unexpected_scale.c
  # shellcheck disable=SC2086
  $launcher "$work/unexpected_scale" "$n" >"$work/out" 2>&1 &
  for _ in $(seq 1800); do [ "$(grep -c READY "$work/out" || true)" -ge 2 ] && break; sleep 0.1; done
  pids="$(awk '/READY/{print $3}' "$work/out")"
  pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
  [ -n "$pid0" ] || { cat "$work/out" >&2; echo "error: the job did not start" >&2; exit 1; }
  for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
  mapfile -t mapped < <(awk '$6 ~ /^\// {print $6}' "/proc/$pid0/maps" | sort -u)
  gcore -o "$work/core" "$pid0" >/dev/null 2>&1
  core="$work/core.$pid0"
  core_mb=$(du -m "$core" | cut -f1)
  if [ -z "${keep_job:-}" ]; then
    kill -CONT $pids
    wait 2>/dev/null || true
    pids=
  fi
}
