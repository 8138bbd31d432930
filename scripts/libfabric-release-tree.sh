#!/usr/bin/env bash
# Prepares upstream libfabric's source at a release tag, configured as
# Debian builds its libfabric1 package (dh_auto_configure's defaults with
# Debian's compiler flags, which include -g), in a tree kept outside the
# repo, and prints the tree's directory on the last line. Made only when
# missing (autogen and configure: a few minutes); the layout profiles of
# libfabric are compiled from it (scripts/write-ofi-profile.sh).
#
#   libfabric-release-tree.sh TAG   (v1.17.0, ...)
#
#   MPIDD_LIBFABRIC_GIT      a git directory holding upstream ofiwg/libfabric's
#                            tags (a clone or a bare mirror); required
#   MPIDD_LIBFABRIC_TREES    where to keep the trees
#                            (default ~/.cache/mpidd/libfabric-release)
#
# Debian 12's own source package (libfabric 1.17.0-3) is the better source,
# but this machine's mirror answers 404 for its files (apt-get source
# libfabric=1.17.0-3 fetches the .dsc only); its orig tarball is upstream's
# 1.17.0 release, its debian/rules passes no option that moves the structs
# the readers read (its build-dependencies only add providers: verbs, efa,
# psm, psm2, psm3, usnic, which the stock libfabric.so.1 names), and the
# profile is checked on every process before it is believed
# (mpihandles/src/ofi/endpoint.rs).
#
# The tree's .mpidd-configured names the tag, the commit it resolved to and
# the options, so a profile written from it can record them. Nothing of the
# source goes into the repo: only the offsets and sizes the profile holds.
# Each step's time is printed on standard error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

tag="${1:?usage: libfabric-release-tree.sh TAG (e.g. v1.17.0)}"
git_dir="${MPIDD_LIBFABRIC_GIT:?set MPIDD_LIBFABRIC_GIT to a git directory of upstream ofiwg/libfabric (git clone of ofiwg/libfabric)}"
commit="$(git --git-dir="$git_dir" rev-parse --verify "$tag^{commit}")" || {
  echo "error: $git_dir has no tag $tag" >&2
  exit 1
}
top="${MPIDD_LIBFABRIC_TREES:-$HOME/.cache/mpidd/libfabric-release}"
tree="$top/libfabric-${tag#v}"
# dh_auto_configure's own options (the paths are the profile's no concern).
options="--prefix=/usr --disable-silent-rules --disable-dependency-tracking"
recipe="$tag $commit $options"

step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "libfabric-release-tree: $name: $((SECONDS - start)) s" >&2
}

unpack() {
  rm -rf "$tree"
  mkdir -p "$tree"
  git --git-dir="$git_dir" archive "$commit" | tar -x -C "$tree"
}

configure_tree() {
  # shellcheck disable=SC2086
  (cd "$tree" && nice -n 10 ./autogen.sh && nice -n 10 ./configure \
    $options CFLAGS="$(dpkg-buildflags --get CFLAGS)" \
    CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)") >"$tree.configure.log" 2>&1 || {
    tail -n 30 "$tree.configure.log" >&2
    echo "error: configuring libfabric $tag failed; its log is $tree.configure.log" >&2
    exit 1
  }
}

if [ "$(cat "$tree/.mpidd-configured" 2>/dev/null)" != "$recipe" ]; then
  ensure_packages dpkg-dev build-essential libtool autoconf automake pkg-config
  step unpack unpack
  step configure configure_tree
  echo "$recipe" >"$tree/.mpidd-configured"
fi
echo "$tree"
