#!/usr/bin/env bash
# Prepares Debian 12's UCX source (ucx 1.13.1-1), configured with
# debian/rules' options, in a tree kept outside the repo, and prints the
# tree's directory on the last line. Made only when missing (a few
# minutes); the layout profiles of Debian's stripped libucp.so.0 are
# compiled from it (scripts/write-ucx-profile.sh,
# scripts/write-stock-mpich-profile.sh).
#
#   MPIDD_DEBIAN_UCX_TREE   where to keep it (default ~/.cache/mpidd/debian-ucx)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

ucx_version=1.13.1-1
ensure_packages libucx0
[ "$(dpkg-query -W -f='${Version}' libucx0)" = "$ucx_version" ] || {
  echo "error: libucx0 is not $ucx_version, which the UCX profiles are made for" >&2
  exit 1
}
ucx_top="${MPIDD_DEBIAN_UCX_TREE:-$HOME/.cache/mpidd/debian-ucx}"
ucx_tree="$ucx_top/ucx-1.13.1"
# debian/rules' configure options (dh_auto_configure adds the paths).
ucx_options="--enable-mt --with-verbs --disable-backtrace-detail --disable-logging --enable-devel-headers --enable-examples --enable-cma"
if [ "$(cat "$ucx_tree/.mpidd-configured" 2>/dev/null)" != "$ucx_version $ucx_options" ]; then
  ensure_deb_src
  ensure_packages dpkg-dev build-essential libtool autoconf automake pkg-config \
    libnuma-dev libibverbs-dev librdmacm-dev
  rm -rf "$ucx_top"
  mkdir -p "$ucx_top"
  (cd "$ucx_top" && apt-get source -q "ucx=$ucx_version" >"$ucx_top/source.log" 2>&1) || {
    cat "$ucx_top/source.log" >&2
    echo "error: apt-get source ucx=$ucx_version failed" >&2
    exit 1
  }
  # shellcheck disable=SC2086
  (cd "$ucx_tree" && nice -n 10 ./autogen.sh && nice -n 10 ./configure --prefix=/usr \
    $ucx_options CFLAGS="$(dpkg-buildflags --get CFLAGS)") >"$ucx_top/configure.log" 2>&1 || {
    tail -n 30 "$ucx_top/configure.log" >&2
    echo "error: configuring UCX failed; its log is $ucx_top/configure.log" >&2
    exit 1
  }
  echo "$ucx_version $ucx_options" >"$ucx_tree/.mpidd-configured"
fi
echo "$ucx_tree"
