#!/usr/bin/env bash
# A single-node Slurm cluster in a folder, from Debian's slurm-wlm and munge: this machine is its
# only node (its CPUs, no cgroups, no accounting), the daemons listen on localhost ports picked
# free, and everything they write stays in the folder. For the sweep tests, and for trying
# `dstudio sweep submit` without a cluster.
#
#   local-cluster.sh start DIR   prints SLURM_CONF=DIR/slurm.conf once the node is idle
#   local-cluster.sh stop DIR    stops the daemons it started, by their process ids
#
# Tools then need SLURM_CONF=DIR/slurm.conf in their environment. `start` fails with the daemons'
# logs when the node does not come up within 30 s. Run as root (SlurmUser=root).
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

show_logs() {
  for log in "$dir"/munged.log "$dir"/slurmctld.log "$dir"/slurmd.log; do
    [[ -f $log ]] || continue
    echo "---- $log (last 40 lines)" >&2
    tail -n 40 "$log" >&2
  done
}

# Stops the process in pid file $1 by TERM, then KILL after 10 s.
stop_pid() {
  local file=$1 pid
  [[ -f $file ]] || return 0
  pid=$(cat "$file" 2>/dev/null || true)
  rm -f "$file"
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  # Jobs first, so no task outlives the cluster.
  if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]]; then
    SLURM_CONF=$dir/slurm.conf timeout 10 scancel --full --quiet -u root 2>/dev/null || true
  fi
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munged.pid"
}

# A TCP port nobody listens on, from a range Slurm does not use by default.
free_port() {
  python3 - "$@" <<'EOF'
import socket, sys
taken = {int(p) for p in sys.argv[1:]}
for _ in range(200):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    if port not in taken and port + 1 not in taken:
        print(port)
        break
EOF
}

start() {
  for tool in munged mungekey slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || { echo "local-cluster: $tool is not installed (packages slurm-wlm, munge)" >&2; exit 1; }
  done
  stop  # whatever an earlier start in this folder left
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  # munged refuses a socket folder that others cannot reach.
  chmod 755 "$dir" "$dir/munge"
  [[ -f $dir/munge/munge.key ]] || mungekey -c -k "$dir/munge/munge.key" >/dev/null
  chmod 600 "$dir/munge/munge.key"
  munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" \
         --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" --force \
    || { echo "local-cluster: munged did not start" >&2; show_logs; exit 1; }

  local node cpus memory ctld_port slurmd_port
  node=$(hostname -s)
  cpus=$(nproc --all)
  memory=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -n1)
  ctld_port=$(free_port)
  slurmd_port=$(free_port "$ctld_port")
  cat >"$dir/slurm.conf" <<EOF
ClusterName=dstudio-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=bf_interval=1
MpiDefault=none
ReturnToService=2
JobRequeue=1
MinJobAge=300
KillWait=5
OverTimeLimit=0
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  # -D keeps each daemon in the foreground, so $! is its pid; setsid detaches it from our group.
  setsid slurmctld -D -f "$SLURM_CONF" </dev/null >>"$dir/slurmctld.out" 2>&1 &
  echo $! >"$dir/slurmctld.pid"
  setsid slurmd -D -f "$SLURM_CONF" </dev/null >>"$dir/slurmd.out" 2>&1 &
  echo $! >"$dir/slurmd.pid"
  for _ in $(seq 300); do
    if [[ $(sinfo -h -N -o %T 2>/dev/null | head -n1) == idle ]]; then
      echo "SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.1
  done
  echo "local-cluster: the node did not become idle within 30 s; sinfo says: $(sinfo -h -N -o '%T %E' 2>&1 | head -n3)" >&2
  show_logs
  stop
  exit 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
