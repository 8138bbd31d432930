#!/usr/bin/env bash
# Compares, rank by rank, three readings of the same stopped MPICH job
# built with --enable-debuginfo (scripts/build-mpich-debuginfo.sh):
#
#   native   mpidd queues                       (the CH4 decoder)
#   lists    mpidd queues --debugger-lists      (MPIR_Sendq/Recvq/Unexpq_head)
#   dll      mpidd queues --dll libtvmpich.so   (MPICH's own library)
#
# on tests/mpich/queues.c (4 ranks) and tests/mpich/self_pending.c (1 rank:
# CH4's self path). For each rank, communicator and queue it prints the
# operations each reading found, by peer and tag, and whether the three
# agree; lengths are shown as each reading gives them (the native decoder
# in bytes, the other two in elements). A local comparison: CI has no
# upstream source, so scripts/test.sh does not run it. Its results are in
# docs/stock-mpich.md ("MPICH's debugger lists").
#
#   bash scripts/compare-mpich-debugger-lists.sh [REF]     (default v5.0.1)
#
#   MPIDD_MPICH_GIT, MPIDD_JSONC_GIT   as scripts/build-mpich-debuginfo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ref="${1:-v5.0.1}"
prefix="$(bash scripts/build-mpich-debuginfo.sh "$ref" | tail -n 1)"
nice -n 10 cargo build --quiet -p mpidd
mpidd="${CARGO_TARGET_DIR:-$PWD/target}/debug/mpidd"
dll="$prefix/lib/libtvmpich.so"
work="$(mktemp -d)"
pids=""
cleanup() {
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -CONT $pids 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Starts PROGRAM on N ranks and waits for every rank to print READY and
# stop itself; sets $pids to their process ids.
start() {
  local program=$1 n=$2 out="$work/$1.out"
  "$prefix/bin/mpicc" -g -O0 -o "$work/$program" "tests/mpich/$program.c"
  (cd "$work" && exec "$prefix/bin/mpiexec.hydra" -n "$n" "./$program") >"$out" 2>"$work/$program.err" &
  for _ in $(seq 600); do
    [ "$(grep -c '^READY' "$out" || true)" -ge "$n" ] && break
    sleep 0.1
  done
  [ "$(grep -c '^READY' "$out" || true)" -ge "$n" ] || {
    cat "$work/$program.err" >&2
    echo "error: $program did not get ready" >&2
    exit 1
  }
  pids="$(awk '/^READY/{print $3}' "$out")"
  local pid
  for pid in $pids; do
    for _ in $(seq 100); do
      grep -q 'State:.*T' "/proc/$pid/status" && break
      sleep 0.1
    done
  done
}

# Reads every rank of PROGRAM three ways into $work/PROGRAM.RANK.{native,lists,dll}.json.
read_ranks() {
  local program=$1 rank pid
  while read -r _ rank pid _; do
    "$mpidd" queues --no-cache --pid "$pid" --json >"$work/$program.$rank.native.json" 2>/dev/null
    "$mpidd" queues --no-cache --pid "$pid" --debugger-lists --json >"$work/$program.$rank.lists.json" 2>/dev/null
    "$mpidd" queues --no-cache --pid "$pid" --dll "$dll" --json >"$work/$program.$rank.dll.json" 2>/dev/null
  done < <(grep '^READY' "$work/$program.out" | sort -k2n)
}

echo "MPICH $ref with --enable-debuginfo at $prefix"
for job in "queues 4" "self_pending 1"; do
  set -- $job
  start "$1" "$2"
  read_ranks "$1"
  # shellcheck disable=SC2086
  kill -CONT $pids
  pids=""
  wait || true
done

python3 - "$work" <<'EOF'
import glob, json, os, sys

work = sys.argv[1]
QUEUES = [("pending_receives", "receives"), ("unexpected_messages", "unexpected"), ("pending_sends", "sends")]


def ops(queue):
    if queue.get("state") != "read":
        return None
    return queue["operations"]


def key(kind, op):
    """The envelope: the peer and tag a receive asks for, or a message's."""
    if kind == "receives":
        peer = "any" if op["desired_local_rank"] == -1 else op["desired_local_rank"]
        tag = "any" if op["tag_wild"] else op["desired_tag"]
    else:
        peer, tag = op["actual_local_rank"], op["actual_tag"]
    return (peer, tag)


def size(op):
    count = op.get("desired_count")
    return f"{op['desired_length']}" + (f" ({count} el.)" if count is not None else "")


total = {"agree": 0, "differ": 0}
for program in ("queues", "self_pending"):
    for path in sorted(glob.glob(os.path.join(work, f"{program}.*.native.json"))):
        rank = path.split(".")[-3]
        read = {}
        for source in ("native", "lists", "dll"):
            with open(os.path.join(work, f"{program}.{rank}.{source}.json")) as f:
                read[source] = json.load(f)
        print(f"\n== {program} rank {rank}")
        for comm in read["native"]["communicators"]:
            uid = comm["unique_id"]
            for field, kind in QUEUES:
                found = {}
                for source, q in read.items():
                    match = [c for c in q["communicators"] if c["unique_id"] == uid]
                    found[source] = ops(match[0][field]) if match else None
                keys = {s: (sorted(map(str, (key(kind, o) for o in v))) if v is not None else None)
                        for s, v in found.items()}
                if all(not v for v in keys.values()):
                    continue
                same = keys["native"] == keys["lists"] == keys["dll"]
                total["agree" if same else "differ"] += 1
                print(f"  {comm['name']} {kind}: {'agree' if same else 'DIFFER'}")
                for source, v in found.items():
                    shown = "no information" if v is None else ", ".join(
                        f"peer {key(kind, o)[0]} tag {key(kind, o)[1]} len {size(o)}" for o in v) or "none"
                    print(f"    {source:6} {shown}")
print(f"\n{total['agree']} queues agree, {total['differ']} differ (by peer and tag)")
EOF
