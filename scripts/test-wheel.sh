#!/usr/bin/env bash
# Checks the Python wheel as a user gets it: builds it (scripts/build-wheel.sh),
# installs the x86_64 wheel file into a fresh virtual environment (no package
# index), and runs that environment's `mpidd`: --version, the demo, and
# `mpidd job` on a real hung job, a ring of 4 ranks of Debian's Open MPI
# (tests/mpich/hang_ring.c) read through its mpirun, whose verdict must be the
# ring's deadlock cycle. The job is killed at the end, on failure too, and
# none of its ranks may be left stopped or traced by the read.
#
# When build-wheel.sh also made an aarch64 wheel, pip installs it for that
# platform into a directory, and qemu-aarch64 runs its `mpidd`: --version,
# the demo, and `mpidd job` on the x86_64 ring's gcore cores (another CPU's
# real job), whose verdict must name the same cycle.
#
#   bash scripts/test-wheel.sh   # 5 to 10 minutes from a cold target dir, 15 s warm
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "test-wheel: FAILED: $*" >&2
  exit 1
}
need() {
  command -v "$1" >/dev/null || die "$1 is missing: $2"
}

MPIRUN=mpirun.openmpi
MPICC=mpicc.openmpi
need python3 "apt-get install python3 python3-venv"
need "$MPIRUN" "apt-get install openmpi-bin (scripts/test.sh installs it)"
need "$MPICC" "apt-get install libopenmpi-dev (scripts/test.sh installs it)"
need timeout "apt-get install coreutils"
need pgrep "apt-get install procps"

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || die "no version in the workspace's Cargo.toml"

build_out="$(bash scripts/build-wheel.sh)" || die "scripts/build-wheel.sh failed (see above)"
wheel_dir="$(tail -n 1 <<<"$build_out")"
shopt -s nullglob
x86_wheels=("$wheel_dir"/mpidd-"$version"-py3-none-*manylinux_2_17_x86_64*.whl)
arm_wheels=("$wheel_dir"/mpidd-"$version"-py3-none-*manylinux_2_17_aarch64*.whl)
shopt -u nullglob
((${#x86_wheels[@]} == 1)) ||
  die "expected one manylinux_2_17 x86_64 wheel of mpidd $version in $wheel_dir, found: ${x86_wheels[*]:-none}"

tmp="$(mktemp -d)"
mpirun_pid=""
reaper_pid=""
rank_pids=()
# Ends the job whatever happened: the ranks with SIGKILL (a stopped one
# ignores SIGTERM), then mpirun, which exits by itself once its ranks are
# gone. mpirun runs under scripts/lib/reaping-parent.py, which reaps the
# ranks mpirun leaves behind and exits when the last one is gone.
cleanup() {
  local pids=("${rank_pids[@]}")
  if [ -n "$mpirun_pid" ]; then
    # Ranks not ready yet are mpirun's children all the same.
    mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "$mpirun_pid" || true)
    pids+=("$mpirun_pid")
  fi
  for pid in "${pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [ -n "$reaper_pid" ]; then
    for _ in $(seq 100); do
      kill -0 "$reaper_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$reaper_pid" 2>/dev/null &&
      echo "test-wheel: warning: processes of the job are still there under $reaper_pid: $(pgrep -a -P "$reaper_pid")" >&2
    wait "$reaper_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== test-wheel: a fresh virtual environment with ${x86_wheels[0]##*/}"
python3 -m venv "$tmp/venv" ||
  die "python3 -m venv failed: apt-get install python3-venv (Debian's python3 needs it)"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
  "${x86_wheels[0]}" || die "pip could not install ${x86_wheels[0]}"
# As a user runs it: the environment's bin first on PATH. The layout cache
# and the demo's files go to the scratch directory, not to the user's.
export PATH="$tmp/venv/bin:$PATH" MPIDD_CACHE_DIR="$tmp/cache" TMPDIR="$tmp"
[ "$(command -v mpidd)" = "$tmp/venv/bin/mpidd" ] ||
  die "mpidd on PATH is $(command -v mpidd), not the virtual environment's"

got="$(mpidd --version)"
[ "$got" = "mpidd $version" ] || die "mpidd --version printed '$got', not 'mpidd $version'"
echo "   $got"

mpidd demo >"$tmp/demo.txt" 2>&1 || { cat "$tmp/demo.txt" >&2; die "mpidd demo failed"; }
grep -q '^DEADLOCK: ' "$tmp/demo.txt" || { cat "$tmp/demo.txt" >&2; die "mpidd demo gave no deadlock verdict"; }
echo "   mpidd demo: $(grep '^DEADLOCK: ' "$tmp/demo.txt")"

echo "== test-wheel: mpidd job on a hung ring of 4 Open MPI ranks"
"$MPICC" -g -O0 -o "$tmp/hang_ring" tests/mpich/hang_ring.c ||
  die "$MPICC could not build tests/mpich/hang_ring.c"
python3 scripts/lib/reaping-parent.py "$tmp/mpirun.pid" \
  "$MPIRUN" --allow-run-as-root --oversubscribe --mca btl self,vader -n 4 "$tmp/hang_ring" \
  >"$tmp/ready.txt" 2>"$tmp/mpirun.err" </dev/null &
reaper_pid=$!
for _ in $(seq 100); do
  [ -s "$tmp/mpirun.pid" ] && break
  sleep 0.1
done
mpirun_pid="$(cat "$tmp/mpirun.pid" 2>/dev/null)" || { cat "$tmp/mpirun.err" >&2; die "$MPIRUN did not start"; }
# Each rank prints "READY <rank> <pid>" just before it blocks for good.
for _ in $(seq 1200); do
  [ "$(grep -c '^READY ' "$tmp/ready.txt")" -ge 4 ] && break
  kill -0 "$mpirun_pid" 2>/dev/null || { cat "$tmp/mpirun.err" >&2; die "$MPIRUN exited before its 4 ranks were ready"; }
  sleep 0.1
done
mapfile -t rank_pids < <(awk '/^READY /{print $3}' "$tmp/ready.txt")
((${#rank_pids[@]} == 4)) || { cat "$tmp/mpirun.err" >&2; die "the ring's 4 ranks were not ready within 2 minutes"; }

status=0
timeout 300 mpidd job --pid "$mpirun_pid" >"$tmp/job.txt" 2>"$tmp/job.err" || status=$?
# The read must let every rank go: running (sleeping in MPI), not stopped,
# not traced.
for pid in "${rank_pids[@]}"; do
  state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" || die "rank $pid is gone after mpidd job"
  tracer="$(awk '/^TracerPid:/{print $2}' "/proc/$pid/status")"
  case "$state" in T | t) die "rank $pid is left stopped (state $state) after mpidd job" ;; esac
  [ "$tracer" = 0 ] || die "rank $pid is still traced by $tracer after mpidd job"
done
if ((status != 0)) || ! grep -q '^DEADLOCK: ' "$tmp/job.txt"; then
  cat "$tmp/job.txt" "$tmp/job.err" >&2
  die "mpidd job --pid $mpirun_pid (exit $status) gave no deadlock verdict"
fi
# hang_ring.c: every rank receives from its left neighbour (rank - 1 mod 4)
# first, so each waits on that one: 0 on 3, 3 on 2, 2 on 1, 1 on 0.
grep -q 'deadlock: ranks 0 → 3 → 2 → 1 → 0 wait on each other in a cycle' "$tmp/job.txt" || {
  cat "$tmp/job.txt" >&2
  die "mpidd job did not name the ring's cycle 0 → 3 → 2 → 1 → 0"
}
echo "   $(grep '^DEADLOCK: ' "$tmp/job.txt")"
# The same ranks as gcore cores, for the aarch64 build to read below.
if ((${#arm_wheels[@]} == 1)); then
  need gcore "apt-get install gdb (scripts/test.sh installs it)"
  mkdir -p "$tmp/cores"
  for pid in "${rank_pids[@]}"; do
    gcore -o "$tmp/cores/core" "$pid" >/dev/null 2>&1 || die "gcore of rank $pid failed"
  done
fi

if ((${#arm_wheels[@]} == 1)); then
  echo "== test-wheel: ${arm_wheels[0]##*/} under qemu-aarch64"
  need qemu-aarch64 "apt-get install qemu-user (scripts/test.sh installs it)"
  [ -d /usr/aarch64-linux-gnu/lib ] ||
    die "aarch64's C library is missing: apt-get install libc6-dev-arm64-cross (scripts/test.sh installs it)"
  # pip installs a wheel of another platform only into a directory of its own.
  python3 -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
    --only-binary=:all: --platform manylinux_2_17_aarch64 --target "$tmp/aarch64" \
    "${arm_wheels[0]}" || die "pip could not install ${arm_wheels[0]} for aarch64"
  arm=(qemu-aarch64 -L /usr/aarch64-linux-gnu "$tmp/aarch64/bin/mpidd")
  got="$("${arm[@]}" --version)" || die "the aarch64 mpidd did not run under qemu-aarch64"
  [ "$got" = "mpidd $version" ] || die "the aarch64 mpidd --version printed '$got', not 'mpidd $version'"
  "${arm[@]}" demo >"$tmp/demo-aarch64.txt" 2>&1 ||
    { cat "$tmp/demo-aarch64.txt" >&2; die "the aarch64 mpidd demo failed"; }
  # The demo reads cores by their own ABI, never the host's: the aarch64
  # build must reach the same verdict as the x86_64 one.
  [ "$(grep '^DEADLOCK: ' "$tmp/demo-aarch64.txt")" = "$(grep '^DEADLOCK: ' "$tmp/demo.txt")" ] ||
    { cat "$tmp/demo-aarch64.txt" >&2; die "the aarch64 demo's verdict differs from the x86_64 one"; }
  echo "   $got; demo: $(grep '^DEADLOCK: ' "$tmp/demo-aarch64.txt")"
  # A real job from another CPU: the x86_64 ring's cores, read by the
  # aarch64 build through the cores' own ABI, with the same cycle.
  "${arm[@]}" job --core-dir "$tmp/cores" >"$tmp/job-aarch64.txt" 2>"$tmp/job-aarch64.err" ||
    { cat "$tmp/job-aarch64.txt" "$tmp/job-aarch64.err" >&2; die "the aarch64 mpidd job --core-dir failed"; }
  grep -q 'deadlock: ranks 0 → 3 → 2 → 1 → 0 wait on each other in a cycle' "$tmp/job-aarch64.txt" || {
    cat "$tmp/job-aarch64.txt" >&2
    die "the aarch64 mpidd job did not name the ring's cycle 0 → 3 → 2 → 1 → 0 in its cores"
  }
  echo "   the ring's cores, read by the aarch64 build: $(grep '^DEADLOCK: ' "$tmp/job-aarch64.txt")"
else
  echo "== test-wheel: no aarch64 wheel to test (build-wheel.sh said why)"
fi
echo "test-wheel: passed"
