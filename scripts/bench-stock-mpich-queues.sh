#!/usr/bin/env bash
# P3 on Debian's own MPICH: one rank's message-queue dump with N posted
# receives (default 100,000) that never match, from a gcore core of a job
# of Debian's stripped libmpich12 (ch4:ucx), built by mpicc.mpich without
# -g and run by mpiexec.mpich (tests/mpich/queues.c scale N: rank 0 posts N
# MPI_Irecv from rank 1, which sends nothing). The layouts and hidden
# globals come from the shipped profile (docs/stock-mpich.md), and each
# receive is decoded through UCX's request. Times the whole `mpidd queues
# --core` command cold and warm, and the decode alone (criterion,
# benches/benches/p3_ch4_queues.rs, which takes the profile's layouts when
# the core's own DWARF has none). Prints the BENCHMARKS.md section on
# standard output; scripts/benchmarks.sh includes it.
#
#   bash scripts/bench-stock-mpich-queues.sh [N]
#
# Cold: before each cold run, the page cache of the core, of the mpidd
# binary and of every file the rank had mapped (its libraries and their
# debug info) is dropped with posix_fadvise(POSIX_FADV_DONTNEED), after the
# job has ended; pages other processes keep mapped (libc) stay. Warm: the
# best of 5 runs after one unmeasured run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-100000}"
for tool in /usr/bin/mpicc.mpich /usr/bin/mpiexec.mpich; do
  [ -x "$tool" ] || { echo "error: $tool is missing: apt-get install mpich libmpich-dev" >&2; exit 1; }
done
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --quiet -p mpidd
mpidd="$target/release/mpidd"
# shellcheck source=lib/bench-queues-core.sh
. scripts/lib/bench-queues-core.sh

echo "== P3 on Debian's MPICH: $n posted receives" >&2
queues_scale_core mpicc.mpich mpiexec.mpich "$n" -O0
cold_files=("$mpidd" "$core" "${mapped[@]}")

"$mpidd" queues --core "$core" --json >"$work/q.json"
received=$(python3 - "$work/q.json" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
# Decoded whole through UCX's request: under their communicator, none in
# the notes.
print(sum(len(c["pending_receives"].get("operations", [])) for c in q["communicators"]))
EOF
)
[ "$received" -ge "$n" ] || { echo "error: the decoder found $received of $n receives" >&2; exit 1; }
json_mb=$(du -m "$work/q.json" | cut -f1)

read -r cold_s cold_kb cold_cpu < <(cold_of 3 "$mpidd" queues --core "$core" --json)
read -r warm_s warm_kb warm_cpu < <(warm_of 5 "$mpidd" queues --core "$core" --json)
load="$(cut -d' ' -f1-3 /proc/loadavg)"
MPIDD_BENCH_CH4_QUEUES_CORE="$core" cargo bench --quiet -p mpidd-benches --bench p3_ch4_queues >"$work/bench" 2>&1 ||
  { cat "$work/bench" >&2; exit 1; }
crit_ms=$(python3 - "$target/criterion/P3-CH4" <<'EOF'
import json, pathlib, sys
for d in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    est = d / "new" / "estimates.json"
    if d.name.startswith("native") and est.exists():
        print(f"{json.load(open(est))['mean']['point_estimate'] / 1e6:.2f}")
        break
EOF
)

cat <<EOF
## P3 on Debian's own MPICH: a queue dump of a rank with ${n} posted receives

Rank 0 of \`tests/mpich/queues.c scale ${n}\` built by Debian's
\`mpicc.mpich\` (no \`-g\`) and run by \`mpiexec.mpich\` on Debian's stripped
\`libmpich12\` (ch4:ucx, no debugger support): ${n} \`MPI_Irecv\` from rank 1,
which sends nothing; its \`gcore\` core (${core_mb} MB). The layouts and the
hidden globals come from the shipped profile (docs/stock-mpich.md). Every
receive is handed to UCX, so the decoder finds each among the request
pools' \`MPIR_Request\`s and decodes it through UCX's request: ${received}
placed under their communicator, ${json_mb} MB of JSON. Measured by
\`bash scripts/bench-stock-mpich-queues.sh\` on $(date -u +%Y-%m-%d),
$(nproc) cores, load average ${load} at the end. Cold: the page cache of the
core, of \`mpidd\` and of every file the rank mapped was dropped before each
run (\`posix_fadvise\`, after the job ended); best of 3. Warm: best of 5.
Wall and CPU (user + system) time of the run with the best wall time.

| what | command | cold: wall / CPU | warm: wall / CPU | peak RSS (warm) |
|---|---|---|---|---|
| native decoder, core | \`mpidd queues --core CORE --json\` | ${cold_s} s / ${cold_cpu} s | ${warm_s} s / ${warm_cpu} s | ${warm_kb} KB |
| decode only, native (criterion) | \`MpichCh4::read_queues\` on the open core, with the profile's layouts (\`MPIDD_BENCH_CH4_QUEUES_CORE=CORE cargo bench -p mpidd-benches --bench p3_ch4_queues\`) | | ${crit_ms} ms | |

No vendor library reads this build (libtvmpich.so reads CH3's fields),
and gdb has no types for it: the figures stand alone.
EOF
