#!/usr/bin/env bash
# Runs the programs a library user starts from on real cores, and checks
# what they print against what the jobs are known to hold (the comments at
# the top of tests/mpich/queues.c and tests/mpich/hang_ring.c, and the
# jobs' own READY lines), not against an earlier output:
# - the front-page examples of the library crates (each front page includes
#   its example file, so the docs show what runs here);
# - examples/consumer, a package outside the workspace that depends on the
#   crates by path, as a debugger would.
# The cores come from scripts/reference-cores.sh and are removed at the end.
#
#   bash scripts/check-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The README shows the consumer's program: it must be this one.
python3 - <<'PY'
readme = open("README.md").read()
program = open("examples/consumer/src/main.rs").read()
if "```rust\n" + program + "```" not in readme:
    raise SystemExit("README.md's library example differs from examples/consumer/src/main.rs")
PY
export MPIDD_REF_MPICH="${MPIDD_REF_MPICH:-$(bash scripts/build-ref-mpich.sh | tail -n 1)}"
cores="$(bash scripts/reference-cores.sh "$work/cores" | tail -n 1)"
target="$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
cargo build --quiet --locked -p mpidd-read -p mpiq-core -p mpihandles -p mpidd-job --examples
cargo build --quiet --locked --manifest-path examples/consumer/Cargo.toml --target-dir "$target"
ex="$target/debug/examples"

failed=0
# expect NAME OUTPUT LINE...: every LINE is a whole line of OUTPUT.
expect() {
  local name="$1" output="$2"
  shift 2
  for line in "$@"; do
    if ! grep -qxF -- "$line" <<<"$output"; then
      echo "FAIL $name: no line \"$line\" in:" >&2
      echo "$output" >&2
      failed=1
    fi
  done
}
# count NAME OUTPUT PATTERN N: N lines of OUTPUT match PATTERN.
count() {
  local got
  got="$(grep -cE -- "$3" <<<"$2" || true)"
  if [ "$got" != "$4" ]; then
    echo "FAIL $1: $got lines match /$3/, not $4, in:" >&2
    echo "$2" >&2
    failed=1
  fi
}

# The launcher's table: the 4 ranks that said READY, with their pids, running
# the program the script built.
table=()
while read -r _ rank pid; do
  table+=("rank $rank: pid $pid on $(hostname): $cores/queues")
done <"$cores/ready"
out="$("$ex/mpir_table" "$cores/launcher.core")"
expect "mpidd-read mpir_table" "$out" "${table[@]}"
count "mpidd-read mpir_table" "$out" '^rank ' 4

# Rank 0 of queues.c: a receive on each of WORLD, the dup and the even
# split; rank 1's two unmatched sends unexpected on WORLD and the dup; no
# send of its own.
queues=(
  "MPI_COMM_WORLD: 0 sends, 1 receives, 1 unexpected"
  "mpidd_dup: 0 sends, 1 receives, 1 unexpected"
  "mpidd_split_even: 0 sends, 1 receives, 0 unexpected"
)
out="$("$ex/rank_queues" "$cores/rank0.core")"
expect "mpiq-core rank_queues" "$out" "${queues[@]}"
count "mpiq-core rank_queues" "$out" '[1-9][0-9]* (sends|receives|unexpected)' 3
out="$("$ex/vendor_queues" "$cores/rank0.core" "$MPIDD_REF_MPICH/lib/libtvmpich.so")"
expect "mpiq-core vendor_queues" "$out" \
  "MPI_COMM_WORLD: 1 receives" "mpidd_dup: 1 receives" "mpidd_split_even: 1 receives"
out="$("$ex/comm_world" "$cores/rank0.core")"
expect "mpihandles comm_world" "$out" 'Some("MPI_COMM_WORLD"): rank 0 of 4'

# The same job on Debian's own stripped MPICH, through the plain path: the
# target's layouts include the profiles mpidd ships for that build and
# for Debian's UCX, which keeps the unexpected messages in its worker
# (docs/ch4.md): the same queues as the reference build's. Rank 2's large
# send to rank 3 is pending on WORLD.
out="$("$ex/rank_queues" "$cores/stock/rank0.core")"
expect "mpiq-core rank_queues (Debian's MPICH)" "$out" "${queues[@]}"
count "mpiq-core rank_queues (Debian's MPICH)" "$out" '[1-9][0-9]* (sends|receives|unexpected)' 3
out="$("$ex/rank_queues" "$cores/stock/rank2.core")"
expect "mpiq-core rank_queues (Debian's MPICH, rank 2)" "$out" \
  "MPI_COMM_WORLD: 1 sends, 0 receives, 0 unexpected"
count "mpiq-core rank_queues (Debian's MPICH, rank 2)" "$out" '[1-9][0-9]* (sends|receives|unexpected)' 1
out="$("$ex/comm_world" "$cores/stock/rank0.core")"
expect "mpihandles comm_world (Debian's MPICH)" "$out" 'Some("MPI_COMM_WORLD"): rank 0 of 4'

# hang_ring.c: every rank receives from its left neighbour first.
out="$("$ex/job_verdict" "$cores/ring")"
expect "mpidd-job job_verdict" "$out" "cycle: [0, 3, 2, 1]"
count "mpidd-job job_verdict" "$out" '^DEADLOCK: 1 cycle' 1

out="$("$target/debug/mpidd-consumer" "$cores/launcher.core" "$cores/rank0.core")"
expect "examples/consumer" "$out" "${table[@]}" "${queues[@]}" \
  "handle 0x44000000: MPI_COMM_WORLD, rank Some(0) of Some(4)"
count "examples/consumer" "$out" '^rank ' 4

[ "$failed" = 0 ] || exit 1
echo "the front-page examples and examples/consumer read the reference cores and Debian's MPICH as expected"
