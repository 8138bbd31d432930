"""Runs a command as a child subreaper, and reaps every process orphaned under it.

    python3 scripts/lib/reaping-parent.py PIDFILE COMMAND ARGS...

writes the command's pid to PIDFILE and exits with its status once the
command and every process it left behind have ended. A launcher such as
mpirun may exit before it has reaped all of its ranks when they are killed;
the orphans then go to the nearest subreaper, this process, rather than to
an init that (in some containers) never reaps them and keeps them as zombies.
"""

import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    if len(sys.argv) < 3:
        sys.exit("usage: reaping-parent.py PIDFILE COMMAND ARGS...")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    child = os.fork()
    if child == 0:
        try:
            os.execvp(sys.argv[2], sys.argv[2:])
        finally:
            os._exit(127)
    with open(sys.argv[1], "w", encoding="ascii") as f:
        f.write(f"{child}\n")
    status = 0
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            return status
        if pid == child:
            status = os.waitstatus_to_exitcode(wait_status)
            status = status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
