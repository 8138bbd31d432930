#!/usr/bin/env bash
# bench-ompi-queues.sh [N]: P6 of BENCHMARKS.md. Decodes one Open MPI rank
# with N (default 100,000) posted receives that nothing matches, natively
# and through Open MPI's own libompi_dbg_msgq.so under mpidd's mqs host,
# from the same gcore core of rank 0 of tests/openmpi/queues.c (`scale N`)
# run by the reference Open MPI (scripts/build-ref-ompi.sh), and live on the
# stopped rank. Times the whole command cold (page cache dropped before the
# run, as root) and warm (best of 3), then the decode alone with criterion
# (benches/benches/p6_ompi_queues.rs). Prints the section as Markdown on
# standard output; scripts/benchmarks.sh puts it into BENCHMARKS.md.
#
# Needs what scripts/test.sh installs (gdb for gcore) and root for the cold
# runs (without it they are skipped, and say so).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-100000}"
ref="$(bash scripts/build-ref-ompi.sh | tail -n 1)"
export MPIDD_REF_OMPI="$ref"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
cargo build --release --quiet --locked -p mpidd
mpidd="$target_dir/release/mpidd"
dll="$ref/lib/openmpi/libompi_dbg_msgq.so"
work="$(mktemp -d)"
pids=
mpirun_pid=
cleanup() {
  if [ -n "$pids" ]; then kill -CONT $pids 2>/dev/null || true; fi
  [ -z "$mpirun_pid" ] || wait "$mpirun_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# "seconds KB" of one run (wall time from the nanosecond clock).
timed() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/t" "$@" >"$work/json" 2>"$work/err" ||
    { echo "bench-ompi-queues.sh: failed: $*" >&2; cat "$work/err" >&2; return 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v kb="$(cat "$work/t")" 'BEGIN { printf "%.4f %s\n", ns / 1e9, kb }'
}
best_of() { # best_of N command...
  local k=$1; shift
  for _ in $(seq "$k"); do timed "$@"; done | sort -n | head -n 1
}
can_drop=no
if [ -w /proc/sys/vm/drop_caches ]; then can_drop=yes; fi
cold() { # one run after the page cache is dropped
  if [ "$can_drop" = yes ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
    timed "$@"
  else
    echo "n/a n/a"
  fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) { print "n/a" } else { printf "%.1f", a / b } }'; }
posted() { # posted receives in the last JSON output
  grep -c '"desired_tag"' "$work/json" || true
}

echo "== P6: an Open MPI rank with $n posted receives" >&2
"$ref/bin/mpicc" -g -O0 -o "$work/queues" tests/openmpi/queues.c
"$ref/bin/mpirun" --allow-run-as-root --oversubscribe --mca btl self,vader -n 4 \
  "$work/queues" scale "$n" >"$work/out" 2>&1 &
mpirun_pid=$!
for _ in $(seq 1200); do [ "$(grep -c READY "$work/out" || true)" -ge 4 ] && break; sleep 0.1; done
[ "$(grep -c READY "$work/out" || true)" -ge 4 ] ||
  { echo "bench-ompi-queues.sh: the job did not get ready:" >&2; cat "$work/out" >&2; exit 1; }
pids="$(awk '/READY/{print $3}' "$work/out")"
pid0="$(awk '/READY 0 /{print $3}' "$work/out")"
for _ in $(seq 100); do grep -q 'State:.*T' "/proc/$pid0/status" && break; sleep 0.1; done
gcore -o "$work/core" "$pid0" >/dev/null 2>&1
core="$work/core.$pid0"
core_mb=$(du -m "$core" | cut -f1)

read -r nat_cold nat_cold_kb < <(cold "$mpidd" queues --core "$core" --json)
read -r nat_s nat_kb < <(best_of 3 "$mpidd" queues --core "$core" --json)
nat_ops=$(posted)
read -r dll_cold dll_cold_kb < <(cold "$mpidd" queues --core "$core" --dll "$dll" --json)
read -r dll_s dll_kb < <(best_of 3 "$mpidd" queues --core "$core" --dll "$dll" --json)
dll_ops=$(posted)
read -r natl_s natl_kb < <(best_of 3 "$mpidd" queues --pid "$pid0" --json)
read -r dlll_s dlll_kb < <(best_of 3 "$mpidd" queues --pid "$pid0" --dll "$dll" --json)
[ "$nat_ops" -ge "$n" ] && [ "$dll_ops" -ge "$n" ] ||
  { echo "bench-ompi-queues.sh: the readings hold $nat_ops and $dll_ops operations, not $n" >&2; exit 1; }

MPIDD_BENCH_OMPI_QUEUES_CORE="$core" cargo bench --quiet --locked -p mpidd-benches \
  --bench p6_ompi_queues >"$work/criterion" 2>&1 ||
  { cat "$work/criterion" >&2; exit 1; }
criterion_ms() { # mean in ms of the latest run of GROUP/NAME-PREFIX
  python3 - "$target_dir/criterion/$1" "$2" <<'PY'
import json, pathlib, sys
base, prefix = pathlib.Path(sys.argv[1]), sys.argv[2]
for d in sorted(base.iterdir()):
    est = d / "new" / "estimates.json"
    if d.name.startswith(prefix) and est.exists():
        print(f"{json.load(open(est))['mean']['point_estimate'] / 1e6:.2f}")
        break
PY
}
p6_native=$(criterion_ms P6 native)
p6_dll=$(criterion_ms P6 libompi_dbg_msgq)
kill -CONT $pids
wait "$mpirun_pid" 2>/dev/null || true
pids=
mpirun_pid=

cold_note=""
[ "$can_drop" = yes ] || cold_note=" (cold runs need root to drop the page cache: not measured)"
cat <<MD
## P6: an Open MPI rank with $(printf "%'d" "$n") posted receives

Rank 0 of \`tests/openmpi/queues.c scale $n\` under the reference Open MPI
4.1.4 (\`scripts/build-ref-ompi.sh\`, ob1 over \`self,vader\`), stopped; its
\`gcore\` core (${core_mb} MB) for the core rows. Open MPI's own
\`libompi_dbg_msgq.so\` of that build runs under mpidd's mqs host. Cold: one
run right after \`echo 3 > /proc/sys/vm/drop_caches\`${cold_note}; warm: the
best of 3. Both readings hold all $(printf "%'d" "$n") receives.

| what | command | cold | warm | peak RSS (warm) |
|---|---|---|---|---|
| native decoder, core | \`mpidd queues --core CORE --json\` | ${nat_cold} s | ${nat_s} s | ${nat_kb} KB |
| libompi_dbg_msgq.so via the mqs host, core | \`mpidd queues --core CORE --dll libompi_dbg_msgq.so --json\` | ${dll_cold} s | ${dll_s} s | ${dll_kb} KB |
| native decoder, live | \`mpidd queues --pid PID --json\` | | ${natl_s} s | ${natl_kb} KB |
| libompi_dbg_msgq.so via the host, live | \`mpidd queues --pid PID --dll libompi_dbg_msgq.so --json\` | | ${dlll_s} s | ${dlll_kb} KB |
| decode only, native (criterion) | \`OmpiOb1::read_queues\` on the open core | | ${p6_native} ms | |
| decode only, libompi_dbg_msgq.so (criterion) | \`MqsLibrary::read_queues\` on the open core | | ${p6_dll} ms | |

The whole command from the core is $(ratio "$dll_cold" "$nat_cold")× faster cold and
$(ratio "$dll_s" "$nat_s")× faster warm than through the vendor library, $(ratio "$dlll_s" "$natl_s")× live;
decode only, $(ratio "$p6_dll" "$p6_native")× (target: 10×).
MD
