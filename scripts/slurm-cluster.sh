#!/usr/bin/env bash
# A real Slurm cluster of several nodes on this one machine, on loopback,
# for the tests of `mpidd job --slurm` (examples/tests/slurm_job.rs) and
# scripts/bench-slurm.sh.
#
#   slurm-cluster.sh start DIR [NODES]   bring it up (idempotent), print
#                                         `export SLURM_CONF=...`
#   slurm-cluster.sh stop DIR             tear it down: jobs, daemons, tasks
#   slurm-cluster.sh status DIR           exit 0 when it answers
#
# Everything lives under DIR: the configuration, munge's key and socket,
# Slurm's state, spool directories, pid files and logs. Nothing in /etc is
# read or written: every Slurm command finds the cluster through SLURM_CONF,
# and munge is reached through its own socket (AuthInfo=socket=...). It
# installs nothing: scripts/test.sh installs the Debian packages (slurmctld,
# slurmd, slurm-client, munge).
#
# The nodes are n1..nN (default 2), one `slurmd -N nI` each, all on
# 127.0.0.1 with their own port. The pitfalls of running several slurmd on
# one host, and what avoids each:
# - every slurmd needs its own port (NodeName=... Port=) and its own spool
#   directory (SlurmdSpoolDir with %n), pid file and log (%n);
# - the nodes declare more CPUs than the machine has, which slurmd accepts
#   only with SlurmdParameters=config_overrides;
# - no cgroups (containers rarely have them writable): processes are
#   tracked by their parents (proctrack/linuxproc), tasks are not bound;
# - slurmctld accepts only the host named in SlurmctldHost: this host's
#   short name, with 127.0.0.1 as its address;
# - ports are chosen free when the cluster is first started and kept in the
#   configuration, so two clusters (two test runs) do not collide.
# MPI under it: `srun --mpi=pmi2` (slurmstepd serves PMI-1 and PMI-2 wire
# protocols to MPICH's own PMI client). Open MPI's `--mpi=pmix` fails here:
# both slurmd share one /tmp, and the second node's PMIx server finds the
# first one's directory (/tmp/spmix_appdir_*).
set -euo pipefail

usage() {
  echo "usage: $0 start|stop|status DIR [NODES]" >&2
  exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
nodes=${3:-2}
conf=$dir/etc/slurm.conf
export SLURM_CONF=$conf

need() {
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
      echo "error: $tool is missing: install Debian's slurmctld slurmd slurm-client munge" \
        "(scripts/test.sh does)" >&2
      exit 1
    fi
  done
}

sbin() {
  if command -v "$1" >/dev/null 2>&1; then command -v "$1"; else echo "/usr/sbin/$1"; fi
}

alive() {
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

# A TCP port no one listens on, from a range above the usual ephemeral
# ones' start, avoiding `taken` (ports already given out in this run).
taken=" "
free_port() {
  local used port
  used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 20000))
    if ! grep -qx "$port" <<<"$used" && [[ $taken != *" $port "* ]]; then
      taken+="$port "
      echo "$port"
      return
    fi
  done
  echo "error: no free TCP port found" >&2
  exit 1
}

write_config() {
  local host ctld_port user
  host=$(hostname -s)
  ctld_port=$(free_port)
  user=$(id -un)
  mkdir -p "$dir"/{etc,munge,state,log,run}
  for i in $(seq 1 "$nodes"); do mkdir -p "$dir/spool/n$i"; done
  chmod 700 "$dir/munge" "$dir/etc"
  {
    echo "# Written by scripts/slurm-cluster.sh: a local cluster of $nodes nodes on loopback."
    echo "ClusterName=mpidd"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmUser=$user"
    echo "SlurmdUser=$user"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$dir/munge/munge.socket"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
    echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "SlurmdParameters=config_overrides"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "MailProg=/bin/true"
    echo "PlugStackConfig=$dir/etc/plugstack.conf"
    echo "SlurmdTimeout=30"
    echo "InactiveLimit=0"
    echo "KillWait=2"
    echo "MinJobAge=10"
    echo "TmpFS=$dir/tmp"
    for i in $(seq 1 "$nodes"); do
      echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$(free_port) CPUs=32 RealMemory=1000 State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"$conf.tmp"
  mv "$conf.tmp" "$conf"
  : >"$dir/etc/plugstack.conf"
  mkdir -p "$dir/tmp"
  if [ ! -s "$dir/etc/munge.key" ]; then
    (umask 077 && head -c 1024 /dev/urandom >"$dir/etc/munge.key")
  fi
  chmod 600 "$dir/etc/munge.key"
}

start_munge() {
  alive "$dir/munge/munged.pid" && return
  rm -f "$dir/munge/munge.socket" "$dir/munge/munge.socket.lock"
  # --force: munged refuses root and directories it finds too open
  # without it; this key and socket serve only this cluster.
  "$(sbin munged)" --force \
    --socket="$dir/munge/munge.socket" \
    --key-file="$dir/etc/munge.key" \
    --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" 2>>"$dir/log/munged.log"
}

node_count() {
  grep -c '^NodeName=' "$conf"
}

start() {
  need slurmctld slurmd munged srun sinfo scontrol
  if [ -s "$conf" ] && running && [ "$(node_count)" = "$nodes" ]; then
    wait_idle
    echo "export SLURM_CONF=$conf"
    return
  fi
  stop >/dev/null 2>&1 || true
  write_config
  start_munge
  # -c: a clean start, with no jobs from an earlier run of this directory;
  # -i: go on when the saved state does not fit the configuration.
  "$(sbin slurmctld)" -c -i
  for i in $(seq 1 "$nodes"); do
    "$(sbin slurmd)" -N "n$i"
  done
  wait_idle
  echo "export SLURM_CONF=$conf"
}

running() {
  alive "$dir/munge/munged.pid" && alive "$dir/run/slurmctld.pid" || return 1
  for i in $(seq 1 "$(node_count)"); do
    alive "$dir/run/slurmd-n$i.pid" || return 1
  done
  timeout 5 scontrol ping >/dev/null 2>&1
}

# Waits until every node has registered and is idle (or allocated: a
# cluster already up may be running jobs).
wait_idle() {
  local states
  for _ in $(seq 1 150); do
    states=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true)
    if [ "$(grep -cE ' (idle|mixed|allocated)$' <<<"$states")" = "$(node_count)" ]; then
      return
    fi
    sleep 0.2
  done
  echo "error: the nodes of $dir did not come up within 30 s:" >&2
  echo "$states" >&2
  tail -n 20 "$dir"/log/*.log >&2 || true
  exit 1
}

# Every process below `pid`, deepest first.
descendants() {
  local kids
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  for k in $kids; do
    descendants "$k"
    echo "$k"
  done
}

kill_pidfile() {
  local file=$1 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# slurmstepd runs on by itself when its slurmd is gone: the step daemons
# of this cluster, and their tasks, are found by their configuration
# (slurmd passes SLURM_CONF on to them).
stray_steps() {
  local p
  for p in $(pgrep -x slurmstepd 2>/dev/null || true); do
    # (A process may end between pgrep and the read.)
    if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$conf"; then
      echo "$p"
    fi
  done
}

stop() {
  if [ -s "$conf" ] && alive "$dir/run/slurmctld.pid"; then
    timeout 5 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
  fi
  local steps victims
  steps=$(stray_steps)
  victims=""
  for s in $steps; do victims+=" $(descendants "$s" | tr '\n' ' ') $s"; done
  for i in $(seq 1 64); do
    [ -e "$dir/run/slurmd-n$i.pid" ] && kill_pidfile "$dir/run/slurmd-n$i.pid"
  done
  kill_pidfile "$dir/run/slurmctld.pid"
  kill_pidfile "$dir/munge/munged.pid"
  # Whatever the daemons left: step daemons and their tasks.
  # shellcheck disable=SC2086
  [ -z "${victims// /}" ] || kill -KILL $victims 2>/dev/null || true
  for s in $(stray_steps); do
    # shellcheck disable=SC2046
    kill -KILL $(descendants "$s") "$s" 2>/dev/null || true
  done
  echo "stopped the cluster in $dir"
}

case $cmd in
start) start ;;
stop) stop ;;
status) running ;;
*) usage ;;
esac
