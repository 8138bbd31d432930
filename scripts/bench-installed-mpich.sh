#!/usr/bin/env bash
# One rank with N posted receives (default 100,000) on the MPICH builds
# people install, side by side: Debian 12's libmpich12 (4.0.2, by build-id),
# pip's MPICH 5.0.2 wheel (stripped, no build-id, hidden globals: its
# release family, the globals located in the file) and Debian 13's
# libmpich12 (4.2.1, run in the Debian 13 root). For each, rank 0 of
# `tests/mpich/queues.c scale N` (N MPI_Irecv from rank 1, which sends
# nothing) is dumped by gcore and `mpidd queues --core CORE --json` is timed:
#
#   cold  the layout cache empty and the page cache of the core, of mpidd
#         and of every file the rank mapped dropped before each run (best
#         of 3): what a user waits for the first time;
#   warm  the layout cache filled, files cached (best of 5, after one
#         unmeasured run).
#
# Every reading must hold the N receives, or the script fails. Prints a
# Markdown table on standard output (BENCHMARKS.md, "MPICH as people
# install it").
#
#   bash scripts/bench-installed-mpich.sh [N]
#
# Needs what scripts/test.sh makes: Debian's MPICH, gdb, the pip wheel's
# venv (scripts/python-envs.sh mpich5) and the Debian 13 root
# (scripts/python-envs.sh debian13).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-100000}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/mpidd"
mpich5="${MPIDD_PY_MPICH5_VENV:-$cache_root/py311-mpich5}"
debian13="${MPIDD_DEBIAN13_ROOT:-$cache_root/debian13}"
for tool in mpicc.mpich mpiexec.mpich gcore "$mpich5/bin/mpicc" "$mpich5/bin/mpiexec" \
  "$debian13/usr/bin/mpicc.mpich"; do
  command -v "$tool" >/dev/null ||
    { echo "error: $tool is missing: bash scripts/test.sh installs it (scripts/python-envs.sh mpich5 debian13)" >&2; exit 1; }
done
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
cargo build --release --quiet --locked -p mpidd
mpidd="$target/release/mpidd"
# shellcheck source=lib/bench-queues-core.sh
. scripts/lib/bench-queues-core.sh
export MPIDD_CACHE_DIR="$work/cache"
cold_cache="$MPIDD_CACHE_DIR"

# The Debian 13 root's compiler and launcher, on the scratch directory
# bound at the same path, so that the program and its source mean the same
# inside and out.
cp tests/mpich/queues.c "$work/queues.c"
queues_src="$work/queues.c"
cat >"$work/cc13" <<EOF
#!/bin/sh
exec bash "$root/scripts/lib/in-debian-root.sh" "$debian13" --bind "$work" mpicc.mpich "\$@"
EOF
chmod +x "$work/cc13"

cell() { # "wall s (cpu s CPU, RSS MB)" of a "seconds KB cpu" triple
  awk -v s="$1" -v kb="$2" -v c="$3" 'BEGIN {
    if (s == "failed") { print "failed"; exit }
    printf "%.3f s (%.2f s CPU, %d MB)", s, c, kb / 1024 }'
}

echo "| MPICH build, core of rank 0 | layouts from | receives found | cold | warm |"
echo "|---|---|---|---|---|"
for build in debian12 wheel5 debian13; do
  echo "== $build, scale $n" >&2
  search=()
  case $build in
    debian12)
      name="Debian 12 libmpich12 4.0.2"
      queues_scale_core mpicc.mpich mpiexec.mpich "$n" -O0
      ;;
    wheel5)
      name="pip mpich 5.0.2"
      queues_scale_core "$mpich5/bin/mpicc" "$mpich5/bin/mpiexec" "$n" -O0
      ;;
    debian13)
      name="Debian 13 libmpich12 4.2.1"
      queues_scale_core "$work/cc13" \
        "bash $root/scripts/lib/in-debian-root.sh $debian13 --bind $work mpiexec.mpich" "$n" -O0
      search=(--search-path "$work")
      ;;
  esac
  cold_files=("$mpidd" "$core" "${mapped[@]}")
  rm -rf "$MPIDD_CACHE_DIR"
  "$mpidd" queues --core "$core" "${search[@]}" --json --verbose >"$work/q.json" 2>"$work/q.err"
  source_line=$(grep -o "come from [^(]*" "$work/q.err" | head -n 1 | sed -e 's/^come from //' -e 's/ *$//')
  found=$(python3 - "$work/q.json" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
print(sum(len(c["pending_receives"].get("operations", [])) for c in q["communicators"]))
EOF
)
  [ "$found" -ge "$n" ] || { echo "error: $name: the decoder found $found of $n receives" >&2; exit 1; }
  read -r cs ckb ccpu < <(cold_of 3 "$mpidd" queues --core "$core" "${search[@]}" --json)
  read -r ws wkb wcpu < <(warm_of 5 "$mpidd" queues --core "$core" "${search[@]}" --json)
  echo "| $name (${core_mb} MB) | ${source_line:-?} | $found | $(cell "$cs" "$ckb" "$ccpu") | $(cell "$ws" "$wkb" "$wcpu") |"
  rm -f "$core"
done
echo
echo "Measured by \`bash scripts/bench-installed-mpich.sh $n\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
