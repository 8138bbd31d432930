#!/usr/bin/env bash
# The waits a user still has, side by side in one run, as BENCHMARKS.md's
# section "Speed where users wait" shows them:
#
#   1. the first read of a build: cold, warm, --no-cache and the vendor
#      library on the reference MPICH's small and 100,000-receive cores
#      (scripts/bench-cold-read.sh), then Debian's stripped MPICH and Open
#      MPI through their profiles (scripts/bench-stock-cold.sh);
#   2. live ranks stopped first: `mpidd job --pid` on 2, 16 and 64 ranks
#      with the split of a rank's reading, beside gdb attaching to each
#      (scripts/bench-live-split.sh);
#   3. `mpidd job` on the 4 rank cores of a reference-MPICH job, beside
#      gdb's stacks of the same cores (scripts/bench-job-cores.sh);
#   4. `mpidd job` on 1 to 10,000 synthetic rank cores: wall, CPU, system
#      calls and peak RSS, beside gdb projected (scripts/bench-many-cores.sh).
#
#   bash scripts/bench-speed.sh
#
# Each part prints its own table with the command behind each figure; this
# script only runs them in turn, after noting the machine's load. Needs
# what scripts/test.sh installs, and hyperfine, strace and valgrind
# (installed here when missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/debian-source.sh
. scripts/lib/debian-source.sh
ensure_packages hyperfine strace valgrind gdb
export MPIDD_REF_MPICH="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
cargo build --release --quiet --locked -p mpidd

part() {
  local title=$1
  shift
  echo
  echo "### $title"
  echo
  echo "\`$*\` ($(date -u +%H:%M) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
  echo
  "$@"
}

echo "Measured on $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m)."
part "The first read of a build: the reference MPICH" bash scripts/bench-cold-read.sh 10
part "The first read of a build: Debian's stripped MPICH and Open MPI" bash scripts/bench-stock-cold.sh 100000
part "The job on 4 rank cores, beside gdb" bash scripts/bench-job-cores.sh 10
part "Live ranks stopped first" bash scripts/bench-live-split.sh 2 16 64
part "Many rank cores" bash scripts/bench-many-cores.sh 10 1 100 1000 10000
