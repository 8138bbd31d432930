#!/usr/bin/env bash
# Prepares Debian 13's Open MPI source (openmpi 5.0.7-1), configured with
# debian/rules' options inside the Debian 13 root (its gcc and -dev
# packages), in a tree kept outside the repo, and prints the build
# directory on the last line. Made only when missing; the layout profile
# of Debian 13's stripped libmpi.so.40 is compiled from it
# (scripts/write-ompi5-profile.sh).
#
#   MPIDD_OMPI5_TREE      where to keep it (default ~/.cache/mpidd/openmpi-5.0.7-tree)
#   MPIDD_DEBIAN13_ROOT   the Debian 13 root (scripts/python-envs.sh debian13)
#
# The source comes from the host's own mirror, through a temporary apt
# configuration naming trixie's sources: neither the host's apt nor the
# shared root is changed. Each step's time is printed on standard error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

version=5.0.7-1
top="${MPIDD_OMPI5_TREE:-$HOME/.cache/mpidd/openmpi-5.0.7-tree}"
root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
build="$top/build"
# debian/rules' extra_flags for amd64 (dh_auto_configure adds --prefix and
# the paths), less what the root lacks or what builds no struct the
# decoders read: libfabric, PSM, PSM2 (transports: no -dev package in the
# root), Java and Fortran (bindings over the same C objects), PRRTE (the
# launcher, a library of its own). PMIx is Debian's external one, named by
# its directory since the root has no pkg-config.
options="--disable-silent-rules --disable-wrapper-runpath --with-verbs --without-libfabric \
--without-psm --without-psm2 --with-ucx --with-pmix=/usr/lib/x86_64-linux-gnu/pmix2 \
--with-libevent=external --with-hwloc=external --enable-ipv6 --with-devel-headers \
--with-slurm --with-sge --without-tm --sysconfdir=/etc/openmpi \
--libdir=/usr/lib/x86_64-linux-gnu/openmpi/lib --includedir=/usr/lib/x86_64-linux-gnu/openmpi/include \
--disable-mpi-fortran --disable-mpi-java --without-prrte"
recipe="openmpi $version; $options"

step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "debian13-ompi5-tree: $name: $((SECONDS - start)) s" >&2
}

fetch_source() {
  local apt tmp mirror
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" RETURN
  mirror="$(
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
      perl -0777 -ne 'for (split /\n\s*\n/) { next unless /^Types:.*\bdeb\b/m; print "$1\n" if /^URIs:\s*(\S+debian)\/?\s*$/m }'
    grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -E 's/\[[^]]*\]//' | awk '$2 ~ /debian\/?$/ { print $2 }' || true
  )"
  mirror="$(echo "$mirror" | head -n 1)"
  [ -n "$mirror" ] || {
    echo "error: no Debian mirror in the host's apt configuration" >&2
    return 1
  }
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
  echo "deb-src $mirror trixie main" >"$tmp/sources.list"
  apt=(apt-get -q -o "Dir::Etc::sourcelist=$tmp/sources.list" -o Dir::Etc::sourceparts=/nonexistent
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o Dir::Cache::pkgcache=
    -o Dir::Cache::srcpkgcache=)
  "${apt[@]}" update >"$top/source.log" 2>&1 &&
    (cd "$top" && "${apt[@]}" source --download-only "openmpi=$version") >>"$top/source.log" 2>&1 &&
    (cd "$top" && dpkg-source -x "openmpi_$version.dsc" src) >>"$top/source.log" 2>&1 || {
    cat "$top/source.log" >&2
    echo "error: fetching openmpi=$version's source from $mirror (trixie) failed" >&2
    return 1
  }
}

# Debian's patches touch configure.ac, a configure.m4 and a Makefile.am
# (paths, and hppa alone), which the release's configure already serves on
# amd64; as patched they would be newer than the autotools' outputs, and
# make would want automake, which the root lacks. They get the release's
# time again.
reset_patched_times() {
  local f
  sed -n 's|^+++ [^/]*/\([^[:space:]]*\).*|\1|p' "$top"/src/debian/patches/* | sort -u |
    while read -r f; do
      [ -e "$top/src/$f" ] && touch -r "$top/src/configure" "$top/src/$f"
    done
}

configure_tree() {
  # The root has no make: the host's (it needs only libc) is put on PATH.
  mkdir -p "$top/tools" "$build"
  cp /usr/bin/make "$top/tools/make"
  # shellcheck disable=SC2086
  "$here/lib/in-debian13.sh" --bind "$top" /bin/sh -c "cd '$build' &&
    PATH='$top/tools':\$PATH nice -n 10 ../src/configure --prefix=/usr $options CFLAGS='-g -O2'" \
    >"$top/configure.log" 2>&1 || {
    tail -n 30 "$top/configure.log" >&2
    echo "error: configuring Open MPI in the Debian 13 root failed; its log is $top/configure.log" >&2
    return 1
  }
}

[ -x "$root/usr/bin/mpicc.openmpi" ] || {
  echo "error: no Debian 13 root with Open MPI at $root: run bash scripts/python-envs.sh debian13" >&2
  exit 1
}
installed="$(chroot "$root" dpkg-query -W -f='${Version}' libopenmpi40)"
[ "$installed" = "$version" ] || {
  echo "error: the Debian 13 root has libopenmpi40 $installed, not $version, which this tree is for" >&2
  exit 1
}
# Debian builds the OFI MTL (--with-libfabric), which the root cannot
# configure (no libfabric-dev): its configure.m4 asks an endpoint tag
# (OMPI_REQUIRE_ENDPOINT_TAG([MTL])), which grows ompi_proc_t's
# proc_endpoints to 4 slots and puts the UCX PML's in the last. The tags
# are set in the configured tree as configure sets them with the MTL
# (components in the order configure visits them: bml, mtl, osc, pml):
# measured on Debian 13's own ranks run with --mca pml ucx, whose PML
# endpoint is in slot 3 (examples/tests/ompi5_ucx_queues.rs).
endpoint_tags() {
  local h="$build/opal/include/opal_config.h"
  grep -q '^#define OMPI_PROC_ENDPOINT_TAG_MTL 1$' "$h" && return 0
  sed -i -E \
    -e 's|^/\* #undef OMPI_PROC_ENDPOINT_TAG_MTL \*/$|#define OMPI_PROC_ENDPOINT_TAG_MTL 1|' \
    -e 's|^#define OMPI_PROC_ENDPOINT_TAG_UCX 1$|#define OMPI_PROC_ENDPOINT_TAG_UCX 2|' \
    -e 's|^#define OMPI_PROC_ENDPOINT_TAG_PML 2$|#define OMPI_PROC_ENDPOINT_TAG_PML 3|' \
    -e 's|^#define OMPI_PROC_ENDPOINT_TAG_MAX 3$|#define OMPI_PROC_ENDPOINT_TAG_MAX 4|' "$h"
  for tag in "MTL 1" "UCX 2" "PML 3" "MAX 4"; do
    grep -q "^#define OMPI_PROC_ENDPOINT_TAG_$tag\$" "$h" || {
      echo "error: $h does not set OMPI_PROC_ENDPOINT_TAG_$tag as Debian's configure does" >&2
      return 1
    }
  done
}

if [ "$(cat "$build/.mpidd-configured" 2>/dev/null)" != "$recipe" ]; then
  rm -rf "$top"
  mkdir -p "$top"
  step "fetch and unpack the source" fetch_source
  reset_patched_times
  step "configure in the Debian 13 root" configure_tree
  echo "$recipe" >"$build/.mpidd-configured"
fi
endpoint_tags
echo "$build"
