#!/usr/bin/env bash
# P1 on a real gcore core: a C starter (benches/live/proctable_starter.c)
# fills a 1,000,000-entry MPIR_proctable whose entries all point at 17
# string literals in its .rodata (16 host names, one executable), as a
# launcher of one program on 16 nodes does. gcore leaves that read-only
# file mapping out of the core, so the strings come from the executable
# file. Times `mpidd procs --core --summary` next to gdb reading every
# entry's strings with a Python loop (scripts/gdb_mpir_table.py), in one
# run, and `cat` of the core (the floor). Prints the BENCHMARKS.md section
# on standard output; scripts/benchmarks.sh includes it.
#
#   bash scripts/bench-1m-gcore.sh [N]
#
# MPIDD_BASELINE=/path/to/an/older/mpidd adds a row for that binary on
# the same core.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-1000000}"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --quiet -p mpidd
mpidd="$target/release/mpidd"
work="$(mktemp -d)"
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

timed() { # timed command...: "seconds KB" of one run
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/t" "$@" >/dev/null 2>&1
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v kb="$(cat "$work/t")" 'BEGIN { printf "%.4f %s\n", ns / 1e9, kb }'
}
best_of() { # best_of N command...: the fastest of N runs
  local k=$1; shift
  for _ in $(seq "$k"); do timed "$@"; done | sort -n | head -n 1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1f", a / b }'; }

echo "== P1 on a gcore core of a C starter, $n entries" >&2
gcc -O1 -g -o "$work/starter" benches/live/proctable_starter.c
"$work/starter" "$n" >"$work/out" &
pid=$!
for _ in $(seq 300); do grep -q '^ready$' "$work/out" && break; sleep 0.1; done
grep -q '^ready$' "$work/out" || { echo "the starter did not get ready" >&2; exit 1; }
gcore -o "$work/core" "$pid" >/dev/null 2>&1
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
core="$work/core.$(ls "$work" | sed -n 's/^core\.//p' | head -n 1)"
core_mb=$(du -m "$core" | cut -f1)
# Both readers must agree on the table before either is timed.
"$mpidd" procs --core "$core" --summary >"$work/mpidd.out"
gdb -batch -nx "$work/starter" "$core" -x scripts/gdb_mpir_table.py >"$work/gdb.out" 2>&1
grep -q "ranks on 16 hosts" "$work/mpidd.out" || { cat "$work/mpidd.out" >&2; exit 1; }
tail -n 1 "$work/gdb.out" | grep -q "^$n " || { tail -n 3 "$work/gdb.out" >&2; exit 1; }

read -r cat_s cat_kb < <(best_of 5 cat "$core")
read -r mpidd_s mpidd_kb < <(best_of 5 "$mpidd" procs --core "$core" --summary)
read -r gdb_s gdb_kb < <(timed gdb -batch -nx "$work/starter" "$core" -x scripts/gdb_mpir_table.py)
baseline_row=
if [ -n "${MPIDD_BASELINE:-}" ]; then
  read -r base_s base_kb < <(best_of 5 "$MPIDD_BASELINE" procs --core "$core" --summary)
  baseline_row="
| the same with \`\$MPIDD_BASELINE\` ($(ratio "$gdb_s" "$base_s")× gdb) | \`mpidd procs --core core --summary\` | ${base_s} s | ${base_kb} KB |"
fi

cat <<MD
### P1 on a real gcore core of a C starter

\`benches/live/proctable_starter.c $n\`, dumped with \`gcore\` (${core_mb} MB):
$n entries pointing at 17 string literals in the starter's \`.rodata\`,
which the core leaves out, so they are read from the executable file.
Command: \`bash scripts/bench-1m-gcore.sh\` (one run for all rows; the
load average was $(cut -d' ' -f1 /proc/loadavg) when it ended).

| what | command | wall | peak RSS |
|---|---|---|---|
| floor | \`cat core\` | ${cat_s} s | ${cat_kb} KB |
| mpidd, every entry read, a summary printed | \`mpidd procs --core core --summary\` | ${mpidd_s} s | ${mpidd_kb} KB |${baseline_row}
| gdb 13 + Python loop, every entry read, a summary printed | \`gdb -batch -nx starter core -x scripts/gdb_mpir_table.py\` | ${gdb_s} s | ${gdb_kb} KB |

mpidd is $(ratio "$gdb_s" "$mpidd_s")× faster than gdb (target: 100×) and takes
$(ratio "$mpidd_s" "$cat_s")× the time of \`cat\`. Strings the core does not hold are read once
per address (the table reader remembers up to 65,536 addresses, and
checks each field's last one first), so the 2,000,000 pointers cost 17
string reads.
MD
