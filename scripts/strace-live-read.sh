#!/usr/bin/env bash
# Shows what a live read of a 1000-entry MPIR table costs in syscalls:
# builds mpidd (release), starts tests/live/mpir_table.c with N entries
# (default 1000), prints `strace -c -f` of `mpidd procs --pid PID --summary`
# (which reads every entry and its strings but prints a few lines, so that
# the count is of reading, not of writing the output),
# and kills the program. Needs gcc and strace (scripts/test.sh installs
# them).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}

for tool in gcc strace; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing: apt-get install $tool" >&2; exit 1; }
done

cargo build --release --locked --quiet -p mpidd
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

gcc -O1 -g -o "$work/mpir_table" tests/live/mpir_table.c
mkfifo "$work/out"
"$work/mpir_table" "$n" >"$work/out" &
pid=$!
# Everything it prints up to "ready" is the table; then it waits.
exec 3<"$work/out"
while IFS= read -r line <&3; do
  [ "$line" = ready ] && break
done

mpidd="${CARGO_TARGET_DIR:-target}/release/mpidd"
echo "== strace -c -f target/release/mpidd procs --pid $pid --summary  ($n entries)"
strace -c -f -o "$work/summary" "$mpidd" procs --pid "$pid" --summary >/dev/null
cat "$work/summary"
echo "== process_vm_readv calls: $(awk '$NF == "process_vm_readv" {print $4}' "$work/summary")"
echo "== total syscalls: $(awk '$NF == "total" {print $4}' "$work/summary")"
