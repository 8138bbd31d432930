#!/usr/bin/env bash
# Prepares upstream MPICH's source at a release tag (or a release branch's
# commit), configured as pip's MPICH wheels are (mpi4py/mpi-publish's
# cibw-build-mpi.sh: ch4:ucx,ofi from 4.3, --enable-mpi-abi from 5.0,
# --disable-cxx, embedded yaksa), with -g, in a tree kept outside the repo,
# and prints the tree's directory on the last line. Made only when missing
# (autogen and configure: 10 to 20 minutes on two shared cores); the
# layout profiles of MPICH's ch4:ucx release families are compiled from it
# (scripts/write-mpich-wheel-profile.sh), object by object: the library
# itself is never built.
#
#   mpich-release-tree.sh REF   (v4.3.2, v5.0.1, 5.0.x, ...)
#
#   MPIDD_MPICH_GIT        a git directory of upstream pmodels/mpich; required
#   MPIDD_YAKSA_GIT        one of pmodels/yaksa (the yaksa submodule, up to 4.3)
#   MPIDD_JSONC_GIT        one of pmodels/json-c (the json-c submodule)
#   MPIDD_MPICH_RELEASE_TREES  where to keep the trees
#                          (default ~/.cache/mpidd/mpich-release)
#
# What differs from the wheels' build, and why it moves no member the
# decoders read: UCX, libfabric and hwloc are Debian's (libucx-dev,
# libfabric-dev, libhwloc-dev) rather than the wheels' embedded copies (MPICH
# keeps only pointers and handles of theirs, and UCX's own layouts come
# from UCX's release families); the process manager is not configured (it
# is another program); -g is added. The check on each process
# (mpihandles::check_layouts) compares the allocators' recorded object
# sizes with the profile's, so a difference that does move a member is seen.
#
# The tree's .mpidd-configured names the ref, the commit it resolved to and
# the options, so a profile written from it can record them. Nothing of the
# source goes into the repo: only the offsets and sizes the profile holds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

ref="${1:?usage: mpich-release-tree.sh REF (e.g. v4.3.2)}"
git_dir="${MPIDD_MPICH_GIT:?set MPIDD_MPICH_GIT to a git directory of upstream pmodels/mpich}"
commit="$(git --git-dir="$git_dir" rev-parse --verify "$ref^{commit}")" || {
  echo "error: $git_dir has no $ref" >&2
  exit 1
}
version="$(git --git-dir="$git_dir" show "$commit:maint/version.m4" |
  sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p')"
top="${MPIDD_MPICH_RELEASE_TREES:-$HOME/.cache/mpidd/mpich-release}"
tree="$top/mpich-${ref#v}"

# cibw-build-mpi.sh's options for Linux, less the process manager and the
# embedded UCX, libfabric and hwloc (above).
options="--with-device=ch4:ucx,ofi --with-pm=no --with-ucx=/usr --with-libfabric=/usr --with-hwloc=/usr --with-yaksa=embedded --disable-cxx --disable-doc --disable-dlopen --disable-static --disable-pci --disable-opencl --disable-libxml2 --disable-dependency-tracking"
case "$version" in
# 3.4.3's wheel states the same line as 4.0.3's. 3.4 names its prefixes
# --with-hwloc-prefix and --with-yaksa-prefix (embedded yaksa is its default).
3.4.*) options="${options/ch4:ucx,ofi/ch4:ofi,ucx}"
  options="${options/--with-hwloc=\/usr/--with-hwloc-prefix=\/usr}"
  options="${options/ --with-yaksa=embedded/}"
  options="${options/ --disable-cxx/} FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch" ;;
# 4.0.3's wheel names only the device and the process manager: C++ and
# Fortran bindings are built (the C++ ones add members to MPICH's
# objects), and Debian's gfortran needs to be let through MPICH's test of
# argument mismatches.
4.0.*) options="${options/ch4:ucx,ofi/ch4:ofi,ucx}"
  options="${options/ --disable-cxx/} FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch" ;;
4.[1-2].*) options="${options/ch4:ucx,ofi/ch4:ofi,ucx}" ;;
5.*) options="$options --enable-mpi-abi" ;;
esac
recipe="$ref $commit $version $options"

step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "mpich-release-tree: $name: $((SECONDS - start)) s" >&2
}

submodule() {
  local path=$1 sub_git=$2 sub
  sub="$(git --git-dir="$git_dir" ls-tree "$commit" "$path" | awk '{print $3}')"
  [ -n "$sub" ] || return 0
  git --git-dir="$sub_git" cat-file -e "$sub^{commit}" || {
    echo "error: $sub_git has no commit $sub (MPICH's $path)" >&2
    return 1
  }
  mkdir -p "$tree/$path"
  git --git-dir="$sub_git" archive "$sub" | tar -x -C "$tree/$path"
}

unpack() {
  rm -rf "$tree"
  mkdir -p "$tree"
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tree"
  submodule modules/json-c "${MPIDD_JSONC_GIT:?set MPIDD_JSONC_GIT to a git directory of pmodels/json-c}"
  if git --git-dir="$git_dir" ls-tree "$commit" modules/yaksa | grep -q .; then
    submodule modules/yaksa "${MPIDD_YAKSA_GIT:?set MPIDD_YAKSA_GIT to a git directory of pmodels/yaksa}"
  fi
}

configure_tree() {
  # The generated pack routines' depth does not reach MPICH's own types.
  # Before 4.1 MPICH's autogen.sh cannot pass it on: yaksa's own is run
  # first with it, and MPICH's told to leave yaksa alone.
  local flags="-without-hwloc -without-ucx -without-ofi -without-hydra -without-test -without-doc -yaksa-depth=1"
  : >"$tree.configure.log"
  if ! grep -q -- "-yaksa-depth=" "$tree/autogen.sh"; then
    (cd "$tree/modules/yaksa" && nice -n 10 ./autogen.sh --pup-max-nesting=1) \
      >>"$tree.configure.log" 2>&1
    # Its autogen.sh also insists on the embedded hwloc's presence, which
    # the build does not use (--with-hwloc=/usr), and its configure always
    # runs the tests' own, which must then be generated.
    flags="-without-hwloc -without-ucx -without-ofi -without-hydra -without-hydra2 -without-izem -without-doc -without-yaksa"
    mkdir -p "$tree/modules/hwloc"
    [ -f "$tree/modules/hwloc/configure.ac" ] || : >"$tree/modules/hwloc/configure.ac"
  fi
  # 3.4's autogen.sh has no way to leave hwloc, yaksa or hydra alone: it
  # runs each one's autogen.sh, so those get one that does nothing (the
  # build uses Debian's hwloc, --with-hwloc-prefix=/usr; yaksa's was run
  # above at depth 1; hydra, which needs hwloc's macros, is not built).
  if ! grep -q -- "-without-hwloc" "$tree/autogen.sh"; then
    flags="-without-izem -without-ucx -without-ofi"
    mkdir -p "$tree/modules/hwloc/config"
    # The embedded hwloc's macros MPICH calls: its setup, in the branch the
    # build does not take, defined as its failure with its flags empty, and
    # its conditionals, which nothing built uses.
    printf '%s\n' 'AC_DEFUN([HWLOC_SETUP_CORE],[AC_SUBST([HWLOC_EMBEDDED_CPPFLAGS])AC_SUBST([HWLOC_EMBEDDED_CFLAGS])$3])' \
      'AC_DEFUN([HWLOC_DO_AM_CONDITIONALS],[])' >"$tree/modules/hwloc/config/hwloc.m4"
    for d in modules/hwloc modules/yaksa src/pm/hydra src/pm/hydra2; do
      printf '#!/bin/sh\nexit 0\n' >"$tree/$d/autogen.sh"
      chmod +x "$tree/$d/autogen.sh"
    done
    # Its MPL's test of the x86 cycle counter (a timer the build does not
    # choose) nests AC_TRY_RUN in a way autoconf 2.71 turns into a configure
    # that does not parse: that choice is made an error instead.
    sed -i '/^    linux86_cycle|linux86_cycle_2)$/,/^    ;;$/c\    linux86_cycle|linux86_cycle_2) AC_MSG_ERROR([timer not available]) ;;' \
      "$tree/src/mpl/configure.ac"
  fi
  # shellcheck disable=SC2086
  (cd "$tree" &&
    nice -n 10 ./autogen.sh $flags &&
    nice -n 10 ./configure --prefix=/opt/mpich $options MPICHLIB_CFLAGS="-g") \
    >>"$tree.configure.log" 2>&1 || {
    tail -n 30 "$tree.configure.log" >&2
    echo "error: configuring MPICH $ref failed; its log is $tree.configure.log" >&2
    return 1
  }
}

if [ "$(cat "$tree/.mpidd-configured" 2>/dev/null)" != "$recipe" ]; then
  ensure_packages build-essential gfortran libtool autoconf automake pkg-config \
    libucx-dev libfabric-dev libhwloc-dev
  mkdir -p "$top"
  step "unpack $ref" unpack
  step "autogen and configure" configure_tree
  echo "$recipe" >"$tree/.mpidd-configured"
fi
echo "$tree"
