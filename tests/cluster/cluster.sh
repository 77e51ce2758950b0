#!/usr/bin/env bash
# The test cluster: NODES emulated nodes on this machine, joined by a bridge, running Slurm
# (docs/cluster.md, "The test cluster").
#
#   cluster.sh up       start it (idempotent for the same NODES and RATE), wait until Slurm
#                       shows every node idle, print how to use it
#   cluster.sh down     stop it and leave the machine as it was found
#   cluster.sh status   one line: up with what, or down
#   cluster.sh shape R  change the links of a running cluster to rate R (e.g. 100mbit), or
#                       unshaped with R = none
#
# Settings, from the environment: NODES (2, at most 8), RATE (e.g. 1gbit: a tbf qdisc on both
# ends of every node's link; empty: unshaped).
#
# A node is a network namespace (veth eth0 on the bridge), a UTS namespace (its host name) and a
# mount namespace (its own boot id, see below), all three persistent: files in $STATE that every
# process of the node enters through tests/cluster/agent, slurmd included. Everything this script
# creates is recorded under $STATE or marked in /etc/hosts, so that down removes exactly that.
set -Eeuo pipefail

STATE=/run/mpilens-cluster
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BRIDGE=mlbr0
BRIDGE_ADDRESS=198.18.0.254
NETWORK=198.18.0.0/24
HOSTS_MARK="# mpilens-cluster"
MAX_NODES=8
SLURMCTLD_PORT=6817
SLURMD_PORT=6818
NODE_TIMEOUT_S=60

die() { echo "cluster: $*" >&2; exit 2; }
say() { echo "cluster: $*" >&2; }

node_name() { echo "mlnode$1"; }
node_address() { echo "198.18.0.$(($1 + 1))"; }

# --- checks -------------------------------------------------------------------------------------

check_settings() {
  NODES=${NODES:-2}
  RATE=${RATE:-}
  [[ $NODES =~ ^[0-9]+$ ]] && ((NODES >= 1 && NODES <= MAX_NODES)) \
    || die "invalid NODES=\"$NODES\": expected an integer from 1 to $MAX_NODES"
  if [[ -n $RATE && ! $RATE =~ ^[0-9]+(bit|kbit|mbit|gbit)$ ]]; then
    die "invalid RATE=\"$RATE\": expected a rate such as 100mbit or 1gbit (tc's units bit, kbit, mbit, gbit)"
  fi
}

check_root() {
  [[ $(id -u) == 0 ]] || die "must run as root (it creates network namespaces, a bridge and daemons)"
}

check_machine() {
  local missing=() command
  for command in ip tc nsenter unshare munged munge slurmctld slurmd sinfo srun scontrol gcc; do
    command -v "$command" >/dev/null || missing+=("$command")
  done
  ((${#missing[@]} == 0)) || die "missing ${missing[*]}: run \"make deps-cluster\" (Debian packages slurm-wlm, munge, iproute2)"
  if ! ip netns add mlcheck 2>/dev/null; then
    die "cannot create network namespaces here (ip netns add failed): the test cluster needs root with CAP_SYS_ADMIN and CAP_NET_ADMIN, outside a container that forbids them"
  fi
  ip netns delete mlcheck
  if ss -Htln "sport = :$SLURMCTLD_PORT" 2>/dev/null | grep -q .; then
    die "port $SLURMCTLD_PORT is taken (another slurmctld?); the test cluster's controller needs it"
  fi
}

# --- state ---------------------------------------------------------------------------------------

settings_line() { echo "NODES=$NODES RATE=$RATE"; }

running() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

healthy() {
  running "$STATE/munge/munged.pid" && running "$STATE/slurm/slurmctld.pid" || return 1
  local i
  for ((i = 0; i < NODES; i++)); do
    running "$STATE/slurm/slurmd-$(node_name "$i").pid" || return 1
  done
}

# The directory holds the namespace files; its mount must be private for them to be bind-mounted
# there (what ip netns does for /run/netns).
make_state_dir() {
  mkdir -p "$STATE"
  mount --bind "$STATE" "$STATE"
  mount --make-private "$STATE"
  settings_line >"$STATE/settings"
}

# --- network and namespaces ----------------------------------------------------------------------

shape() { # device [netns]
  local burst
  # tbf needs a bucket of at least one timer tick's worth of bytes; 10 ms of the rate, 64 KiB at
  # least (one GSO segment), does at any HZ.
  burst=$(tc_bytes_per_10ms "$RATE")
  if [[ -n ${2:-} ]]; then
    ip netns exec "$2" tc qdisc replace dev "$1" root tbf rate "$RATE" burst "$burst" latency 100ms
  else
    tc qdisc replace dev "$1" root tbf rate "$RATE" burst "$burst" latency 100ms
  fi
}

tc_bytes_per_10ms() {
  local number=${1%%[a-z]*} unit=${1##*[0-9]} bits
  case $unit in
    bit) bits=$number ;; kbit) bits=$((number * 1000)) ;;
    mbit) bits=$((number * 1000000)) ;; gbit) bits=$((number * 1000000000)) ;;
  esac
  local bytes=$((bits / 8 / 100))
  ((bytes < 65536)) && bytes=65536
  echo "$bytes"
}

make_bridge() {
  ip link add "$BRIDGE" type bridge
  ip addr add "$BRIDGE_ADDRESS/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
}

make_node() { # index
  local name address
  name=$(node_name "$1")
  address=$(node_address "$1")
  ip netns add "$name"
  ip link add "mlveth$1" type veth peer name eth0 netns "$name"
  ip link set "mlveth$1" master "$BRIDGE" up
  ip -n "$name" addr add "$address/24" dev eth0
  ip -n "$name" link set eth0 up
  ip -n "$name" link set lo up
  if [[ -n $RATE ]]; then
    shape eth0 "$name"
    shape "mlveth$1"
  fi
  touch "$STATE/$name.uts" "$STATE/$name.mnt"
  unshare --uts="$STATE/$name.uts" hostname "$name"
  # UCX tells machines apart by the kernel's boot id (ucs_get_system_id): with the host's, it would
  # use shared memory between ranks of different nodes. Each node gets its own.
  cat /proc/sys/kernel/random/uuid >"$STATE/$name.boot_id"
  unshare --mount="$STATE/$name.mnt" --propagation private \
    mount --bind "$STATE/$name.boot_id" /proc/sys/kernel/random/boot_id
  if [[ -f $STATE/ucx/libucp-fixed.so.0 ]]; then
    nsenter --mount="$STATE/$name.mnt" mount --bind "$STATE/ucx/libucp-fixed.so.0" "$UCP_LIBRARY"
  fi
  add_hosts_line "$address $name $HOSTS_MARK"
}

# A line at the end of /etc/hosts; a last line without its newline gets one first (and loses it
# again at down, which the file $STATE/hosts-newline records).
add_hosts_line() {
  if [[ -s /etc/hosts && -n $(tail -c1 /etc/hosts) ]]; then
    echo >>/etc/hosts
    touch "$STATE/hosts-newline"
  fi
  echo "$1" >>/etc/hosts
}

# Rewritten in place (not sed -i, which replaces the file: a bind-mounted /etc/hosts refuses that).
remove_hosts_lines() {
  local kept
  kept=$(mktemp)
  grep -v " $HOSTS_MARK\$" /etc/hosts >"$kept" || true
  cat "$kept" >/etc/hosts
  rm -f "$kept"
  if [[ -f $STATE/hosts-newline ]]; then truncate -s -1 /etc/hosts; fi
}

# MPICH 4.0 over UCX's TCP transport can hang in MPI_Finalize: it closes every endpoint with a
# flush and only then enters a PMI barrier; a rank whose peer already sits in the barrier may need
# that peer to answer before its flush completes (fixed in MPICH 4.2, pmodels/mpich#6596). The
# nodes' libucp is wrapped so that such a close gives up after a bounded flush (ucx_close_fix.c).
build_ucx_fix() {
  UCP_LIBRARY=$(readlink -f /usr/lib/x86_64-linux-gnu/libucp.so.0 2>/dev/null || true)
  [[ -f $UCP_LIBRARY ]] || return 0
  [[ -f /usr/include/ucp/api/ucp.h ]] || die "UCX headers missing (ucp/api/ucp.h): run \"make deps-cluster\" (Debian package libucx-dev)"
  mkdir -p "$STATE/ucx"
  cp "$UCP_LIBRARY" "$STATE/ucx/libucp.so.0"
  # An empty library whose name is the real one's path: linking with it makes the wrapper load
  # the real libucp by that path, beside the wrapper that takes its place.
  gcc -shared -o "$STATE/ucx/real-name.so" -x c /dev/null -Wl,-soname,"$STATE/ucx/libucp.so.0"
  gcc -shared -fPIC -O2 -o "$STATE/ucx/libucp-fixed.so.0" "$HERE/ucx_close_fix.c" \
    -Wl,-soname,libucp.so.0 -Wl,--no-as-needed "$STATE/ucx/real-name.so" -ldl
}

# --- munge and Slurm -----------------------------------------------------------------------------

start_munge() {
  local dir=$STATE/munge
  mkdir -p "$dir/private"
  chown munge:munge "$dir" "$dir/private"
  chmod 755 "$dir"
  chmod 700 "$dir/private"
  dd if=/dev/urandom of="$dir/private/munge.key" bs=1024 count=1 status=none
  chown munge:munge "$dir/private/munge.key"
  chmod 400 "$dir/private/munge.key"
  runuser -u munge -- munged --key-file="$dir/private/munge.key" --socket="$dir/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/private/munged.seed"
}

node_line() { # index: the node's hardware as slurmd sees it, under the node's name and address
  local hardware
  hardware=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=.*//')
  echo "NodeName=$(node_name "$1") NodeAddr=$(node_address "$1") $hardware State=UNKNOWN"
}

write_slurm_conf() {
  local dir=$STATE/slurm i
  mkdir -p "$dir/state"
  for ((i = 0; i < NODES; i++)); do mkdir -p "$dir/tmp-$(node_name "$i")"; done
  {
    cat <<EOF
# The mpilens test cluster (tests/cluster/cluster.sh); removed by make cluster-down.
ClusterName=mpilens
SlurmctldHost=$(hostname)($BRIDGE_ADDRESS)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket
CredType=cred/munge
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
# The nodes share one kernel: no cgroup hierarchy of their own, so no cgroup plugins.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
# Without a TmpFS per node, the nodes' PMIx directories collide in /tmp.
TmpFS=$dir/tmp-%n
ReturnToService=2
SlurmdTimeout=60
# sbatch --wait polls every 2 s while that stays below MinJobAge/2, else 4 times longer each time
# (up to 32 s): with the default 300, a 10 s job returned after 42 s.
MinJobAge=4
EOF
    for ((i = 0; i < NODES; i++)); do node_line "$i"; done
    echo "PartitionName=mlcluster Nodes=mlnode[0-$((NODES - 1))] Default=YES MaxTime=INFINITE State=UP"
  } >"$dir/slurm.conf"
}

start_slurm() {
  local conf=$STATE/slurm/slurm.conf i name
  SLURM_CONF=$conf slurmctld -f "$conf"
  for ((i = 0; i < NODES; i++)); do
    name=$(node_name "$i")
    # nsenter, not ip netns exec: that remounts /sys, and slurmd would find no cgroup file system.
    nsenter --net="/run/netns/$name" --uts="$STATE/$name.uts" --mount="$STATE/$name.mnt" \
      env SLURM_CONF="$conf" slurmd -f "$conf" -N "$name"
  done
}

wait_for_nodes() {
  local deadline=$((SECONDS + NODE_TIMEOUT_S)) idle
  while ((SECONDS < deadline)); do
    idle=$(SLURM_CONF=$STATE/slurm/slurm.conf sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    ((idle == NODES)) && return 0
    sleep 0.5
  done
  die "the nodes did not become idle within ${NODE_TIMEOUT_S} s; see $STATE/slurm/*.log, then run make cluster-down"
}

write_env() {
  local hosts=() i
  for ((i = 0; i < NODES; i++)); do hosts+=("$(node_name "$i")"); done
  cat >"$STATE/env.sh" <<EOF
# Source this to use the mpilens test cluster (docs/cluster.md).
export SLURM_CONF=$STATE/slurm/slurm.conf
export MPILENS_CLUSTER_NODES="${hosts[*]}"
export MPILENS_CLUSTER_AGENT=$HERE/agent
export MPILENS_CLUSTER_BRIDGE=$BRIDGE_ADDRESS
export MPILENS_CLUSTER_RATE=$RATE
# Launch commands across the nodes; add --host mlnode0:K,mlnode1:K -np N, or -hosts ... -n N.
export MPILENS_CLUSTER_MPIRUN="mpirun.openmpi --allow-run-as-root --mca plm_rsh_agent $HERE/agent --mca oob_tcp_if_include $NETWORK --mca btl_tcp_if_include eth0"
export MPILENS_CLUSTER_MPIEXEC="mpiexec.mpich -localhost $BRIDGE_ADDRESS -launcher ssh -launcher-exec $HERE/agent"
EOF
}

usage_text() {
  local last=$((NODES - 1)) shaping="unshaped"
  [[ -n $RATE ]] && shaping="shaped to $RATE each way (tbf; no added delay: this kernel has no netem)"
  cat <<EOF
test cluster up: $NODES nodes (mlnode0..mlnode$last, $(node_address 0)..$(node_address "$last")), links $shaping
  source $STATE/env.sh
  srun -N2 -n4 --mpi=pmix build/openmpi/bin/mpilens-sanity --output s.jsonl      # Open MPI
  srun -N2 -n4 --mpi=pmi2 build/mpich/bin/mpilens-sanity --output s.jsonl        # MPICH
  \$MPILENS_CLUSTER_MPIRUN --host mlnode0:2,mlnode1:2 -np 4 build/openmpi/bin/mpilens-sanity
  \$MPILENS_CLUSTER_MPIEXEC -hosts mlnode0:2,mlnode1:2 -n 4 build/mpich/bin/mpilens-sanity
  salloc -N2 -n4 .venv/bin/mpilens sanity --preset quick       # mpilens inside an allocation uses srun
  tests/cluster/agent mlnode1 hostname                          # a command on one node
  make cluster-down                                             # stop it and clean up
EOF
}

# --- commands ------------------------------------------------------------------------------------

up() {
  check_settings
  check_root
  if [[ -f $STATE/settings ]]; then
    local was
    was=$(cat "$STATE/settings")
    [[ $was == "$(settings_line)" ]] \
      || die "the test cluster is already up with $was; run \"make cluster-down\" before starting it with $(settings_line)"
    healthy || die "the test cluster is up with $was but a daemon has stopped; run \"make cluster-down\", then up again"
    wait_for_nodes
    usage_text
    return 0
  fi
  check_machine
  # A failure part way leaves a partial cluster: take it down again rather than leave it.
  trap 'say "start failed; cleaning up"; down >/dev/null 2>&1 || true' ERR
  make_state_dir
  build_ucx_fix
  make_bridge
  local i
  for ((i = 0; i < NODES; i++)); do make_node "$i"; done
  start_munge
  write_slurm_conf
  start_slurm
  wait_for_nodes
  write_env
  trap - ERR
  usage_text
}

stop_pid_file() { # pid file: stop the daemon it names, if it is still that daemon
  local pid
  [[ -f $1 ]] || return 0
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || return 0
  local tries
  for ((tries = 0; tries < 50; tries++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

down() {
  check_root
  if [[ -f $STATE/slurm/slurm.conf ]] && running "$STATE/slurm/slurmctld.pid"; then
    SLURM_CONF=$STATE/slurm/slurm.conf scancel --quiet --full --user=root 2>/dev/null || true
  fi
  local pidfile name
  for pidfile in "$STATE"/slurm/slurmd-*.pid; do stop_pid_file "$pidfile"; done
  stop_pid_file "$STATE/slurm/slurmctld.pid"
  stop_pid_file "$STATE/munge/munged.pid"
  # What still runs in a node (job steps, ranks of an interrupted run) was started there by us.
  # The kernel frees a namespace, and the veth in it, only once its last process has gone and
  # in its own time: the host ends of the links are deleted here, which takes both ends away.
  for name in $(ip netns list 2>/dev/null | awk '/^mlnode[0-9]+/ {print $1}'); do
    ip netns pids "$name" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip link delete "mlveth${name#mlnode}" 2>/dev/null || true
    ip netns delete "$name"
  done
  for name in "$STATE"/*.mnt "$STATE"/*.uts; do
    [[ -e $name ]] && { umount "$name" 2>/dev/null || true; }
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link delete "$BRIDGE"
  remove_hosts_lines
  if mountpoint -q "$STATE"; then umount "$STATE"; fi
  rm -rf "$STATE"
  echo "test cluster down"
}

reshape() { # rate or none
  check_root
  [[ -f $STATE/settings ]] || die "the test cluster is not up (make cluster-up starts it)"
  NODES=$(sed -n 's/^NODES=\([0-9]*\).*/\1/p' "$STATE/settings")
  RATE=${1:-}
  [[ $RATE == none ]] && RATE=""
  [[ -n ${1:-} ]] || die "usage: cluster.sh shape RATE|none"
  check_settings
  local i name
  for ((i = 0; i < NODES; i++)); do
    name=$(node_name "$i")
    if [[ -n $RATE ]]; then
      shape eth0 "$name"
      shape "mlveth$i"
    else
      ip netns exec "$name" tc qdisc del dev eth0 root 2>/dev/null || true
      tc qdisc del dev "mlveth$i" root 2>/dev/null || true
    fi
  done
  settings_line >"$STATE/settings"
  sed -i "s/^export MPILENS_CLUSTER_RATE=.*/export MPILENS_CLUSTER_RATE=$RATE/" "$STATE/env.sh"
  echo "test cluster links: ${RATE:-unshaped}"
}

status() {
  if [[ -f $STATE/settings ]]; then
    NODES=$(sed -n 's/^NODES=\([0-9]*\).*/\1/p' "$STATE/settings")
    if healthy; then echo "test cluster up: $(cat "$STATE/settings")"; else echo "test cluster broken: $(cat "$STATE/settings") (a daemon has stopped; run make cluster-down)"; fi
  else
    echo "test cluster down"
  fi
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  shape) reshape "${2:-}" ;;
  *) die "usage: cluster.sh up|down|status|shape RATE (settings NODES=1..$MAX_NODES, RATE=1gbit)" ;;
esac
