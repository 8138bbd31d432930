#!/usr/bin/env bash
# P3 on CH4: one rank's message-queue dump with N posted receives (default
# 100,000) that never match, from a gcore core of the reference MPICH built
# with ch4:ucx (tests/mpich/queues.c scale N: rank 0 posts N MPI_Irecv from
# rank 1, which sends nothing). Times the whole `mpidd queues --core`
# command cold and warm, the same through our libmpiq_mqs.so under mpidd's
# mqs host, and the decode alone (criterion, benches/benches/p3_ch4_queues.rs).
# Prints the BENCHMARKS.md section on standard output; scripts/benchmarks.sh
# includes it.
#
#   bash scripts/bench-ch4-queues.sh [N]
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
ref="$(bash scripts/build-ref-mpich.sh ch4 | tail -n 1)"
export MPIDD_REF_MPICH_CH4="$ref"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --quiet -p mpidd -p mpiq-mqs
mpidd="$target/release/mpidd"
ours="$target/release/libmpiq_mqs.so"
# shellcheck source=lib/bench-queues-core.sh
. scripts/lib/bench-queues-core.sh

echo "== P3 on CH4: $n posted receives" >&2
queues_scale_core "$ref/bin/mpicc" "$ref/bin/mpiexec.hydra" "$n" -g -O0
cold_files=("$mpidd" "$ours" "$core" "${mapped[@]}")

"$mpidd" queues --core "$core" --json >"$work/q.json"
received=$(python3 - "$work/q.json" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
placed = sum(len(c["pending_receives"].get("operations", [])) for c in q["communicators"])
notes = sum(1 for d in q["diagnostics"] if d.startswith("a pending receive posted to UCX"))
print(placed + notes)
EOF
)
[ "$received" -ge "$n" ] || { echo "error: the decoder found $received of $n receives" >&2; exit 1; }
json_mb=$(du -m "$work/q.json" | cut -f1)

read -r cold_s cold_kb cold_cpu < <(cold_of 3 "$mpidd" queues --core "$core" --json)
read -r warm_s warm_kb warm_cpu < <(warm_of 5 "$mpidd" queues --core "$core" --json)
read -r dcold_s dcold_kb dcold_cpu < <(cold_of 3 "$mpidd" queues --core "$core" --dll "$ours" --json)
read -r dwarm_s dwarm_kb dwarm_cpu < <(warm_of 5 "$mpidd" queues --core "$core" --dll "$ours" --json)
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
## P3 on CH4: a queue dump of a rank with ${n} posted receives

Rank 0 of \`tests/mpich/queues.c scale ${n}\` under the reference MPICH
built with \`ch4:ucx\` (\`scripts/build-ref-mpich.sh ch4\`): ${n}
\`MPI_Irecv\` from rank 1, which sends nothing; its \`gcore\` core
(${core_mb} MB). Every receive is handed to UCX, so the decoder finds them
among the request pools' \`MPIR_Request\`s and, without UCX's types,
reports each in the notes (docs/ch4.md): ${received} found, ${json_mb} MB
of JSON. Measured by \`bash scripts/bench-ch4-queues.sh\` on $(date -u +%Y-%m-%d),
$(nproc) cores, load average ${load} at the end. Cold: the page cache of the
core, of \`mpidd\` and of every file the rank mapped was dropped before each
run (\`posix_fadvise\`, after the job ended); best of 3. Warm: best of 5.
Wall and CPU (user + system) time of the run with the best wall time.

| what | command | cold: wall / CPU | warm: wall / CPU | peak RSS (warm) |
|---|---|---|---|---|
| native decoder, core | \`mpidd queues --core CORE --json\` | ${cold_s} s / ${cold_cpu} s | ${warm_s} s / ${warm_cpu} s | ${warm_kb} KB |
| libmpiq_mqs.so via the mqs host, core | \`mpidd queues --core CORE --dll libmpiq_mqs.so --json\` | ${dcold_s} s / ${dcold_cpu} s | ${dwarm_s} s / ${dwarm_cpu} s | ${dwarm_kb} KB |
| decode only, native (criterion) | \`MpichCh4::read_queues\` on the open core (\`MPIDD_BENCH_CH4_QUEUES_CORE=CORE cargo bench -p mpidd-benches --bench p3_ch4_queues\`) | | ${crit_ms} ms | |
The decode alone is a fraction of the command. The rest is opening the
core, the DWARF lookups (among them that of UCX's \`ucp_request_t\`, which
no object defines, so every object with debug info, libc's too, is
scanned before the decoder reports it missing), and writing one note per
receive. Through our library the notes reach mpidd's host by
\`mqs_dprints\`, which keeps the first 256. The decode is slower than CH3's (P3) because each receive is
found by reading every request object of the pools rather than by walking
a list, and each gets a note.
EOF
