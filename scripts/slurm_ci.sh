#!/usr/bin/env bash
# A real one-node Slurm cluster for CI (Debian 12's slurm-wlm 22.05 and munge, installed by
# scripts/setup.sh), so the `run --executor slurm` test (tests/cluster/slurm_e2e_test.sh) drives
# the actual sbatch, squeue, sacct and scancel. Idempotent: `start` on a running cluster only
# checks it, `stop` on a stopped one does nothing.
#   bash scripts/slurm_ci.sh start    # munged, slurmctld, slurmd; waits until the node is idle
#   bash scripts/slurm_ci.sh stop     # ends the daemons this script started (munged only if it
#                                     # started it), keeps the logs
#   bash scripts/slurm_ci.sh status   # exit 0 when the cluster answers
#   bash scripts/slurm_ci.sh env      # prints `export SLURM_CONF=...` for the client commands
# The configuration lives in PTXB_SLURM_DIR (default /var/tmp/ptxb-slurm), never in /etc/slurm:
# clients find it through SLURM_CONF, so a machine's own Slurm setup is left alone.
#
# Why these settings: the CI machine is a container with 2 cores and no systemd or cgroup
# delegation, so the daemons run as root (SlurmUser=root), track processes by parent pid
# (proctrack/linuxproc) and bind nothing (task/none); the node declares 4 CPU slots
# (SlurmdParameters=config_overrides lets it claim more than it has) so 4 array tasks of one
# CPU each run at once; no accounting daemon (sacct then reports "accounting storage is
# disabled", which the scheduler code handles by trusting squeue alone).
set -euo pipefail

DIR=${PTXB_SLURM_DIR:-/var/tmp/ptxb-slurm}
CONF=$DIR/slurm.conf
HOST=$(hostname -s)
export SLURM_CONF=$CONF
# Ports away from the defaults (6817/6818): a machine's own Slurm, if any, keeps them.
CTLD_PORT=${PTXB_SLURMCTLD_PORT:-6917}
SLURMD_PORT=${PTXB_SLURMD_PORT:-6918}
READY_TIMEOUT_S=${PTXB_SLURM_READY_TIMEOUT_S:-120}

log() { echo "slurm_ci: $*" >&2; }

# A daemon whose pid file names a live process. A zombie counts as gone: in a container whose
# init does not reap, an ended daemon stays a zombie, and kill -0 still succeeds on it.
alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null && [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" != Z* ]]
}

write_config() {
  mkdir -p "$DIR/state" "$DIR/spool"
  cat >"$CONF.tmp" <<EOF
# Written by scripts/slurm_ci.sh: a one-node CI cluster.
ClusterName=ptxbci
SlurmctldHost=$HOST
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
# scancel: SIGTERM, then SIGKILL 5 s later (the worker stops cleanly well within that).
KillWait=5
# Finished jobs stay visible to squeue/scontrol for 5 minutes.
MinJobAge=300
NodeName=$HOST CPUs=4 RealMemory=1024 State=UNKNOWN
PartitionName=ci Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

start_munge() {
  mkdir -p "$DIR"
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then return; fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  [[ -f /etc/munge/munge.key ]] || mungekey --create --keyfile=/etc/munge/munge.key
  # The Debian package owns these by the munge user; running munged as root (no systemd
  # here) needs them to be root's, or munged refuses to start.
  chown -R root:root /etc/munge /run/munge /var/log/munge /var/lib/munge
  chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key
  munged --force
  touch "$DIR/munged.ours"  # started here: `stop` ends it again
  for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && return
    sleep 0.1
  done
  log "munged did not come up"
  return 1
}

ready() { [[ "$(sinfo -h -N -o %t 2>/dev/null | head -1)" =~ ^(idle|mix|alloc)$ ]]; }

start() {
  for tool in slurmctld slurmd sbatch munged; do
    command -v "$tool" >/dev/null || { log "missing $tool (bash scripts/setup.sh installs slurm-wlm and munge)"; return 1; }
  done
  if alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid" && ready; then
    log "already running ($CONF)"
    return 0
  fi
  local started=$SECONDS
  write_config
  start_munge
  # -c: a clean start (no saved jobs from an earlier CI run).
  alive "$DIR/slurmctld.pid" || slurmctld -c
  alive "$DIR/slurmd.pid" || slurmd -N "$HOST"
  while ! ready; do
    if ((SECONDS - started > READY_TIMEOUT_S)); then
      log "the node is not idle after ${READY_TIMEOUT_S} s; last log lines:"
      tail -n 20 "$DIR/slurmctld.log" "$DIR/slurmd.log" >&2 || true
      return 1
    fi
    # A node that came up DOWN (an earlier unclean stop) is put back into service.
    scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true
    sleep 0.5
  done
  log "up in $((SECONDS - started)) s: node $HOST, 4 CPU slots, partition ci ($CONF)"
}

stop() {
  local name pid_file
  for name in slurmd slurmctld; do
    pid_file=$DIR/$name.pid
    if alive "$pid_file"; then
      kill "$(cat "$pid_file")"
      for _ in $(seq 50); do alive "$pid_file" || break; sleep 0.1; done
    fi
    rm -f "$pid_file"
  done
  if [[ -f $DIR/munged.ours ]] && alive /run/munge/munged.pid; then
    kill "$(cat /run/munge/munged.pid)"
  fi
  rm -f "$DIR/munged.ours"
  log "stopped (logs kept in $DIR)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) alive "$DIR/slurmctld.pid" && ready ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *)
    echo "usage: $0 start|stop|status|env" >&2
    exit 2
    ;;
esac
