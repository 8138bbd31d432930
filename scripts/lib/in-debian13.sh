#!/usr/bin/env bash
# Runs CMD... as root inside the Debian 13 root (MPIDD_DEBIAN13_ROOT,
# default ${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13) through
# in-debian-root.sh, which says how; execs, so CMD keeps this pid.
#
#   in-debian13.sh [--bind DIR]... CMD [ARG]...
set -euo pipefail

root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
# Its callers run Python 3.13 in it: a root without it is not this one.
[ -x "$root/usr/bin/python3.13" ] || {
  echo "error: no Debian 13 root at $root: run bash scripts/python-envs.sh debian13 (scripts/test.sh does)" >&2
  exit 1
}
exec "$(dirname "$0")/in-debian-root.sh" "$root" "$@"
