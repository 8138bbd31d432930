#!/usr/bin/env bash
# Builds Open MPI 5.0.7's own message-queue library, libompi_dbg_msgq.so,
# with debug info, from Debian 13's source as Debian configures it
# (scripts/debian13-ompi5-tree.sh), inside the Debian 13 root, into a
# directory kept outside the repo. Made only when missing; prints that
# directory on its last line.
#
#   MPIDD_OMPI5_DLL       where to keep it (default ~/.cache/mpidd/openmpi-5.0.7-dll)
#   MPIDD_OMPI5_TREE      the configured tree (scripts/debian13-ompi5-tree.sh)
#   MPIDD_DEBIAN13_ROOT   the Debian 13 root (scripts/python-envs.sh debian13)
#
# The library is two translation units of ompi/debuggers/ (ompi_msgq_dll.c
# and ompi_common_dll.c), compiled with the flags the tree's Makefile gives
# them: Debian's CFLAGS less the optimisation flags, and -g. They are
# compiled by hand, outside the tree, which stays as configured. Debian
# ships the same library stripped (openmpi40/libompi_dbg_msgq.so);
# examples/tests/ompi5_debian13.rs runs this one on Debian 13's ranks
# (mpidd queues --compare-dll). Each step's time is printed on standard
# error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

out="${MPIDD_OMPI5_DLL:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/openmpi-5.0.7-dll}"
root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
recipe="openmpi 5.0.7-1 ompi/debuggers: ompi_msgq_dll.c ompi_common_dll.c; -DNDEBUG -mcx16 -g -fPIC"
if [ "$(cat "$out/.mpidd-complete" 2>/dev/null)" = "$recipe" ] && [ -f "$out/libompi_dbg_msgq.so" ]; then
  echo "$out"
  exit 0
fi

start=$SECONDS
build="$(bash "$here/debian13-ompi5-tree.sh" | tail -n 1)"
top="$(dirname "$build")"
src="$top/src"
echo "build-ompi5-dll: configured tree: $((SECONDS - start)) s" >&2

# Built in a directory of its own under /tmp, seen at the same path inside
# the root (in-debian13.sh makes its mount point in the root's /tmp, which
# is removed with it), then moved into place: an interrupted build leaves
# no half library.
work="$(mktemp -d /tmp/mpidd-ompi5-dll.XXXXXX)"
trap 'rm -rf "$work"; rmdir "$root$work" 2>/dev/null || true' EXIT

# The Makefile's DEFS, DEFAULT_INCLUDES and CPPFLAGS for ompi/debuggers,
# with its relative directories made absolute, and its CFLAGS
# (CFLAGS_WITHOUT_OPTFLAGS and DEBUGGER_CFLAGS); -fPIC as libtool adds.
flags="-DHAVE_CONFIG_H -I$build/ompi/debuggers -I$src/ompi/debuggers \
-I$build/opal/include -I$build/ompi/include -I$build/oshmem/include \
-iquote$src -iquote$build -iquote$src/opal/include -iquote$src/ompi/include \
-iquote$src/oshmem/include -I/usr/lib/x86_64-linux-gnu/pmix2/include \
-DNDEBUG -mcx16 -g -fPIC"
start=$SECONDS
"$here/lib/in-debian13.sh" --bind "$top" --bind "$work" /bin/sh -c "
  set -e
  cd '$work'
  gcc $flags -c '$src/ompi/debuggers/ompi_msgq_dll.c' -o ompi_msgq_dll.o
  gcc $flags -c '$src/ompi/debuggers/ompi_common_dll.c' -o ompi_common_dll.o
  gcc -shared -o libompi_dbg_msgq.so ompi_msgq_dll.o ompi_common_dll.o
" >"$work/build.log" 2>&1 || {
  cat "$work/build.log" >&2
  echo "error: compiling libompi_dbg_msgq.so in the Debian 13 root failed" >&2
  exit 1
}
echo "build-ompi5-dll: compile and link: $((SECONDS - start)) s" >&2

mkdir -p "$out"
mv "$work/libompi_dbg_msgq.so" "$out/libompi_dbg_msgq.so"
echo "$recipe" >"$out/.mpidd-complete"
echo "$out"
