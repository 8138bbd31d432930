#!/usr/bin/env bash
# Configures Debian 11's own mpich source package (3.4.1-5~deb11u1) as its
# debian/rules does, in the Debian 11 root (scripts/python-envs.sh debian11)
# at the stock build directory, so that objects compiled there have the
# layouts, and the code, of bullseye's stripped libmpich.so.12. Used once,
# locally, to measure what a profile of that build holds; the tests never
# run it. Prints the tree's path inside the root on its last line.
#
#   MPIDD_DEBIAN11_ROOT   the root (default ~/.cache/mpidd/debian11)
#
# The source comes through a temporary apt configuration made from the
# root's own apt sources (retyped deb-src), so the machine's apt is left
# alone. As Debian's rules do, autogen.sh runs first (Debian's source has
# no generated configure for the embedded modules: yaksa, json-c). The
# build tools the root lacks (make, the autotools, patch, python3 for yaksa's
# generator, and libfabric-dev, which debian/rules' --with-libfabric names)
# are installed into it.
set -euo pipefail

version=3.4.1-5~deb11u1
root="${MPIDD_DEBIAN11_ROOT:-$HOME/.cache/mpidd/debian11}"
[ -f "$root/etc/debian_version" ] || {
  echo "error: no Debian 11 root at $root: run bash scripts/python-envs.sh debian11" >&2
  exit 1
}
here="$(cd "$(dirname "$0")" && pwd)"
stock="$root/usr/lib/x86_64-linux-gnu/libmpich.so.12"
# The buildd's directory, as -ffile-prefix-map left it in the stock file.
build_dir="$(strings -a "$stock" | grep -o 'ffile-prefix-map=/build/[^=]*' | sort -u | cut -d= -f2)"
[ -n "$build_dir" ] && [ "$(wc -l <<<"$build_dir")" -eq 1 ] || {
  echo "error: not one build directory in $stock: $build_dir" >&2
  exit 1
}
tree="$root$build_dir"
recipe="mpich $version, debian/rules' configure line, tarball configure"
if [ -f "$tree/.mpidd-configured" ] && [ "$(cat "$tree/.mpidd-configured")" = "$recipe" ]; then
  echo "$build_dir"
  exit 0
fi

apt_dir="$(mktemp -d)"
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts"
touch "$apt_dir/status"
shopt -s nullglob
lists=("$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*.list)
shopt -u nullglob
cat "${lists[@]}" | grep -E '^[[:space:]]*deb[[:space:]]' |
  sed -E 's/^([[:space:]]*)deb([[:space:]])/\1deb-src\2/' >"$apt_dir/sources.list"
cat >"$apt_dir/apt.conf" <<CONF
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "$apt_dir/parts";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir/cache";
Dir::State::status "$apt_dir/status";
CONF
work="$(mktemp -d)"
(cd "$work" && APT_CONFIG="$apt_dir/apt.conf" apt-get update -q >/dev/null &&
  APT_CONFIG="$apt_dir/apt.conf" apt-get source -q --download-only "mpich=$version" >/dev/null)
rm -rf "$tree"
mkdir -p "$(dirname "$tree")"
dpkg-source -x "$work"/mpich_*.dsc "$tree" >/dev/null
rm -rf "$work"

bash "$here/lib/in-debian-root.sh" "$root" sh -c \
  'apt-get install -y -q --no-install-recommends make autoconf automake libtool patch python3 libfabric-dev >/dev/null'
bash "$here/lib/in-debian-root.sh" "$root" sh -c "cd '$build_dir' && ./autogen.sh >autogen.log 2>&1" || {
  tail -n 30 "$tree/autogen.log" >&2
  exit 1
}
# debian/rules' flags (dpkg-buildflags on bullseye, as the stock file's
# MPII_Version_CC and MPII_Version_configure state them).
flags="-g -O2 -ffile-prefix-map=$build_dir=. -fstack-protector-strong -Wformat -Werror=format-security"
fflags="-O2 -ffile-prefix-map=$build_dir=. -fstack-protector-strong -fallow-invalid-boz -fallow-argument-mismatch"
bash "$here/lib/in-debian-root.sh" "$root" sh -c "cd '$build_dir' && \
  MPICHLIB_CPPFLAGS='-Wdate-time -D_FORTIFY_SOURCE=2' MPICHLIB_CFLAGS='$flags' MPICHLIB_CXXFLAGS='$flags' \
  MPICHLIB_FFLAGS='-g $fflags' MPICHLIB_FCFLAGS='-g $fflags -cpp' FFLAGS='$fflags' F77=f77 FC=gfortran TZ=UTC+0 \
  MPILIBNAME=mpich ./configure --build=x86_64-linux-gnu --prefix=/usr --disable-option-checking \
  --disable-silent-rules --libdir=/usr/lib/x86_64-linux-gnu --disable-maintainer-mode \
  --disable-dependency-tracking --with-libfabric=/usr --with-device=ch3 --with-pm=hydra --with-slurm=/usr \
  --with-hwloc-prefix=/usr --with-wrapper-dl-type=none --enable-shared --without-yaksa --enable-fortran=all \
  --disable-rpath --disable-wrapper-rpath --sysconfdir=/etc/mpich \
  --includedir=/usr/include/x86_64-linux-gnu/mpich --docdir=/usr/share/doc/mpich \
  CPPFLAGS= CFLAGS= CXXFLAGS= FFLAGS='$fflags' FCFLAGS='$fflags' BASH_SHELL=/bin/bash >configure.log 2>&1" || {
  tail -n 30 "$tree/configure.log" >&2
  exit 1
}
printf '%s\n' "$recipe" >"$tree/.mpidd-configured"
echo "$build_dir"
