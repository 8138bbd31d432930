#!/usr/bin/env bash
# One rank with N unexpected messages (default 100,000) waiting in UCX's
# worker, on each MPI that runs over UCX here: Debian's MPICH (ch4:ucx,
# stripped, read through the shipped MPICH and UCX profiles) and Debian's
# Open MPI with its UCX PML (read through the shipped Open MPI and UCX
# profiles). tests/mpich/unexpected_scale.c: rank 1 sends rank 0 N
# one-int messages that no receive matches. Times the whole `mpidd queues`
# command on rank 0, live (`--pid`, the job stopped) and on its gcore core,
# cold and warm; checks first that all N are listed. Prints the
# BENCHMARKS.md section on standard output; scripts/benchmarks.sh
# includes it.
#
#   bash scripts/bench-ucx-unexpected.sh [N]
#
# Cold: the page cache of the core (for the core runs), of mpidd and of
# every file rank 0 maps is dropped before each run (posix_fadvise); pages
# other processes keep mapped stay. Warm: the best of 5 after one
# unmeasured run. The layout cache is not used (--no-cache), as the
# layouts come from shipped profiles.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-100000}"
for tool in /usr/bin/mpicc.mpich /usr/bin/mpiexec.mpich /usr/bin/mpicc.openmpi /usr/bin/mpirun.openmpi; do
  [ -x "$tool" ] || {
    echo "error: $tool is missing: apt-get install mpich libmpich-dev openmpi-bin libopenmpi-dev" >&2
    exit 1
  }
done
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --quiet -p mpidd
mpidd="$target/release/mpidd"
# shellcheck source=lib/bench-queues-core.sh
. scripts/lib/bench-queues-core.sh

# How many unexpected messages with tags 2000.. from world rank 1 the
# JSON lists, under their communicator.
listed() {
  python3 - "$1" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))
n = 0
for c in q["communicators"]:
    for op in c.get("unexpected_messages", {}).get("operations", []):
        if op.get("desired_tag", -1) >= 2000 and op.get("desired_global_rank") == 1:
            n += 1
print(n)
PY
}

rows=()
measure() {
  local name=$1 cc=$2 launcher=$3
  echo "== $name: $n unexpected messages" >&2
  keep_job=1 unexpected_scale_core "$cc" "$launcher" "$n"
  "$mpidd" queues --no-cache --pid "$pid0" --json >"$work/live.json"
  local live_listed
  live_listed=$(listed "$work/live.json")
  [ "$live_listed" -ge "$n" ] || { echo "error: $name: $live_listed of $n listed live" >&2; exit 1; }
  cold_files=("$mpidd" "${mapped[@]}")
  read -r lc_s lc_kb lc_cpu < <(cold_of 3 "$mpidd" queues --no-cache --pid "$pid0" --json)
  read -r lw_s lw_kb lw_cpu < <(warm_of 5 "$mpidd" queues --no-cache --pid "$pid0" --json)
  kill -CONT $pids
  wait 2>/dev/null || true
  pids=
  "$mpidd" queues --no-cache --core "$core" --json >"$work/core.json"
  local core_listed
  core_listed=$(listed "$work/core.json")
  [ "$core_listed" -ge "$n" ] || { echo "error: $name: $core_listed of $n listed from the core" >&2; exit 1; }
  cold_files=("$mpidd" "$core" "${mapped[@]}")
  read -r cc_s cc_kb cc_cpu < <(cold_of 3 "$mpidd" queues --no-cache --core "$core" --json)
  read -r cw_s cw_kb cw_cpu < <(warm_of 5 "$mpidd" queues --no-cache --core "$core" --json)
  rows+=("| $name, live | \`mpidd queues --no-cache --pid RANK0 --json\` | ${lc_s} s / ${lc_cpu} s | ${lw_s} s / ${lw_cpu} s | ${lw_kb} KB |")
  rows+=("| $name, core (${core_mb} MB) | \`mpidd queues --no-cache --core CORE --json\` | ${cc_s} s / ${cc_cpu} s | ${cw_s} s / ${cw_cpu} s | ${cw_kb} KB |")
  rm -f "$core"
}

measure "Debian's MPICH 4.0.2 (ch4:ucx)" mpicc.mpich "mpiexec.mpich -n 2"
measure "Debian's Open MPI 4.1.4 (UCX PML)" mpicc.openmpi \
  "mpirun.openmpi --oversubscribe --allow-run-as-root -n 2 --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --mca btl ^uct,openib,ofi"
load="$(cut -d' ' -f1-3 /proc/loadavg)"

cat <<EOF
## UCX: a rank with ${n} unexpected messages in UCX's worker

Rank 0 of \`tests/mpich/unexpected_scale.c ${n}\` (two ranks), built
without \`-g\` by each MPI's own \`mpicc\`: rank 1 has sent it ${n}
one-int messages (tags 2000..) that no receive matches, and they wait in
the UCP worker's unexpected list. Each MPI is Debian's stripped build,
read through its shipped profile, and UCX (Debian's stripped libucp
1.13.1) through UCX's own profile; every message is listed (checked
before timing). Measured by \`bash scripts/bench-ucx-unexpected.sh\` on
$(date -u +%Y-%m-%d), $(nproc) cores, load average ${load} at the end.
Live: the job stopped by itself (SIGSTOP), read by \`--pid\`. Cold: the page
cache of \`mpidd\`, of the core and of every file the rank mapped was
dropped before each run; best of 3. Warm: best of 5. Wall and CPU (user
+ system) time of the run with the best wall time. The layout cache is not
used (\`--no-cache\`).

| what | command | cold: wall / CPU | warm: wall / CPU | peak RSS (warm) |
|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")
EOF
