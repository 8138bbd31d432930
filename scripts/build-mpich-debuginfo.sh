#!/usr/bin/env bash
# Builds upstream MPICH at a release tag (or a release branch) with the
# debugger support MPICH's own message-queue library needs
# (--enable-debuginfo: the MPIR_Sendq/Recvq/Unexpq debugger lists and
# libtvmpich.so), on CH4 with the UCX netmod, with the hydra process
# manager and debug info, and installs it into a cache directory outside
# the repo. A finished install of the same recipe is reused. Prints the
# install prefix on its last line.
#
#   build-mpich-debuginfo.sh [REF]      (default v5.0.1; run on v5.0.1 only)
#
#   MPIDD_MPICH_GIT     a git directory of upstream pmodels/mpich; required
#   MPIDD_JSONC_GIT     one of pmodels/json-c (the json-c submodule); required
#   MPIDD_YAKSA_GIT     one of pmodels/yaksa (a submodule up to 4.3); not
#                       read: the build uses the dataloop engine (below)
#   MPIDD_MPICH_DEBUGINFO  install prefix
#                       (default ~/.cache/mpidd/mpich-REF-debuginfo)
#
# Used by scripts/compare-mpich-debugger-lists.sh, a local comparison (CI
# has no upstream source): nothing of the source goes into the repo.
#
# Lean where no decoder looks: no Fortran, C++ or ROMIO, shared libraries
# only, and the dataloop datatype engine instead of yaksa, whose generated
# pack routines take over an hour on two cores (the engine changes only
# MPIR_Datatype.typerep.handle, 8 bytes either way on LP64).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

ref="${1:-v5.0.1}"
git_dir="${MPIDD_MPICH_GIT:?set MPIDD_MPICH_GIT to a git directory of upstream pmodels/mpich}"
commit="$(git --git-dir="$git_dir" rev-parse --verify "$ref^{commit}")" || {
  echo "error: $git_dir has no $ref" >&2
  exit 1
}
prefix="${MPIDD_MPICH_DEBUGINFO:-$HOME/.cache/mpidd/mpich-${ref#v}-debuginfo}"
options=(--with-device=ch4:ucx --with-ucx=/usr --with-hwloc=/usr
  --with-pm=hydra --enable-debuginfo --enable-g=dbg --enable-fast=O1
  --with-datatype-engine=dataloop --disable-fortran --disable-cxx
  --disable-romio --disable-doc --disable-static --disable-dependency-tracking)
recipe="$ref $commit ${options[*]} CFLAGS=-g"
stamp="$prefix/.mpidd-complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
  echo "$prefix"
  exit 0
fi

ensure_packages build-essential libtool autoconf automake pkg-config python3 \
  libucx-dev libhwloc-dev

work="$(dirname "$prefix")/build-$(basename "$prefix")"
tree="$work/src"
log="$work/build.log"
rm -rf "$work"
mkdir -p "$tree"
start=$SECONDS
step() {
  local name=$1 t=$SECONDS
  shift
  echo "== $name" >>"$log"
  "$@" >>"$log" 2>&1 || {
    tail -n 40 "$log" >&2
    echo "error: $name failed for MPICH $ref; the log is $log" >&2
    exit 1
  }
  echo "build-mpich-debuginfo: $name: $((SECONDS - t)) s" >&2
}

unpack() {
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tree"
  local sub
  sub="$(git --git-dir="$git_dir" ls-tree "$commit" modules/json-c | awk '{print $3}')"
  if [ -n "$sub" ]; then
    local jsonc="${MPIDD_JSONC_GIT:?set MPIDD_JSONC_GIT to a git directory of pmodels/json-c}"
    mkdir -p "$tree/modules/json-c"
    git --git-dir="$jsonc" archive "$sub" | tar -x -C "$tree/modules/json-c"
  fi
  # The embedded hwloc is not unpacked (git archive leaves its empty
  # directory, removed here): hydra's autogen.sh then skips it, and
  # configure takes the system's.
  rmdir "$tree/modules/hwloc" 2>/dev/null || true
}

# autogen: hydra kept; the embedded libraries the options above replace
# (hwloc, UCX, libfabric, yaksa), ROMIO and the test suite left out.
step "unpack $ref" unpack
step autogen sh -c "cd '$tree' && nice -n 10 ./autogen.sh -without-hwloc -without-ucx -without-ofi -without-yaksa -without-romio -without-test -without-doc"
step configure sh -c "cd '$tree' && CFLAGS=-g nice -n 10 ./configure --prefix='$prefix' ${options[*]}"
step make sh -c "cd '$tree' && nice -n 10 make -j2"
# Installed under a staging root and moved into place in one rename, so a
# comparison running against an older install keeps a complete one.
stage="$work/stage"
step install sh -c "cd '$tree' && make install DESTDIR='$stage'"
new="$stage$prefix"
for f in lib/libmpi.so lib/libtvmpich.so bin/mpicc bin/mpiexec.hydra; do
  [ -e "$new/$f" ] || {
    echo "error: the build did not install $prefix/$f" >&2
    exit 1
  }
done
echo "built in $((SECONDS - start)) s" >"$new/.mpidd-build-time"
printf '%s\n' "$recipe" >"$new/.mpidd-complete"
old="$prefix.old-$$"
if [ -e "$prefix" ]; then mv "$prefix" "$old"; fi
mv "$new" "$prefix"
rm -rf "$work" "$old"
echo "== MPICH $ref with --enable-debuginfo built in $((SECONDS - start)) s" >&2
echo "$prefix"
