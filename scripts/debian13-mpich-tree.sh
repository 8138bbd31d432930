#!/usr/bin/env bash
# Prepares MPICH 4.2.1's source configured as Debian 13 built its own
# libmpich12 (4.3.0+really4.2.1-1, amd64, ch4:ucx) inside the Debian 13 root
# (its gcc, its libucx-dev and libhwloc-dev), in a tree kept outside the
# repo, and prints the tree's directory on the last line. Made only when
# missing (autogen and configure: about 10 minutes on two shared cores).
# Used once, locally, to measure what the profile of that build holds
# (scripts/write-debian13-mpich-profile.sh); the tests never run it.
#
#   MPIDD_MPICH_GIT           a git directory of upstream pmodels/mpich; required
#   MPIDD_JSONC_GIT           one of pmodels/json-c (MPICH's json-c submodule)
#   MPIDD_YAKSA_GIT           one of pmodels/yaksa (MPICH's yaksa submodule)
#   MPIDD_DEBIAN13_MPICH_TREE where to keep it
#                             (default ~/.cache/mpidd/mpich-4.2.1-debian13-tree)
#   MPIDD_DEBIAN13_ROOT       the Debian 13 root (scripts/python-envs.sh debian13)
#
# The source: Debian's mpich_4.3.0+really4.2.1 source package is not in
# the mirror this machine reaches, so the source is upstream's v4.2.1 tag
# (the release Debian's version names, "really4.2.1"). Its configure line
# is the one the stock file itself records (MPII_Version_configure, read
# from it below and compared), less what builds no struct the decoders
# read: the process manager (--with-pm=no: hydra is another program),
# Fortran (bindings over the same C objects), libfabric and Slurm (the
# root has neither -dev package; a ch4:ucx build compiles no OFI code).
# Debian's --without-yaksa names no external yaksa: the embedded one is
# built (MPICH's headers include yaksa.h); its generated pack routines are
# kept to depth 1, since they reach no struct the decoders read. The check on each process (mpihandles::check_layouts) compares the
# allocators' recorded object sizes with the profile's, so a Debian patch
# that moved a member the decoders read would be seen.
#
# autogen runs on the host (the root has no libtool); configure and the
# compilers run in the root, with the host's make on PATH (the root has
# none; make needs only libc).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

ref=v4.2.1
package=4.3.0+really4.2.1-1
git_dir="${MPIDD_MPICH_GIT:?set MPIDD_MPICH_GIT to a git directory of upstream pmodels/mpich}"
root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
top="${MPIDD_DEBIAN13_MPICH_TREE:-$HOME/.cache/mpidd/mpich-4.2.1-debian13-tree}"
tree="$top/mpich"
stock="$root/usr/lib/x86_64-linux-gnu/libmpich.so.12.4.1"
[ -f "$stock" ] || {
  echo "error: no Debian 13 root with libmpich12 at $root: run bash scripts/python-envs.sh debian13" >&2
  exit 1
}
installed="$(chroot "$root" dpkg-query -W -f='${Version}' libmpich12)"
[ "$installed" = "$package" ] || {
  echo "error: the Debian 13 root has libmpich12 $installed, not $package, which this tree is for" >&2
  exit 1
}
commit="$(git --git-dir="$git_dir" rev-parse --verify "$ref^{commit}")"

# The stock file's own configure line: the options that shape MPICH's
# structs must be there as given here.
stock_line="$(strings -a "$stock" | grep -- "--with-device=" | head -n 1 || true)"
for opt in --with-device=ch4:ucx --without-yaksa --with-ucx=/usr --enable-shared --with-wrapper-dl-type=none; do
  grep -q -- " $opt " <<<" $stock_line " || {
    echo "error: $stock's configure line lacks $opt: $stock_line" >&2
    exit 1
  }
done
options="--build=x86_64-linux-gnu --prefix=/usr --disable-option-checking --disable-silent-rules \
--libdir=/usr/lib/x86_64-linux-gnu --disable-maintainer-mode --disable-dependency-tracking \
--with-ibverbs --with-ucx=/usr --with-device=ch4:ucx --with-pm=no --with-hwloc-prefix=/usr \
--with-wrapper-dl-type=none --enable-shared --without-yaksa --disable-fortran --disable-rpath \
--disable-wrapper-rpath --sysconfdir=/etc/mpich"
# dpkg-buildflags on trixie, as the stock file's MPII_Version_CC states them.
flags="-g -O2 -Werror=implicit-function-declaration -fstack-protector-strong -fstack-clash-protection -Wformat -Werror=format-security -fcf-protection"
recipe="$ref $commit $package; $options; $flags; yaksa depth 1"

step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "debian13-mpich-tree: $name: $((SECONDS - start)) s" >&2
}

unpack() {
  rm -rf "$top"
  mkdir -p "$tree"
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tree"
  submodule modules/json-c "${MPIDD_JSONC_GIT:?set MPIDD_JSONC_GIT to a git directory of pmodels/json-c}"
  submodule modules/yaksa "${MPIDD_YAKSA_GIT:?set MPIDD_YAKSA_GIT to a git directory of pmodels/yaksa}"
}

submodule() {
  local path=$1 sub_git=$2 sub
  sub="$(git --git-dir="$git_dir" ls-tree "$commit" "$path" | awk '{print $3}')"
  mkdir -p "$tree/$path"
  git --git-dir="$sub_git" archive "$sub" | tar -x -C "$tree/$path"
}

autogen() {
  (cd "$tree" && nice -n 10 ./autogen.sh -without-hwloc -without-ucx -without-ofi -without-hydra \
    -without-test -without-doc -yaksa-depth=1) >"$top/autogen.log" 2>&1 || {
    tail -n 30 "$top/autogen.log" >&2
    echo "error: autogen of MPICH $ref failed; its log is $top/autogen.log" >&2
    return 1
  }
}

configure_tree() {
  mkdir -p "$top/tools"
  cp /usr/bin/make "$top/tools/make"
  "$here/lib/in-debian13.sh" --bind "$top" /bin/sh -c "cd '$tree' &&
    PATH='$top/tools':\$PATH MPICHLIB_CPPFLAGS='-Wdate-time -D_FORTIFY_SOURCE=2' \
    MPICHLIB_CFLAGS='$flags' MPILIBNAME=mpich nice -n 10 ./configure $options \
    CPPFLAGS= CFLAGS= CXXFLAGS= BASH_SHELL=/bin/bash" >"$top/configure.log" 2>&1 || {
    tail -n 30 "$top/configure.log" >&2
    echo "error: configuring MPICH $ref in the Debian 13 root failed; its log is $top/configure.log" >&2
    return 1
  }
}

if [ "$(cat "$tree/.mpidd-configured" 2>/dev/null)" != "$recipe" ]; then
  ensure_packages libtool autoconf automake
  step "unpack $ref" unpack
  step "autogen" autogen
  step "configure in the Debian 13 root" configure_tree
  echo "$recipe" >"$tree/.mpidd-configured"
fi
echo "$tree"
