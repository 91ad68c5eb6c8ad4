# slurm_cluster.sh: a private, unprivileged Slurm cluster for one test,
# sourced by the tests that need one (not a test itself).
#
#   slurm_up DIR [NODES] [GPUS]   start slurmctld and NODES slurmd (default 3
#                                 nodes x 2 fake GPUs), state under DIR; exports
#                                 SLURM_CONF (so no command can reach a real
#                                 cluster) and sets SLURM_NODES; exits 77 when
#                                 the daemons are not installed
#   slurm_ctld_stop / slurm_ctld_start   stop and restart only the controller
#                                 (same ports, same state: squeue fails meanwhile)
#   slurm_down                    cancel every job, wait for an empty queue, stop
#                                 the daemons by pid (slurmstepd outlives slurmd)
#
# Everything is local: auth/none and cred/none (no munge), every daemon bound
# to the loopback address the machine's name resolves to (slurm_host) on
# free ports (a port taken meanwhile makes slurmctld exit with
# "Address already in use": then the whole start is tried again on others),
# SlurmUser and SlurmdUser the calling user, no accounting (sacct fails, as on
# the clusters that disable it), GPUs that are symlinks to the null device
# (Slurm refuses regular files) so that Slurm sets CUDA_VISIBLE_DEVICES per
# job, a TmpFS per node (srun --mpi=pmix makes its steps' folders there:
# nodes sharing /tmp would collide).  Needs: slurmctld, slurmd, sbatch, squeue, scancel, scontrol (Debian:
# slurmctld slurmd slurm-client; scripts/setup.sh --test installs them) and
# python3 to find free ports.

slurm_need() {
    for c in slurmctld slurmd sbatch squeue scancel scontrol python3; do
        if ! command -v "$c" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$c" ]; then
            echo "# $c is not installed (scripts/setup.sh --test installs Slurm): skip"
            exit 77
        fi
    done
}

# slurm_host: where the controller lives: SLURM_HOST, the machine's own
# name (slurmctld runs as the primary controller only on the host that
# SlurmctldHost names, and binds to the address that name resolves to),
# and SLURM_ADDR, that loopback address (127.0.0.1 on most machines,
# 127.0.1.1 where /etc/hosts is as Debian's installer writes it).  Skips
# (77), naming the reason, where slurmd cannot start at all: a name that
# does not resolve, one that resolves to no loopback address (a cluster
# without authentication listens on loopback only), no cgroup file system
# (Slurm 22.05's slurmd needs /sys/fs/cgroup).
slurm_host() {
    SLURM_HOST=$(hostname -s 2>/dev/null || hostname)
    SLURM_ADDR=$(getent ahostsv4 "$SLURM_HOST" 2>/dev/null | awk '{ print $1; exit }')
    if [ -z "$SLURM_ADDR" ]; then
        echo "# this machine's name '$SLURM_HOST' does not resolve (slurmctld and slurmd need it; add it to /etc/hosts): skip"
        exit 77
    fi
    case $SLURM_ADDR in
    127.*) ;;
    *)
        echo "# this machine's name '$SLURM_HOST' resolves to $SLURM_ADDR, not a loopback address; the test cluster (no authentication) listens on loopback only: skip"
        exit 77
        ;;
    esac
    if [ -z "$(ls /sys/fs/cgroup 2>/dev/null)" ]; then
        echo "# no cgroup file system at /sys/fs/cgroup (Slurm's slurmd needs one; in a chroot, mount /sys): skip"
        exit 77
    fi
}

# free_ports N: N TCP ports free on $SLURM_ADDR now (bound, then released)
slurm_free_ports() {
    python3 - "$1" "$SLURM_ADDR" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind((sys.argv[2], 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

slurm_write_conf() {
    d=$SLURM_DIR
    user=$(id -un)
    set -- $SLURM_PORTS
    ctld_port=$1
    shift
    cat >"$d/slurm.conf" <<EOF
ClusterName=tlmtest
SlurmctldHost=$SLURM_HOST($SLURM_ADDR)
SlurmctldPort=$ctld_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/none
CredType=cred/none
AuthInfo=cred_expire=10
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
TmpFS=$d/tmp/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
MinJobAge=${SLURM_MIN_JOB_AGE:-30}
KillWait=${SLURM_KILL_WAIT:-5}
SlurmdTimeout=300
InactiveLimit=0
GresTypes=gpu
${SLURM_EXTRA_CONF:-}
EOF
    : >"$d/gres.conf"
    echo "AutoDetect=off" >>"$d/gres.conf"
    nodes=""
    i=1
    while [ $i -le "$SLURM_N" ]; do
        name="n$i"
        g=0
        files=""
        while [ $g -lt "$SLURM_GPUS" ]; do
            ln -sf /dev/null "$d/dev/$name-gpu$g"
            files="$files $d/dev/$name-gpu$g"
            g=$((g + 1))
        done
        for f in $files; do echo "NodeName=$name Name=gpu File=$f" >>"$d/gres.conf"; done
        echo "NodeName=$name NodeAddr=$SLURM_ADDR Port=$1 CPUs=2 RealMemory=1000 Gres=gpu:$SLURM_GPUS State=UNKNOWN" \
            >>"$d/slurm.conf"
        shift
        mkdir -p "$d/spool/$name" "$d/tmp/$name"
        nodes="$nodes${nodes:+,}$name"
        i=$((i + 1))
    done
    SLURM_NODES=$nodes
    echo "PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE State=UP ${SLURM_PART_EXTRA:-}" \
        >>"$d/slurm.conf"
    [ -n "${SLURM_EXTRA_PARTS:-}" ] && printf '%s\n' "$SLURM_EXTRA_PARTS" | sed "s/@NODES@/$nodes/g" >>"$d/slurm.conf"
    return 0
}

# slurm_wait_nodes S: until every node is idle (or S seconds)
slurm_wait_nodes() {
    i=0
    while [ $i -lt $(($1 * 20)) ]; do
        up=$(sinfo -h -N -o '%t' 2>/dev/null | grep -c '^idle')
        [ "$up" -ge "$SLURM_N" ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

slurm_ctld_start() {
    PATH="$PATH:/usr/sbin" slurmctld -i 2>>"$SLURM_DIR/slurmctld.err"
    i=0
    while [ $i -lt 100 ]; do
        scontrol ping >/dev/null 2>&1 && return 0
        [ -f "$SLURM_DIR/slurmctld.pid" ] && ! kill -0 "$(cat "$SLURM_DIR/slurmctld.pid")" 2>/dev/null && return 1
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

slurm_ctld_stop() {
    p=$(cat "$SLURM_DIR/slurmctld.pid" 2>/dev/null)
    [ -n "$p" ] || return 0
    kill "$p" 2>/dev/null
    i=0
    while kill -0 "$p" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    rm -f "$SLURM_DIR/slurmctld.pid"
}

slurm_stop_daemons() {
    for f in "$SLURM_DIR"/slurmd-*.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
    done
    slurm_ctld_stop
    for f in "$SLURM_DIR"/slurmd-*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f")
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
        kill -9 "$p" 2>/dev/null
        rm -f "$f"
    done
}

slurm_up() {
    slurm_need
    slurm_host
    SLURM_DIR=$1
    SLURM_N=${2:-3}
    SLURM_GPUS=${3:-2}
    mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" "$SLURM_DIR/dev" || return 1
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    t0=$(date +%s.%N)
    try=1
    while [ $try -le 5 ]; do
        SLURM_PORTS=$(slurm_free_ports $((SLURM_N + 1)))
        slurm_write_conf
        rm -f "$SLURM_DIR"/*.pid
        if slurm_ctld_start; then
            set -- $SLURM_PORTS
            shift
            i=1
            ok_nodes=1
            while [ $i -le "$SLURM_N" ]; do
                PATH="$PATH:/usr/sbin" slurmd -N "n$i" 2>>"$SLURM_DIR/slurmd.err" || ok_nodes=0
                i=$((i + 1))
            done
            if [ $ok_nodes = 1 ] && slurm_wait_nodes 20; then
                SLURM_UP_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
                return 0
            fi
        fi
        slurm_stop_daemons
        try=$((try + 1))
    done
    echo "# the test cluster did not come up; its logs:"
    tail -n 20 "$SLURM_DIR"/*.log "$SLURM_DIR"/*.err 2>/dev/null | sed 's/^/# /'
    return 1
}

slurm_down() {
    [ -n "${SLURM_DIR:-}" ] || return 0
    if scontrol ping >/dev/null 2>&1; then
        scancel --user="$(id -un)" --full 2>/dev/null
        i=0
        while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    fi
    slurm_stop_daemons
    SLURM_DIR=""
}
