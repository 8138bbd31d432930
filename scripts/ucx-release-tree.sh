#!/usr/bin/env bash
# Prepares upstream UCX's source at a release tag, configured with the
# options Debian's debian/rules gives UCX, in a tree kept outside the repo,
# and prints the tree's directory on the last line. Made only when missing
# (autogen and configure: a few minutes); the layout profiles of UCX
# release families are compiled from it (scripts/write-ucx-family-profile.sh).
#
#   ucx-release-tree.sh TAG [FLAVOUR]   (v1.18.1, v1.20.1, ...)
#
#   FLAVOUR  debian (the default): debian/rules' options, assertions on
#            (UCX's default), as Debian's libucx0 is built
#            release: contrib/configure-release's options (assertions and
#            parameter checks off) with --enable-mt, as the UCX pip's
#            wheels bundle is built (its libucp has no assertion's text,
#            and the check on the process reads its worker so)
#
#   MPIDD_UCX_GIT          a git directory holding upstream openucx/ucx's
#                          tags (a clone or a bare mirror); required
#   MPIDD_UCX_RELEASE_TREES where to keep the trees
#                          (default ~/.cache/mpidd/ucx-release)
#
# The tree's .mpidd-configured names the tag, the commit it resolved to and
# the options, so a profile written from it can record them. Nothing of the
# source goes into the repo: only the offsets and sizes the profile holds.
#
# Debian 13's own source package (ucx 1.18.1+ds-2) is the better source for
# Debian 13's libucp, but this machine's mirror answers 404 for its files
# (apt-get source ucx=1.18.1+ds-2 through a temporary trixie configuration,
# as scripts/debian13-ompi5-tree.sh fetches Open MPI's); its patches touch
# no struct the readers read, and the profile is checked on every process.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

tag="${1:?usage: ucx-release-tree.sh TAG (e.g. v1.18.1)}"
git_dir="${MPIDD_UCX_GIT:?set MPIDD_UCX_GIT to a git directory of upstream openucx/ucx (git clone of openucx/ucx)}"
commit="$(git --git-dir="$git_dir" rev-parse --verify "$tag^{commit}")" || {
  echo "error: $git_dir has no tag $tag" >&2
  exit 1
}
top="${MPIDD_UCX_RELEASE_TREES:-$HOME/.cache/mpidd/ucx-release}"
flavour="${2:-debian}"
case "$flavour" in
debian)
  tree="$top/ucx-${tag#v}"
  # debian/rules' configure options, as scripts/debian-ucx-tree.sh gives
  # them for Debian 12 (dh_auto_configure adds the paths).
  options="--enable-mt --with-verbs --disable-backtrace-detail --disable-logging --enable-devel-headers --enable-examples --enable-cma"
  ;;
release)
  tree="$top/ucx-${tag#v}-release"
  # contrib/configure-release's options, with threads.
  options="--disable-logging --disable-debug --disable-assertions --disable-params-check --enable-mt"
  ;;
*)
  echo "error: no flavour $flavour: debian or release" >&2
  exit 1
  ;;
esac
recipe="$tag $commit $options"

step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "ucx-release-tree: $name: $((SECONDS - start)) s" >&2
}

unpack() {
  rm -rf "$tree"
  mkdir -p "$tree"
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tree"
}

configure_tree() {
  # shellcheck disable=SC2086
  (cd "$tree" && nice -n 10 ./autogen.sh && nice -n 10 ./configure --prefix=/usr \
    $options CFLAGS="$(dpkg-buildflags --get CFLAGS)") >"$tree.configure.log" 2>&1 || {
    tail -n 30 "$tree.configure.log" >&2
    echo "error: configuring UCX $tag failed; its log is $tree.configure.log" >&2
    return 1
  }
}

if [ "$(cat "$tree/.mpidd-configured" 2>/dev/null)" != "$recipe" ]; then
  ensure_packages dpkg-dev build-essential libtool autoconf automake pkg-config \
    libnuma-dev libibverbs-dev librdmacm-dev
  mkdir -p "$top"
  step "unpack $tag" unpack
  step "autogen and configure" configure_tree
  echo "$recipe" >"$tree/.mpidd-configured"
fi
echo "$tree"
