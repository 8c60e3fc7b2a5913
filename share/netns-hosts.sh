#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# netns-hosts.sh: a small cluster of "hosts" on one Linux machine, as network
# namespaces joined by an Ethernet switch, so that MPI runs across them go
# over TCP exactly as they would between real nodes (tests/netns.bats).
#
#   netns-hosts.sh up NAME N      make hosts NAME-h1 .. NAME-hN (N from 2 to 8)
#   netns-hosts.sh down NAME      remove them (and anything half made)
#   netns-hosts.sh hosts NAME     print their addresses, one a line
#   netns-hosts.sh exec NAME ADDRESS COMMAND...
#                                 run COMMAND on the host with that address
#   netns-hosts.sh launcher NAME  print the path of NAME's launcher (below)
#
# How it maps to a real cluster:
#   - a host is a network namespace NAME-hI with one interface, eth0, at
#     10.237.0.I/24 (and its own loopback); on a cluster, a node and its NIC;
#   - the switch is a bridge in a namespace of its own, NAME-sw, joined to
#     every host's eth0 by a veth pair: the cluster's network. Nothing is
#     added to the machine's own network namespace;
#   - the launcher is what hydra (mpiexec.mpich) uses to start its proxy on
#     a host: on a cluster ssh, here a script called like ssh
#     (`launcher HOST COMMAND...`) that runs COMMAND in HOST's namespace.
#     Give it to mpiexec as `-launcher ssh -launcher-exec PATH`;
#   - mpiexec itself runs on host 1 (`exec NAME 10.237.0.1 mpiexec ...`), as
#     on a cluster's first node, and `-hosts 10.237.0.1:2,10.237.0.2:2`
#     names the hosts (and ranks per host) as a hostfile would;
#   - UCX must use the hosts' interface (UCX_NET_DEVICES=eth0, on a cluster
#     the NIC's name) and TCP (UCX_TLS=tcp,self): the namespaces share the
#     machine's name and /dev/shm, so UCX would otherwise take them for one
#     node and try loopback or shared memory between them.
#
# Needs root and iproute2 (ip netns). Files of the hosts (the launcher) live
# under ${NETNS_HOSTS_DIR:-/run/fftshard-netns}/NAME. Several NAMEs can be up
# at once: their addresses are the same, but in separate namespaces.
set -eu

dir=${NETNS_HOSTS_DIR:-/run/fftshard-netns}
subnet=10.237.0

usage() {
    echo "usage: netns-hosts.sh up NAME N | down NAME | hosts NAME |" \
        "exec NAME ADDRESS COMMAND... | launcher NAME" >&2
    exit 2
}

# check_name NAME: a name ip(8) accepts for a namespace, with room for -hN.
check_name() {
    case $1 in
    "" | *[!A-Za-z0-9_.-]*) echo "netns-hosts: bad NAME '$1'" >&2 && exit 2 ;;
    esac
    [ "${#1}" -le 40 ] || { echo "netns-hosts: NAME too long: $1" >&2 && exit 2; }
}

# host_of NAME ADDRESS: the namespace of the host with ADDRESS.
host_of() {
    case $2 in
    "$subnet".[1-8]) echo "$1-h${2##*.}" ;;
    *) echo "netns-hosts: no host of $1 at '$2'" >&2 && exit 1 ;;
    esac
}

up() {
    name=$1 n=$2
    case $n in
    [2-8]) ;;
    *) echo "netns-hosts: N must be from 2 to 8, not '$n'" >&2 && exit 2 ;;
    esac
    command -v ip >/dev/null || { echo "netns-hosts: ip (iproute2) not found" >&2 && exit 1; }
    # a failure half-way leaves nothing behind
    trap 'down "$name" >/dev/null 2>&1' EXIT
    mkdir -p "$dir/$name"
    ip netns add "$name-sw"
    ip -n "$name-sw" link add br0 type bridge
    ip -n "$name-sw" link set br0 up
    i=1
    while [ "$i" -le "$n" ]; do
        h=$name-h$i
        ip netns add "$h"
        # the pair is made in the switch, then one end moves to the host
        ip -n "$name-sw" link add "p$i" type veth peer name eth0 netns "$h"
        ip -n "$name-sw" link set "p$i" master br0 up
        ip -n "$h" addr add "$subnet.$i/24" dev eth0
        ip -n "$h" link set eth0 up
        ip -n "$h" link set lo up
        echo "$subnet.$i" >>"$dir/$name/hosts"
        i=$((i + 1))
    done
    # ssh's part: `launcher [OPTIONS] HOST COMMAND...` runs COMMAND on HOST
    # (hydra passes options such as -x first, and COMMAND as words that ssh
    # would join for the remote shell).
    cat >"$dir/$name/launcher" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
    case \$1 in
    -*) shift ;;
    *) break ;;
    esac
done
host=\$1
shift
exec "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" exec "$name" "\$host" sh -c "\$*"
EOF
    chmod +x "$dir/$name/launcher"
    # host 1 reaches every other host: a connection to a closed port is
    # refused only by a host that got it (no ping needed)
    i=2
    while [ "$i" -le "$n" ]; do
        why=$(ip netns exec "$name-h1" timeout 5 bash -c "exec 3<>/dev/tcp/$subnet.$i/9" 2>&1 || true)
        case $why in
        *"Connection refused"*) ;;
        *) echo "netns-hosts: host $subnet.$i not reachable from $subnet.1: $why" >&2 && exit 1 ;;
        esac
        i=$((i + 1))
    done
    trap - EXIT
}

down() {
    name=$1
    for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
        case $ns in
        "$name"-sw | "$name"-h[1-8])
            # processes still in the namespace would keep it alive
            for pid in $(ip netns pids "$ns" 2>/dev/null); do
                kill -KILL "$pid" 2>/dev/null || true
            done
            ip netns del "$ns"
            ;;
        esac
    done
    rm -rf "${dir:?}/$name"
}

[ $# -ge 2 ] || usage
cmd=$1 name=$2
check_name "$name"
shift 2
case $cmd in
up) [ $# -eq 1 ] || usage && up "$name" "$1" ;;
down) [ $# -eq 0 ] || usage && down "$name" ;;
hosts) cat "$dir/$name/hosts" ;;
launcher) echo "$dir/$name/launcher" ;;
exec)
    [ $# -ge 2 ] || usage
    ns=$(host_of "$name" "$1")
    shift
    exec ip netns exec "$ns" "$@"
    ;;
*) usage ;;
esac
