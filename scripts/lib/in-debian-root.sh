#!/usr/bin/env bash
# Runs CMD... as root inside the Debian root ROOT that scripts/python-envs.sh
# makes (debian11, debian13), and execs it, so that the caller's child is
# CMD itself (a launcher started this way keeps its pid).
#
#   in-debian-root.sh ROOT [--bind DIR]... CMD [ARG]...
#
# --bind DIR makes the host's DIR visible at the same path inside the root
# (a test job's scratch directory, with its program), so that a path means
# the same on both sides.
#
# The root needs /proc (Python, ps, MPI's own lookups), /sys (hwloc's CPU
# topology, UCX's network devices), /dev with /dev/shm (MPI's shared memory)
# and /dev/pts. They are mounted in a mount namespace of CMD's own
# (unshare --mount, private propagation), never in the host's: they vanish
# with the last process of CMD, so nothing is left mounted under the cache,
# a later `rm -rf` of it cannot reach the host's /dev, and two commands run
# at once do not share or race on mounts. There is no pid namespace: a
# process inside has the same pid as seen from the host, so gdb and mpidd
# on the host reach it by the pid it prints, and open its files through
# /proc/PID/root.
set -euo pipefail

[ $# -ge 2 ] || {
  echo "usage: $0 ROOT [--bind DIR]... CMD [ARG]..." >&2
  exit 2
}
root="$(cd "$1" 2>/dev/null && pwd)" || {
  echo "error: no Debian root at $1: run bash scripts/python-envs.sh debian11 or debian13 (scripts/test.sh does)" >&2
  exit 1
}
shift

if [ "${MPIDD_IN_DEBIAN_ROOT_NS:-}" != "$root" ]; then
  [ -x "$root/bin/sh" ] && [ -f "$root/etc/debian_version" ] || {
    echo "error: no Debian root at $root: run bash scripts/python-envs.sh debian11 or debian13 (scripts/test.sh does)" >&2
    exit 1
  }
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: $0 mounts and chroots: it must run as root" >&2
    exit 1
  fi
  # Again, inside a new mount namespace (unshare execs: same pid).
  MPIDD_IN_DEBIAN_ROOT_NS="$root" exec unshare --mount --propagation private -- "$0" "$root" "$@"
fi
unset MPIDD_IN_DEBIAN_ROOT_NS

binds=()
while [ "${1:-}" = --bind ]; do
  binds+=("$2")
  shift 2
done
[ $# -gt 0 ] || {
  echo "usage: $0 ROOT [--bind DIR]... CMD [ARG]..." >&2
  exit 2
}

mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys" 2>/dev/null || mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
# The root runs on this machine, under its name: MPI looks that name up
# (MPICH's CH3 TCP channel resolves it at MPI_Init), and a root of its own
# (bullseye's debootstrap writes no /etc/hosts) may not know it.
if [ -e /etc/hosts ]; then
  [ -e "$root/etc/hosts" ] || : >"$root/etc/hosts"
  mount --bind /etc/hosts "$root/etc/hosts"
fi
for dir in "${binds[@]}"; do
  mkdir -p "$root/$dir"
  mount --bind "$dir" "$root/$dir"
done

# The root's own PATH, and none of the host's Python settings (pyenv's,
# a virtual environment's, pip's wheel directory).
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV PIP_FIND_LINKS PYENV_VERSION
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
exec chroot "$root" "$@"
