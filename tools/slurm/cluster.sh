#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests: munged, slurmctld and slurmd
# (Debian's munge and slurm-wlm), everything under DIR, on ports 16817 and 16818.
#   tools/slurm/cluster.sh start DIR    # then: export SLURM_CONF=DIR/slurm.conf
#   tools/slurm/cluster.sh stop DIR
# Needs root (slurmd does), which CI has.
set -euo pipefail
action=${1:?start or stop}
dir=${2:?folder}
# Stops the daemons and waits until they are gone (killing what is left after 10 s).
stop() {
    local pids=()
    for file in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munge/munged.pid; do
        [ -f "$file" ] && pids+=("$(cat "$file")")
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    kill "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 100); do
        local alive=0
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null && alive=1
        done
        [ "$alive" = 0 ] && return 0
        sleep 0.1
    done
    kill -9 "${pids[@]}" 2>/dev/null || true
}
case $action in
stop)
    stop
    exit 0
    ;;
start) ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
if [ "$(id -u)" != 0 ]; then
    echo "a Slurm cluster needs root (slurmd runs as root)" >&2
    exit 1
fi
if [ ! -f /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
fi
mkdir -p "$dir"/{state,spool,munge}
chmod 755 "$dir"
chown munge:munge "$dir/munge"
chmod 711 "$dir/munge"
socket="$dir/munge/munge.socket"
runuser -u munge -- /usr/sbin/munged --socket="$socket" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
host=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=vkerode-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
    if sinfo --noheader --states=idle 2>/dev/null | grep -q idle; then
        exit 0
    fi
    sleep 1
done
echo "the Slurm node did not come up; logs in $dir" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
stop
exit 1
