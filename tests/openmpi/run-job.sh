#!/usr/bin/env bash
# run-job.sh - start/stop a small Open MPI job (mpirun -n NP wait_ranks) for MPIR tests.
#
# Usage:
#   run-job.sh start DIR [NP]   build DIR/wait_ranks if needed, start the job in the
#                               background, wait until all NP ranks reported, print
#                               KEY=VALUE lines (see below) on stdout.
#   run-job.sh stop  DIR        release the ranks (touch DIR/release), wait for mpirun
#                               to exit, kill leftovers; exit status = mpirun's status.
#   run-job.sh pids  DIR        re-print the KEY=VALUE lines of the running job.
#
# stdout of `start`/`pids` (shell-sourceable, one KEY=VALUE per line):
#   JOB_DIR=/abs/dir  RELEASE_FILE=/abs/dir/release  NP=4  SID=<session id>
#   MPIRUN_PID=<pid>  RANK_PIDS="<pid rank0> <pid rank1> ..."  RANK<i>_PID=<pid>
#   EXECUTABLE=/abs/dir/wait_ranks  HOST=<hostname as printed by rank 0>
# Diagnostics go to stderr.  Exit status: 0 ok, 1 failure, 2 usage.  Read all of stdout:
# if it is closed early (SIGPIPE) `start` counts as failed and kills the job.
#
# Environment:
#   RUN_JOB_TIMEOUT  seconds to wait for the ranks to start / the job to finish (30)
#   RUN_JOB_MAX_LIFE seconds after which ranks finish on their own (600): a safety net
#                    so a forgotten job never lingers.
#   MPIRUN, MPICC    override the tools (default: mpirun.openmpi, mpicc.openmpi: Debian's mpich, if installed too, may own the plain names)
#
# Start is idempotent: a job previously started from DIR is stopped first.
# On any failure during start every process of the job is killed (trap).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/wait_ranks.c"
TIMEOUT=${RUN_JOB_TIMEOUT:-30}
MAX_LIFE=${RUN_JOB_MAX_LIFE:-600}
MPIRUN=${MPIRUN:-mpirun.openmpi}
MPICC=${MPICC:-mpicc.openmpi}

# Settings that make Open MPI 4.1 start quietly and reliably as root in a container:
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # == --allow-run-as-root
export OMPI_MCA_rmaps_base_oversubscribe=1                         # == --oversubscribe
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1                    # shared memory only, no network/IB/UCX probing
export OMPI_MCA_btl_vader_single_copy_mechanism=none               # no CMA (needs ptrace rights)
if ! command -v ssh >/dev/null 2>&1 && ! command -v rsh >/dev/null 2>&1; then
    export OMPI_MCA_plm_rsh_agent=/bin/false   # plm/rsh aborts if no ssh/rsh exists, even for local jobs
fi

die() { echo "run-job.sh: error: $*" >&2; exit 1; }
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# All processes of the session created for the job (wrapper sh, mpirun, ranks).
session_pids() {
    local sid=$1
    [ -n "$sid" ] || return 0
    ps -e -o pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }'
}

# Running (zombies count as dead: orphaned zombies are reaped by PID 1, which may be slow).
alive() {
    local st
    [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "${st#Z}" = "$st" ]
}

# Kill everything belonging to the job recorded in $DIR (by pid, never by name).
kill_job() {
    local dir=$1 sid="" mp="" pids p i
    [ -f "$dir/job.sid" ] && sid=$(cat "$dir/job.sid" 2>/dev/null || true)
    [ -f "$dir/mpirun.pid" ] && mp=$(cat "$dir/mpirun.pid" 2>/dev/null || true)
    pids="$(session_pids "$sid") $(awk '/^RANK /{print $6}' "$dir/job.out" 2>/dev/null || true)"
    [ -n "$mp" ] && pids="$pids $mp"
    # Only signal pids that still belong to our session (guards against pid reuse).
    local mine=""
    for p in $pids; do
        if alive "$p" && [ "$(ps -o sid= -p "$p" 2>/dev/null | tr -d ' ')" = "$sid" ]; then
            mine="$mine $p"
        fi
    done
    [ -z "${mine// }" ] && return 0
    # TERM mpirun first: it forwards the signal to the ranks and cleans up its session dir.
    alive "$mp" && kill -TERM "$mp" 2>/dev/null || true
    for i in $(seq 1 30); do
        local left=""
        for p in $mine; do alive "$p" && left="$left $p"; done
        [ -z "${left// }" ] && return 0
        [ "$i" = 10 ] && kill -TERM $left 2>/dev/null || true
        sleep 0.1
    done
    for p in $mine; do alive "$p" && kill -KILL "$p" 2>/dev/null || true; done
    sleep 0.2
}

build() {
    local dir=$1
    command -v "$MPICC" >/dev/null 2>&1 || die "$MPICC not found (apt-get install openmpi-bin libopenmpi-dev)"
    if [ ! -x "$dir/wait_ranks" ] || [ "$SRC" -nt "$dir/wait_ranks" ]; then
        "$MPICC" -O0 -g -Wall -o "$dir/wait_ranks.tmp.$$" "$SRC" >&2 || die "mpicc failed"
        mv -f "$dir/wait_ranks.tmp.$$" "$dir/wait_ranks"
    fi
}

print_info() {
    local dir=$1 np=$2 i pid all=""
    echo "JOB_DIR=$dir"
    echo "RELEASE_FILE=$dir/release"
    echo "EXECUTABLE=$dir/wait_ranks"
    echo "NP=$np"
    echo "SID=$(cat "$dir/job.sid")"
    echo "MPIRUN_PID=$(cat "$dir/mpirun.pid")"
    for i in $(seq 0 $((np - 1))); do
        pid=$(awk -v r="$i" '$1 == "RANK" && $2 == r { print $6; exit }' "$dir/job.out")
        all="$all${all:+ }$pid"
        echo "RANK${i}_PID=$pid"
    done
    echo "RANK_PIDS=\"$all\""
    echo "HOST=$(awk '$1 == "RANK" && $2 == 0 { print $8; exit }' "$dir/job.out")"
}

STARTED=1 START_DIR=""
on_exit() { if [ "$STARTED" = 0 ] && [ -n "$START_DIR" ]; then kill_job "$START_DIR"; fi; }

cmd_start() {
    local dir=$1 np=$2 n mp sid pid
    [[ "$np" =~ ^[1-9][0-9]*$ ]] || die "NP must be a positive integer"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    command -v "$MPIRUN" >/dev/null 2>&1 || die "$MPIRUN not found"
    command -v setsid >/dev/null 2>&1 || die "setsid not found (util-linux)"

    # Idempotent: get rid of any previous job started from this directory.
    kill_job "$dir"
    rm -f "$dir/release" "$dir/job.out" "$dir/job.err" "$dir/job.rc" "$dir/mpirun.pid" "$dir/job.sid"

    build "$dir"

    STARTED=0 START_DIR=$dir
    trap on_exit EXIT
    trap 'exit 1' INT TERM HUP

    # New session: wrapper sh (session leader) -> mpirun -> ranks (each rank gets its own
    # process group from mpirun, but all stay in this session).  stdin=/dev/null because
    # mpirun forwards its stdin to rank 0.
    ( cd "$dir" && exec setsid sh -c '
        echo $$ > job.sid
        "$1" -n "$2" ./wait_ranks "$3" "$4" </dev/null >job.out 2>job.err &
        echo $! > mpirun.pid
        wait $!
        echo $? > job.rc' sh "$MPIRUN" "$np" "$dir/release" "$MAX_LIFE" ) </dev/null >/dev/null 2>&1 &
    # job.sid / mpirun.pid are written by the wrapper (sh's $$ is the session leader).

    # Bounded wait for all NP "RANK ..." lines.
    local deadline=$((SECONDS + TIMEOUT))
    while :; do
        n=$(grep -c '^RANK ' "$dir/job.out" 2>/dev/null || true)
        [ "${n:-0}" -ge "$np" ] && break
        if [ -f "$dir/job.rc" ] && [ ! -s "$dir/mpirun.pid" ] ; then
            die "failed to start $MPIRUN"
        fi
        if [ -f "$dir/job.rc" ]; then
            echo "--- job.err:" >&2; cat "$dir/job.err" >&2 || true
            die "mpirun exited early with status $(cat "$dir/job.rc") after $n/$np ranks started"
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "--- job.err:" >&2; cat "$dir/job.err" >&2 || true
            die "timeout after ${TIMEOUT}s: only ${n:-0}/$np ranks reported"
        fi
        sleep 0.05
    done
    [ -s "$dir/mpirun.pid" ] || die "mpirun pid not recorded"
    mp=$(cat "$dir/mpirun.pid")
    sid=$(cat "$dir/job.sid")
    alive "$mp" || die "mpirun ($mp) is not running"
    [ "$(ps -o sid= -p "$mp" | tr -d ' ')" = "$sid" ] || die "mpirun pid $mp is not in session $sid"
    # Sanity: every rank pid must be a child of mpirun (mpirun -> ranks, no orted locally).
    for pid in $(awk '/^RANK /{print $6}' "$dir/job.out"); do
        [ "$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$mp" ] ||
            die "rank pid $pid is not a child of mpirun $mp"
    done
    print_info "$dir" "$np"
    STARTED=1
}

cmd_stop() {
    local dir=$1 mp="" rc
    dir=$(cd "$dir" 2>/dev/null && pwd) || die "no such directory: $1"
    [ -f "$dir/mpirun.pid" ] || { echo "run-job.sh: no job in $dir" >&2; return 0; }
    mp=$(cat "$dir/mpirun.pid")
    touch "$dir/release"
    local deadline=$((SECONDS + TIMEOUT))
    while [ ! -f "$dir/job.rc" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.05; done
    if [ ! -f "$dir/job.rc" ]; then
        echo "run-job.sh: job did not finish within ${TIMEOUT}s after release; killing it" >&2
        kill_job "$dir"
        return 1
    fi
    kill_job "$dir"   # normally a no-op
    rc=$(cat "$dir/job.rc")
    [ "$rc" = 0 ] || { echo "run-job.sh: mpirun ($mp) exited with status $rc" >&2; cat "$dir/job.err" >&2 || true; }
    return "$rc"
}

cmd_pids() {
    local dir
    dir=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
    [ -f "$dir/mpirun.pid" ] && alive "$(cat "$dir/mpirun.pid")" || die "no running job in $dir"
    local np
    np=$(awk '$1 == "RANK" { print $4; exit }' "$dir/job.out")
    print_info "$dir" "$np"
}

[ $# -ge 2 ] || usage
case $1 in
    start) [ $# -le 3 ] || usage; cmd_start "$2" "${3:-4}" ;;
    stop)  [ $# -eq 2 ] || usage; cmd_stop "$2" ;;
    pids)  [ $# -eq 2 ] || usage; cmd_pids "$2" ;;
    *)     usage ;;
esac
