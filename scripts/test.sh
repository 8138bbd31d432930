#!/usr/bin/env bash
# Runs every check and test of the workspace. First it installs, idempotently,
# the Debian packages the real-world tests need (as root, or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

# Compiled output is cached outside the repo, as the builds below are: CI
# clones the repo afresh for every run, and compiling every dependency again
# for the debug, release, wheel, module, fuzz and documentation builds took
# about 20 of its minutes. A target directory the caller set is used as it
# is. Each new clone compiles the workspace's own crates again beside the
# earlier clones' (their paths differ), so past 20 GB the cache starts anew.
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
  CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/target"
  export CARGO_TARGET_DIR
  if [ -d "$CARGO_TARGET_DIR" ] &&
    [ "$(du -sk "$CARGO_TARGET_DIR" | cut -f1)" -gt $((20 * 1024 * 1024)) ]; then
    echo "== the cached target directory $CARGO_TARGET_DIR is over 20 GB: starting it anew"
    rm -rf "$CARGO_TARGET_DIR"
  fi
fi

# A run needs about 10 GB of disk (measured): 4.6 GB of target directory,
# 2.7 GB of cached builds and environments (~/.cache/mpidd), 1.7 GB for
# the fuzz targets, and the test jobs' cores, up to 1 GB at once. A full
# disk fails tests in ways that look like bugs (truncated cores), so the
# long steps say what is left.
disk() {
  local target="$CARGO_TARGET_DIR" size=none
  [ -d "$target" ] && size="$(du -sh "$target" | cut -f1)"
  echo "   disk: $(df -Ph . | awk 'NR == 2 { print $4 }') free; target directory: $size"
}

packages=(
  # C compilers of the ABIs the layout tests prove against.
  gcc
  gcc-i686-linux-gnu
  gcc-aarch64-linux-gnu
  gcc-arm-linux-gnueabihf
  gcc-s390x-linux-gnu
  gcc-powerpc-linux-gnu
  gcc-mips-linux-gnu
  # Guest cores of foreign CPUs (tests/qemu/make-cores.sh).
  qemu-user
  libc6-dev-s390x-cross
  libc6-dev-powerpc-cross
  libc6-dev-armhf-cross
  libc6-dev-i386-cross
  # aarch64 guest cores of the stack tests (mpidd-read/tests/stacks.rs).
  libc6-dev-arm64-cross
  # A real Open MPI job, and gcore to dump its launcher; Debian's stripped
  # Open MPI is also what the handle tests read through a layout profile
  # (examples/tests/ompi_handles.rs, run by mpirun.openmpi).
  openmpi-bin
  libopenmpi-dev
  gdb
  # lldb and its Python package, which the module mpidd.lldb runs inside
  # (examples/tests/lldb_module.rs).
  lldb
  python3-lldb-14
  # libc's separate debug file: the stack tests (mpidd-read/tests/stacks.rs)
  # compare libc frames named from its DWARF with gdb's.
  libc6-dbg
  # Debian's MPICH launcher, which exports no MPIR symbols; with its
  # headers, Debian's own stripped MPICH is also what the stock-MPICH tests
  # build and read through the shipped profile (examples/tests/stock_mpich.rs).
  mpich
  libmpich-dev
  # UCX's headers: tests/ucx/worker_queues.c, a real UCP worker that the
  # UCX reader reads live and from a core (mpihandles/tests/ucx_worker_live.rs).
  libucx-dev
  # libfabric's headers (Debian 12's libfabric 1.17, whose stripped library
  # the shipped profile is for): tests/ofi/endpoint_queues.c, real shm and
  # tcp;ofi_rxm endpoints that the OFI reader reads live and from a core
  # (mpihandles/tests/ofi_endpoint_live.rs).
  libfabric-dev
  # Counts the syscalls of a live read (examples/tests/live_table.rs).
  strace
  # Counts the instructions of the headline commands against their
  # budgets (scripts/speed-budgets.sh).
  valgrind
  # The independent C message-queue host (tests/mqs_host/c_host.c) reads
  # symbols with libelf and types with elfutils' libdw.
  libdw-dev
  libelf-dev
  # strip, to make an MPICH without debug info.
  binutils
  # CPython 3.11's headers, internal ones included: the Python frame
  # reader's table for 3.11 is compared with gcc's layout of them
  # (mpidd-read/tests/python_offsets.rs).
  libpython3.11-dev
  # The job report's pictures: Graphviz draws the wait-for graph
  # (mpidd-job/tests/render.rs), headless Chromium screenshots the HTML page
  # (mpidd-job/tests/html_chromium.rs).
  graphviz
  chromium
  # A local Slurm cluster on loopback (scripts/slurm-cluster.sh: munge,
  # slurmctld, one slurmd per node): hung jobs launched by srun are read by
  # one `mpidd agent` per node (examples/tests/slurm_job.rs). The packages'
  # own services are not used; the tests start private daemons.
  slurmctld
  slurmd
  slurm-client
  munge
  # The remote byte source is read through Debian's gdbserver on loopback
  # (examples/tests/gdbserver.rs).
  gdbserver
  # The Python wheel's test (scripts/test-wheel.sh) installs it into a fresh
  # virtual environment, and keeps maturin and zig in one; the hung mpi4py
  # jobs (tests/tests/python_jobs.rs) run in virtual environments of
  # Debian's own CPython 3.11 too (scripts/python-envs.sh).
  python3-venv
  # The headers to build mpi4py against Debian's Open MPI, and pip to fetch
  # the wheels of pip's MPICH and mpi4py (scripts/python-envs.sh).
  python3-dev
  python3-pip
  # A Debian 13 root with CPython 3.13 for the same jobs, made by
  # debootstrap into the cache (scripts/python-envs.sh debian13), and a
  # Debian 11 root with its Open MPI 4.1.0 and MPICH 3.4.1 (debian11).
  debootstrap
)

# Every step is timed: each says how long the one before it took, and the
# run ends (also when it fails) with the table of them all, so that a CI
# log, of which only the tail is kept, shows where the run's time went. The
# budget: 70 minutes on a fresh 2-core machine, caches included.
step_name="" step_start=$SECONDS
step_times=()
step() {
  step_done
  step_name="$1" step_start=$SECONDS
  echo "== $1"
}
step_done() {
  [ -n "$step_name" ] || return 0
  local took=$((SECONDS - step_start))
  step_times+=("$(printf '%6d s  %s' "$took" "$step_name")")
  echo "   ($step_name: $took s)"
  step_name=""
}
step_table() {
  local status=$?
  step_done
  echo "== time per step (exit status $status)"
  printf '%s\n' "${step_times[@]}"
  printf '%6d s  in all\n' "$SECONDS"
}
trap step_table EXIT

step "disk"
disk

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  step "installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "error: the packages ${missing[*]} are missing, and installing them needs root or sudo" >&2
    exit 1
  fi
  "${as_root[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The reference MPICH with debug info and its message-queue library: built
# once per machine into a cache outside the repo (a few minutes), then reused.
step "reference MPICH"
MPIDD_REF_MPICH="$(bash scripts/build-ref-mpich.sh | tail -n 1)"
export MPIDD_REF_MPICH
echo "   $MPIDD_REF_MPICH"
# The same MPICH with the CH4 device on Debian's UCX (Debian's amd64
# choice), beside it: the CH4 queue decoder and the handle decoders are
# checked on a real CH4 job. Built once, about 8 to 20 minutes.
step "reference MPICH (ch4:ucx)"
MPIDD_REF_MPICH_CH4="$(bash scripts/build-ref-mpich.sh ch4 | tail -n 1)"
export MPIDD_REF_MPICH_CH4
echo "   $MPIDD_REF_MPICH_CH4"
# The CH3 build again without --enable-debuginfo: the other choice of the
# configure option that moves members of the 4.0 ch3:nemesis family's
# layouts, whose site copy the check on the process must refuse the
# family's profile for (examples/tests/site_builds.rs). About 5 minutes,
# once.
step "reference MPICH (ch3:nemesis without debugger support)"
MPIDD_REF_MPICH_NODEBUGGER="$(bash scripts/build-ref-mpich.sh ch3-nodebugger | tail -n 1)"
export MPIDD_REF_MPICH_NODEBUGGER
echo "   $MPIDD_REF_MPICH_NODEBUGGER"

# The reference Open MPI with debug info and its libompi_dbg_msgq.so, for
# the ob1 decoder's real-job tests (examples/tests/ompi_queues.rs) and the
# handle tests (examples/tests/ompi_handles.rs, whose profile for Debian's
# build is written from its DWARF): built
# once per machine (about 20 minutes on 2 cores), then reused. The script
# installs its own build dependencies (libpmix-dev, libhwloc-dev, ...).
step "reference Open MPI"
MPIDD_REF_OMPI="$(bash scripts/build-ref-ompi.sh | tail -n 1)"
export MPIDD_REF_OMPI
echo "   $MPIDD_REF_OMPI"

# Debian's UCX 1.13.1 source, configured as Debian builds it: the UCX
# reader's tests lay out a worker at the offsets gcc gives UCX's own
# objects (mpihandles/tests/ucx_worker.rs), and the UCX profile is written
# from it (scripts/write-ucx-profile.sh). Kept outside the repo; about half
# a minute once.
step "Debian's UCX source"
bash scripts/debian-ucx-tree.sh | tail -n 1

# CPython 3.9's and 3.13's headers from Debian 11's and 13's packages, for
# the same comparison of those versions' tables; a few seconds once.
step "CPython headers"
MPIDD_PYTHON_HEADERS="$(bash scripts/python-headers.sh | tail -n 1)"
export MPIDD_PYTHON_HEADERS
echo "   $MPIDD_PYTHON_HEADERS"

# The Python MPI environments of the hung mpi4py jobs (tests/python/, run
# by tests/tests/python_jobs.rs), each made once per machine outside the
# repo: CPython 3.11 with pip's MPICH (cold about 10 s), CPython 3.11 with
# mpi4py built on Debian's Open MPI (2.5 min of CPU, 6 min on a busy 2-core
# machine), a Debian 13 root with CPython 3.13 and pip's MPICH (1.5 to
# 2 min; 4 to 6 min now that it holds Debian's Open MPI 5 and MPICH with
# gcc); warm, under a second all.
step "Python MPI environments"
python_envs_start=$SECONDS
MPIDD_PY_MPICH_VENV="$(bash scripts/python-envs.sh mpich | tail -n 1)"
MPIDD_PY_OMPI_VENV="$(bash scripts/python-envs.sh ompi | tail -n 1)"
MPIDD_DEBIAN13_ROOT="$(bash scripts/python-envs.sh debian13 | tail -n 1)"
# Debian 11's Open MPI 4.1.0 and MPICH 3.4.1 as bullseye ships them, read
# from the host (examples/tests/debian11.rs); 1.5 min cold, no Python.
MPIDD_DEBIAN11_ROOT="$(bash scripts/python-envs.sh debian11 | tail -n 1)"
# The MPIs of the third milestone as pip ships them: Open MPI 5, MPICH 5,
# Intel MPI's runtime (a few seconds each, mostly download).
MPIDD_PY_OMPI5_VENV="$(bash scripts/python-envs.sh ompi5 | tail -n 1)"
MPIDD_PY_MPICH5_VENV="$(bash scripts/python-envs.sh mpich5 | tail -n 1)"
MPIDD_PY_IMPI_VENV="$(bash scripts/python-envs.sh impi | tail -n 1)"
export MPIDD_PY_MPICH_VENV MPIDD_PY_OMPI_VENV MPIDD_DEBIAN13_ROOT MPIDD_DEBIAN11_ROOT
export MPIDD_PY_OMPI5_VENV MPIDD_PY_MPICH5_VENV MPIDD_PY_IMPI_VENV
for dir in "$MPIDD_PY_MPICH_VENV" "$MPIDD_PY_OMPI_VENV" "$MPIDD_DEBIAN13_ROOT" "$MPIDD_DEBIAN11_ROOT" \
  "$MPIDD_PY_OMPI5_VENV" "$MPIDD_PY_MPICH5_VENV" "$MPIDD_PY_IMPI_VENV"; do
  echo "   $dir"
done
# Every Open MPI wheel pip has, each in its own venv (6 to 8 s each cold,
# mostly download), read through its release family or its own profile
# (examples/tests/ompi_families.rs), each in MPIDD_PY_OMPI_<VERSION>_VENV.
for version in $(bash scripts/python-envs.sh ompi-wheels); do
  var="MPIDD_PY_OMPI_${version//./_}_VENV"
  dir="$(bash scripts/python-envs.sh ompi-wheel "$version" | tail -n 1)"
  export "$var=$dir"
  echo "   $dir"
done
# The MPICH wheels of the patch releases with a family of their own
# (examples/tests/mpich_wheels.rs), each in MPIDD_PY_MPICH_<VERSION>_VENV.
for version in $(bash scripts/python-envs.sh mpich-wheels); do
  var="MPIDD_PY_MPICH_${version//./_}_VENV"
  dir="$(bash scripts/python-envs.sh mpich-wheel "$version" | tail -n 1)"
  export "$var=$dir"
  echo "   $dir"
done
echo "   ready in $((SECONDS - python_envs_start)) s"

# Debian 13's Open MPI 5.0.7 source, configured inside the Debian 13 root
# with debian/rules' options: the shipped 5.0.7 profile is written again
# from it and must come out the same (examples/tests/ompi5_profile.rs).
# Kept outside the repo; about 4 minutes once on a quiet 2-core machine,
# a second warm.
step "Debian 13's Open MPI source"
ompi5_tree_start=$SECONDS
bash scripts/debian13-ompi5-tree.sh | tail -n 1
echo "   ready in $((SECONDS - ompi5_tree_start)) s"

# Open MPI 5.0.7's own message-queue library, libompi_dbg_msgq.so with
# debug info, compiled from that tree in the Debian 13 root (two files,
# a few seconds once): examples/tests/ompi5_debian13.rs runs it on Debian
# 13's ranks (mpidd queues --compare-dll).
step "Open MPI 5's libompi_dbg_msgq.so"
ompi5_dll_start=$SECONDS
MPIDD_OMPI5_DLL="$(bash scripts/build-ompi5-dll.sh | tail -n 1)"
export MPIDD_OMPI5_DLL
echo "   $MPIDD_OMPI5_DLL, ready in $((SECONDS - ompi5_dll_start)) s"

# The suite builds every test binary once, from scratch on CI: incremental
# state would only add gigabytes of disk (8 GB once, which with the tests'
# cores filled CI's disk).
export CARGO_INCREMENTAL=0

step "cargo fmt"
cargo fmt --all -- --check
cargo fmt --manifest-path examples/consumer/Cargo.toml -- --check
# fuzz/ is its own workspace with its own lock file: a dependency added to a
# crate it fuzzes must reach that lock too. Checked here, before the long
# steps, rather than found stale at the end.
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null
step "the tree's shape"
bash scripts/check-tree.sh
step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
# The library crates as a dependency: without their default
# features (`live`, `mqs`) they must build, and hold neither ptrace (nix)
# nor dlopen (libloading), so that a debugger on any platform can read cores.
step "library crates without default features"
library_crates=(mpidd-types mpidd-read mpiq-core mpihandles mpidd-job)
for crate in "${library_crates[@]}"; do
  cargo check -p "$crate" --no-default-features --locked --quiet
  deps="$(cargo tree -p "$crate" --no-default-features -e normal --locked --prefix none --format '{p}')"
  for banned in nix libloading; do
    if grep -q "^$banned v" <<<"$deps"; then
      echo "error: $crate built with --no-default-features still depends on $banned; it comes in through:" >&2
      cargo tree -p "$crate" --no-default-features -e normal --locked -i "$banned" >&2
      exit 1
    fi
  done
  # A debugger that embeds the crate links its own gimli, object and nix:
  # one copy each of ours, at the versions the README names, so that its
  # build can unify with them.
  dups="$(cargo tree -p "$crate" -d -e normal --locked --quiet --depth 0 --prefix none --format '{p}' |
    grep -E '^(gimli|object|nix) v' || true)"
  if [ -n "$dups" ]; then
    echo "error: $crate depends on more than one version of:" $dups "; they come in through:" >&2
    while read -r name version; do
      cargo tree -p "$crate" -e normal --locked -i "$name@${version#v}" >&2 || true
    done <<<"$dups"
    exit 1
  fi
done
# A debugger that wants the queues alone (mpiq-core without its default
# features) must not build mpihandles' handle views: only the object model
# the queue decoders read through. (Inverted, the tree lists every feature
# of mpihandles that is on, and what turns it on.)
views="$(cargo tree -p mpiq-core --no-default-features -e features,normal --locked -i mpihandles --prefix none)"
if grep -q '^mpihandles feature "views"' <<<"$views"; then
  echo "error: mpiq-core built with --no-default-features still builds mpihandles' handle views (feature \"views\"); it comes in through:" >&2
  cargo tree -p mpiq-core --no-default-features -e features,normal --locked -i mpihandles >&2
  exit 1
fi
# Every library crate as it would be published, in dependency order: cargo
# packages them together through a local overlay registry, so the later
# ones build against the packaged earlier ones, and each package is built
# from its own files alone. --allow-dirty: the check is of what would be
# packaged, also from a working tree with changes.
#
# Cargo takes a registry crate of a given version to be immutable, and
# these stay 0.1.0 from run to run: it reuses both the copies an earlier run
# unpacked under $CARGO_HOME/registry/src/-HASH/ and the artifacts it built
# from them, so the later crates were verified against stale earlier ones.
# The unpacked copies go first, and the verification builds in a target
# directory of its own, removed afterwards. Measured: about 85 s on
# 2 cores (every dependency is built again there).
step "cargo package"
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/{mpidd-types,mpidd-read,mpihandles,mpiq-core,mpidd-job}-[0-9]*
package_target="$(mktemp -d)"
if ! CARGO_TARGET_DIR="$package_target" cargo package --locked --allow-dirty --quiet \
  -p mpidd-types -p mpidd-read -p mpihandles -p mpiq-core -p mpidd-job; then
  rm -rf "$package_target"
  echo "error: cargo package of the library crates failed (see above)" >&2
  exit 1
fi
rm -rf "$package_target"
step "cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
step "mpidd demo"
cargo run --quiet --locked -p mpidd -- demo >/dev/null
# The Python wheel (pyproject.toml): built with maturin and zig as
# manylinux_2_17, installed into a fresh virtual environment, whose mpidd
# then reads a hung Open MPI ring. Measured on 2 cores: from a cold target
# directory a release build of its own per wheel, 2 minutes for x86_64 and
# 3.5 for aarch64 on a quiet machine (10 minutes for both under load); warm,
# 15 s in all.
step "the Python wheel"
# aarch64's Rust standard library, for the aarch64 wheel (tested under
# qemu-aarch64): idempotent, a download of about 30 MB once.
if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
  rustup target add aarch64-unknown-linux-gnu
fi
bash scripts/test-wheel.sh
# cargo test includes the Python module inside the real gdb
# (examples/tests/gdb_module.rs): it builds the module's abi3 wheel with
# the same pinned maturin (scripts/build-python-module.sh; a release build
# of the module's crates, about 3 minutes cold on 2 cores, seconds warm),
# installs it into a directory for gdb's own CPython, and reads 4-rank
# jobs of the reference and Debian's MPICH (about 25 s warm).
step "cargo test"
disk
cargo test --workspace --locked
# docs/supported-builds.md is written from what the wheels' tests saw
# (examples/tests/ompi_families.rs): it must be what this run saw.
step "docs/supported-builds.md"
bash scripts/supported-builds.sh --check
# The instructions of the commands a user waits for, in the release build,
# against their budgets (about 1.5 times the figure each was set from): a
# change that doubles one fails here. Measured: the release build of mpidd
# (no other step builds it: the wheel's is a cross build of its own) about
# 6 minutes from scratch on a busy 2-core machine, then 1.5 minutes to make
# the cores and count.
step "speed budgets"
budgets_start=$SECONDS
bash scripts/speed-budgets.sh
echo "   done in $((SECONDS - budgets_start)) s"
# The crates as a dependency: each front page's example and the consumer
# crate outside the workspace, run on cores of the reference MPICH.
step "library examples and examples/consumer"
cargo clippy --manifest-path examples/consumer/Cargo.toml --target-dir "${CARGO_TARGET_DIR:-target}" --locked -- -D warnings
bash scripts/check-examples.sh

# ==== Fuzzing (see FUZZING.md) ============================================
# Every target of fuzz/ (its own workspace, built by cargo-fuzz on the nightly
# toolchain) runs from its seeds; a crash, a timeout or an OOM fails the
# suite. 15 seconds per target: the three reference builds take most of the
# hour a fresh machine has, and fuzz seconds are the cheap thing to shorten
# (longer runs: bash scripts/fuzz.sh 600, or MPIDD_FUZZ_SECONDS here).
step "cargo fuzz"
disk
# The fuzz targets' sanitized build needs about 3 GB of its own. On a
# machine whose disk is nearly full (CI's once ran out linking them), the
# workspace's debug build, which no later step reads, is removed first:
# the next run rebuilds it.
free_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt $((8 * 1024 * 1024)) ] && [ -d "${CARGO_TARGET_DIR:-target}/debug" ]; then
  echo "   under 8 GB free: removing ${CARGO_TARGET_DIR:-target}/debug before the fuzz build"
  rm -rf "${CARGO_TARGET_DIR:-target}/debug"
  disk
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
cargo clippy --manifest-path fuzz/Cargo.toml --all-targets --locked -- -D warnings
bash scripts/fuzz.sh "${MPIDD_FUZZ_SECONDS:-15}"
# ==== end of fuzzing ========================================================
