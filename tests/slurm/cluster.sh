#!/usr/bin/env bash
# A real two-node Slurm (slurmctld + slurmd n1, n2) on this machine, for the
# `slurm` tests (see ../../docs/slurm.md and /work/shared/reference/local-slurm.md).
#
#   tests/slurm/cluster.sh start    idempotent; returns once both nodes are idle
#   tests/slurm/cluster.sh stop     scontrol shutdown, then munged; waits for the daemons
#   tests/slurm/cluster.sh status   exit 0 when both nodes answer (idle/mixed/allocated)
#
# Needs root and the slurm-wlm + munge packages (installs them when apt-get works
# and DOCTOR_SLURM_INSTALL=1). Exit 0 on success; 1 with one line on stderr otherwise.
set -u
CONF=/etc/slurm/slurm.conf
MARK="# doctor tests/slurm/cluster.sh"
WAIT_S=${DOCTOR_SLURM_WAIT_S:-60}

die() { echo "cluster.sh: $*" >&2; exit 1; }

nodes_up() {  # both nodes answer and none is down/drained
  local states
  states=$(timeout 10 sinfo -h -N -o '%N %T' 2>/dev/null) || return 1
  for n in n1 n2; do
    echo "$states" | grep -Eq "^$n (idle|mixed|allocated|completing)" || return 1
  done
}

munge_works() {  # a credential round-trip, not the socket file: a munged killed
  # at the end of a session leaves /run/munge/munge.socket.2 behind, and the
  # daemons then hang in auth retries (seen in CI: start ran into its timeout)
  timeout 5 munge -n </dev/null 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1
}

daemons_gone() {
  ! pgrep -x slurmctld >/dev/null && ! pgrep -x slurmd >/dev/null
}

write_conf() {
  local h cpus
  h=$(hostname); cpus=$(nproc)
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd/n1 /var/spool/slurmd/n2 \
    /var/log/slurm
  cat > "$CONF.new" <<CONF
$MARK
ClusterName=local
SlurmctldHost=$h
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmdPidFile=/run/slurmd-%n.pid
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
SlurmctldLogFile=/var/log/slurm/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=n1 NodeHostname=$h Port=17001 CPUs=$cpus RealMemory=2000 State=UNKNOWN
NodeName=n2 NodeHostname=$h Port=17002 CPUs=$cpus RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP
CONF
  mv "$CONF.new" "$CONF"
}

start() {
  [ "$(id -u)" = 0 ] || die "needs root (slurmd runs jobs as their user)"
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    if [ "${DOCTOR_SLURM_INSTALL:-0}" = 1 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null \
        || die "apt-get install slurm-wlm munge failed"
    else
      die "slurm-wlm and munge are not installed (apt-get install slurm-wlm munge)"
    fi
  fi
  if nodes_up; then echo "cluster.sh: already running"; return 0; fi
  # a previous stop may still be shutting the daemons down
  for _ in $(seq 20); do daemons_gone && break; sleep 0.5; done
  write_conf
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown -R munge:munge /etc/munge /var/log/munge /var/lib/munge /run/munge
  [ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create >/dev/null
  if ! munge_works; then
    # no live munged answers: --force takes over a dead daemon's socket
    pgrep -x munged >/dev/null && pkill -x munged && sleep 0.5
    runuser -u munge -- munged --force || die "munged did not start (see /var/log/munge/munged.log)"
    for _ in $(seq 20); do munge_works && break; sleep 0.25; done
    munge_works || die "munged started but does not answer (see /var/log/munge/munged.log)"
  fi
  pgrep -x slurmctld >/dev/null || slurmctld || die "slurmctld did not start (see /var/log/slurm/slurmctld.log)"
  for n in n1 n2; do
    pgrep -f "slurmd -N $n\$" >/dev/null || slurmd -N "$n" || die "slurmd -N $n did not start"
  done
  local deadline=$((SECONDS + WAIT_S))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if nodes_up; then echo "cluster.sh: started (n1, n2 idle)"; return 0; fi
    # nodes left down by an earlier run come back with ReturnToService=2; nudge them
    timeout 5 scontrol update nodename=n1,n2 state=resume >/dev/null 2>&1 || true
    sleep 1
  done
  die "nodes not idle after ${WAIT_S}s: $(timeout 10 sinfo -h -N -o '%N=%T' 2>&1 | tr '\n' ' ')"
}

stop() {
  if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    timeout 20 scontrol shutdown >/dev/null 2>&1 || true
    for _ in $(seq 30); do daemons_gone && break; sleep 0.5; done
    daemons_gone || die "slurm daemons still running after scontrol shutdown"
  fi
  if [ -S /run/munge/munge.socket.2 ] || [ -f /run/munge/munged.pid ]; then
    pid=$(cat /run/munge/munged.pid 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    for _ in $(seq 20); do [ -S /run/munge/munge.socket.2 ] || break; sleep 0.25; done
  fi
  echo "cluster.sh: stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if nodes_up; then echo "cluster.sh: running"; else echo "cluster.sh: not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
