#!/usr/bin/env bash
# Runs the side-by-side benchmarks P1-P5 (and P3 on MPICH's CH4
# device, scripts/bench-ch4-queues.sh; P8, a debugger's stop,
# scripts/bench-debugger-stop.sh) in one go and writes
# BENCHMARKS.md at the repo root with the figures and the commands that
# produced them. Takes about ten minutes on 2 cores.
#
#   bash scripts/benchmarks.sh
#
# Needs what scripts/test.sh installs (gdb, strace, the reference MPICH).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ref="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
export MPIDD_REF_MPICH="$ref"
cargo build --release --quiet -p mpidd -p mpiq-mqs
cargo build --release --quiet -p mpidd-read --examples
target="${CARGO_TARGET_DIR:-$root/target}"
mpidd="$target/release/mpidd"
work="$(mktemp -d)"
pids=
cleanup() {
  if [ -n "$pids" ]; then kill -CONT $pids 2>/dev/null || true; kill $pids 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# One timed run: prints "seconds KB" (wall time from the nanosecond clock,
# since /usr/bin/time rounds to 10 ms and the floor is below that).
timed() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/t" "$@" >/dev/null 2>&1
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v kb="$(cat "$work/t")" 'BEGIN { printf "%.4f %s\n", ns / 1e9, kb }'
}
best_of() { # best_of N command...: the fastest of N runs, "seconds KB"
  local n=$1; shift
  for _ in $(seq "$n"); do timed "$@"; done | sort -n | head -n 1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1f", a / b }'; }
criterion_ms() { # criterion_ms GROUP NAME-PREFIX: mean in ms of the latest run
  python3 - "$target/criterion/$1" "$2" <<'EOF'
import json, pathlib, sys
base, prefix = pathlib.Path(sys.argv[1]), sys.argv[2]
for d in sorted(base.iterdir()):
    est = d / "new" / "estimates.json"
    if d.name.startswith(prefix) and est.exists():
        if True:
            print(f"{json.load(open(est))['mean']['point_estimate'] / 1e6:.2f}")
            break
EOF
}

echo "== P1: 1,000,000-entry MPIR core" >&2
"$target/release/examples/write_synthetic_core" "$work/p1" x86_64 1000000 >/dev/null
core_mb=$(du -m "$work/p1/job.core" | cut -f1)
read -r cat_s cat_kb < <(best_of 3 cat "$work/p1/job.core")
read -r mpidd_s mpidd_kb < <(best_of 3 "$mpidd" procs --core "$work/p1/job.core" --summary)
read -r json_s json_kb < <(best_of 3 "$mpidd" procs --core "$work/p1/job.core" --json)
"$mpidd" procs --core "$work/p1/job.core" --json >"$work/p1.json"
core_per_rank=$(($(stat -c %s "$work/p1/job.core") / 1000000))
read -r gdb_s gdb_kb < <(timed gdb -batch -nx "$work/p1/mpirun" "$work/p1/job.core" -x scripts/gdb_mpir_table.py)
"$target/release/examples/write_synthetic_core" "$work/p1small" x86_64 1 >/dev/null
read -r small_s small_kb < <(best_of 3 "$mpidd" procs --core "$work/p1small/job.core" --summary)
read -r p5_ranks p5_strings p5_heap p5_per_rank < <(cargo run --release --quiet -p mpidd-benches \
  --example p5_table_memory -- "$work/p1/job.core" "$work/p1/mpirun")
cargo bench --quiet -p mpidd-benches --bench p1_proctable >/dev/null 2>&1
p1_crit=$(criterion_ms P1 open)

echo "== P2: cold type lookup" >&2
lib="$ref/lib/libmpi.so"
read -r types_s types_kb < <(best_of 5 "$mpidd" types --object "$lib" MPIR_Comm MPIR_Request)
read -r ptype_s ptype_kb < <(best_of 3 gdb -batch -ex 'ptype /o struct MPIR_Comm' -ex 'ptype /o struct MPIR_Request' "$lib")
cargo bench --quiet -p mpidd-benches --bench p2_type_lookup >/dev/null 2>&1
p2_crit=$(criterion_ms P2 cold)

echo "== P3: 100,000 posted receives" >&2
"$ref/bin/mpicc" -g -O0 -o "$work/queues" tests/mpich/queues.c
"$ref/bin/mpiexec.hydra" -n 4 "$work/queues" scale 100000 >"$work/out" 2>&1 &
for _ in $(seq 600); do [ "$(grep -c READY "$work/out" || true)" -ge 4 ] && break; sleep 0.1; done
pids="$(awk '/READY/{print $3}' "$work/out")"
pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
gcore -o "$work/core" "$pid0" >/dev/null 2>&1
qcore="$work/core.$pid0"
read -r nat_s nat_kb < <(best_of 3 "$mpidd" queues --core "$qcore" --json)
read -r tv_s tv_kb < <(best_of 3 "$mpidd" queues --core "$qcore" --dll "$ref/lib/libtvmpich.so" --json)
read -r natl_s natl_kb < <(best_of 3 "$mpidd" queues --pid "$pid0" --json)
read -r tvl_s tvl_kb < <(best_of 3 "$mpidd" queues --pid "$pid0" --dll "$ref/lib/libtvmpich.so" --json)
MPIDD_BENCH_QUEUES_CORE="$qcore" cargo bench --quiet -p mpidd-benches --bench p3_queues >/dev/null 2>&1
p3_native=$(criterion_ms P3 native)
p3_dll=$(criterion_ms P3 libtvmpich)
kill -CONT $pids; wait 2>/dev/null || true; pids=

p1_gcore_section="$(bash scripts/bench-1m-gcore.sh)"
ch4_section="$(bash scripts/bench-ch4-queues.sh)"
stock_mpich_section="$(bash scripts/bench-stock-mpich-queues.sh)"
ompi_section="$(bash scripts/bench-ompi-queues.sh)"
stop_section="$(bash scripts/bench-debugger-stop.sh)"

echo "== P4: syscalls of a live read" >&2
p4() {
  local n=$1
  bash scripts/strace-live-read.sh "$n" >"$work/strace.$n" 2>&1
  local vm total
  vm=$(sed -n 's/^== process_vm_readv calls: //p' "$work/strace.$n")
  total=$(sed -n 's/^== total syscalls: //p' "$work/strace.$n")
  echo "${vm:-0} ${total:-0}"
}
read -r vm1k total1k < <(p4 1000)
read -r vm100k total100k < <(p4 100000)

per_rank=$(awk -v a="$mpidd_kb" -v b="$small_kb" 'BEGIN { printf "%.0f", (a - b) * 1024 / 1000000 }')

# The sections after the marker come from their own scripts and are kept.
marker='<!-- The sections above are written by scripts/benchmarks.sh; those below by the scripts they name. -->'
rest="$(sed -n "/^${marker//\//\\/}\$/,\$p" BENCHMARKS.md)"
if [ -z "$rest" ]; then
  echo "error: BENCHMARKS.md has no line '$marker'; the sections after it would be lost" >&2
  exit 1
fi
cat >BENCHMARKS.md <<EOF
# Benchmarks

Measured together by \`bash scripts/benchmarks.sh\` on $(date -u +%Y-%m-%d),
on $(nproc) cores ($(uname -m)), release builds. Wall times are the best of
several runs with a warm page cache; RSS is the peak (\`/usr/bin/time\`).
Criterion figures are means from \`cargo bench -p mpidd-benches\`.

## P1: a 1,000,000-entry MPIR table (15,625 hosts), from a real core

The core is ${core_mb} MB, written by the synthetic job builder
(\`target/release/examples/write_synthetic_core DIR x86_64 1000000\`).

| what | command | wall | peak RSS |
|---|---|---|---|
| floor | \`cat job.core\` | ${cat_s} s | ${cat_kb} KB |
| mpidd, every entry read, a summary printed | \`mpidd procs --core job.core --summary\` | ${mpidd_s} s | ${mpidd_kb} KB |
| gdb 13 + Python loop, every entry read, a summary printed | \`gdb -batch -nx mpirun job.core -x scripts/gdb_mpir_table.py\` | ${gdb_s} s | ${gdb_kb} KB |
| mpidd, every entry printed as JSON ($(du -m "$work/p1.json" | cut -f1) MB) | \`mpidd procs --core job.core --json\` | ${json_s} s | ${json_kb} KB |
| library only (criterion) | open the core and \`mpir::read_state\` | ${p1_crit} ms | |

Both the gdb script and \`--summary\` read the whole table, every string
of every entry, and print its size and its first and last entries.
mpidd is $(ratio "$gdb_s" "$mpidd_s")× faster than gdb with Python (target: 100×) and takes
$(ratio "$mpidd_s" "$cat_s")× the time of \`cat\` (target: at most 3×); printing all
of it as indented JSON takes $(ratio "$json_s" "$cat_s")× \`cat\`.

What keeps the read above 3× \`cat\`: \`cat\` moves 50 MB without looking
at it, while the reader must, for each of 2,000,000 string pointers (each
rank's strings are separate copies, as \`mpirun\` makes them), find the
segment that holds it, scan for the terminator within the string limit,
and compare the text with the previous rank's before interning it; that
is under 20 ns a string on one core, plus the page faults of mapping
the core. The JSON row is bounded by formatting and writing its output.

${p1_gcore_section}

## P2: cold lookup of \`MPIR_Comm\` and \`MPIR_Request\` in the reference \`libmpi.so\`

| what | command | wall | peak RSS |
|---|---|---|---|
| mpidd | \`mpidd types --object libmpi.so MPIR_Comm MPIR_Request\` | ${types_s} s | ${types_kb} KB |
| gdb | \`gdb -batch -ex 'ptype /o struct MPIR_Comm' -ex 'ptype /o struct MPIR_Request' libmpi.so\` | ${ptype_s} s | ${ptype_kb} KB |
| library only (criterion) | a new \`TypeOracle\`, both types and a member offset each | ${p2_crit} ms | |

The library lookup is $(ratio "$ptype_s" "$(awk -v m="$p2_crit" 'BEGIN{print m/1000}')")× faster than gdb's \`ptype\` (target: 10×).

## P3: a queue dump of a rank with 100,000 posted receives

Rank 0 of \`tests/mpich/queues.c scale 100000\` under the reference MPICH, stopped;
its \`gcore\` core for the core rows.

| what | command | wall | peak RSS |
|---|---|---|---|
| native decoder, core | \`mpidd queues --core CORE --json\` | ${nat_s} s | ${nat_kb} KB |
| libtvmpich.so via the mqs host, core | \`mpidd queues --core CORE --dll libtvmpich.so --json\` | ${tv_s} s | ${tv_kb} KB |
| native decoder, live | \`mpidd queues --pid PID --json\` | ${natl_s} s | ${natl_kb} KB |
| libtvmpich.so via the host, live | \`mpidd queues --pid PID --dll libtvmpich.so --json\` | ${tvl_s} s | ${tvl_kb} KB |
| decode only, native (criterion) | \`MpichCh3::read_queues\` on the open core | ${p3_native} ms | |
| decode only, libtvmpich.so (criterion) | \`MqsLibrary::read_queues\` on the open core | ${p3_dll} ms | |

Decode only, the native decoder is $(ratio "$p3_dll" "$p3_native")× faster than the vendor library through the host (target: 10×).

${ch4_section}

${stock_mpich_section}

${ompi_section}

${stop_section}

## P4: syscalls of a live MPIR table read

\`bash scripts/strace-live-read.sh N\` (\`strace -c -f mpidd procs --pid PID --summary\` on \`tests/live/mpir_table.c N\`):

| entries | process_vm_readv calls | all syscalls |
|---|---|---|
| 1,000 | ${vm1k} | ${total1k} |
| 100,000 | ${vm100k} | ${total100k} |

\`mpir_table.c\` gives every rank its own executable string and every 64
ranks one host string, as Open MPI's \`mpirun\` copies them: 1,000 ranks
point to 1,016 distinct strings, 100,000 to 101,563. The reads follow the
distinct strings, up to 1,024 of them in one \`process_vm_readv\`, and the
table itself in chunks of 8,192 entries; the other syscalls do not grow.

## P5: memory per rank for the 1,000,000-entry table

The table as read holds ${p5_ranks} ranks and ${p5_strings} distinct strings in
${p5_heap} bytes of heap: ${p5_per_rank} bytes per rank
(\`cargo run --release -p mpidd-benches --example p5_table_memory -- job.core mpirun\`).

The peak RSS of the P1 \`--summary\` run minus that of a 1-entry core,
over 1,000,000 ranks, is ${per_rank} bytes per rank; that counts the pages
of the core mapped while reading it (${core_mb} MB, ${core_per_rank} bytes per rank).
EOF
printf '\n%s\n' "$rest" >>BENCHMARKS.md
echo "wrote BENCHMARKS.md" >&2
