# softroce test bed: Soft-RoCE devices and their network.  Sourced (bash) by
# the guest (bin/lib/softroce/guest) and by bin/softroce in host mode.
#
#   rxe_lo  rxe on lo, 127.0.0.1            single-host verbs tests
#   rxe_a   rxe on veth end v4j_a, 198.18.0.1 \  two "hosts" joined by a veth
#   rxe_b   rxe on veth end v4j_b, 198.18.0.2 /  pair (RDMA CM uses these)
#
# 198.18.0.0/15 is the RFC 2544 benchmarking range: never routed anywhere.
# Privileged steps run through $TB_SUDO (empty when already root).

TB_SUDO=${TB_SUDO-}
TB_RESTORE=${TB_RESTORE-} # 1: remember what tb_up changes, for tb_down (host mode)
TB_LO_DEV=rxe_lo TB_LO_ADDR=127.0.0.1
TB_A_DEV=rxe_a TB_A_NET=v4j_a TB_A_ADDR=198.18.0.1
TB_B_DEV=rxe_b TB_B_NET=v4j_b TB_B_ADDR=198.18.0.2
TB_A_MAC=02:76:34:6a:00:01 TB_B_MAC=02:76:34:6a:00:02 # locally administered
# The veth pair's MTU: 9000 gives rxe its largest path MTU, 4096 (at 1500 it is 1024), so a
# transfer takes a quarter of the packets, each checksummed, copied and acknowledged apart
# (ib_write_bw of 1 MiB across the pair, -n 100, in an idle VM: 4.2 MB/s at 1500, 10.6 at 9000).
TB_VETH_MTU=${TB_VETH_MTU:-9000}
TB_TABLE_A=198 TB_TABLE_B=199 # routing tables for "from A to B" and "from B to A"
TB_RULE_A="pref 10 iif lo from $TB_A_ADDR to $TB_B_ADDR lookup $TB_TABLE_A"
TB_RULE_B="pref 11 iif lo from $TB_B_ADDR to $TB_A_ADDR lookup $TB_TABLE_B"
TB_ENV=()                      # VERBS4J_* assignments, filled by tb_up
TB_SAVED_SYSCTL=()             # "name=value" to restore in tb_down (host mode)
TB_MOVED_LOCAL=                # 1: tb_up moved the local table rule from pref 0
TB_TICK=${TB_TICK-}            # fd of a FIFO nobody writes: sleep without a fork

tb_sysctl_get() { local v; read -r v <"/proc/sys/${1//.//}" && printf '%s' "$v"; }

tb_sysctl_set() {
	if [ -n "$TB_SUDO" ]; then
		printf '%s\n' "$2" | $TB_SUDO tee "/proc/sys/${1//.//}" >/dev/null
	else
		printf '%s\n' "$2" >"/proc/sys/${1//.//}"
	fi
}

tb_sleep() {
	if [ -n "$TB_TICK" ]; then
		read -r -t "$1" -u "$TB_TICK" _ || true
	else
		sleep "$1"
	fi
}

# Sets TB_GID to the index of the RoCE v2 GID holding IPv4 address $2 on
# device $1 (index 1 on a veth device: 0 is the fe80:: one).
tb_gid_index() {
	local port=/sys/class/infiniband/$1/ports/1 want gid type i
	# shellcheck disable=SC2086 # split the address into its four bytes
	printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ }
	for ((i = 0; i < 32; i++)); do # the table has 1024 slots; ours are at the start
		read -r gid <"$port/gids/$i" 2>/dev/null || break
		[ "$gid" = "$want" ] || continue
		read -r type <"$port/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$type" = "RoCE v2" ] && { TB_GID=$i; return 0; }
	done
	return 1
}

# tb_up DIR: creates the devices (DIR holds the batch files), waits until all
# ports are ACTIVE with their IPv4 GIDs and fills TB_ENV.  Returns non-zero
# with a message on stderr when something fails.
tb_up() {
	local dir=$1 name value i state lo_gid a_gid b_gid

	# Two rxe devices in one namespace do not reach each other by default: the
	# peer address is local, so its route goes via lo and rxe drops it.  (Network
	# namespaces do not help: in 6.1 the rxe UDP socket lives only in the initial
	# one.)  So: accept packets whose source is a local address (accept_local,
	# rp_filter off; set before the veths exist so "default" applies to them),
	# look up the local table only after per-pair rules (pref 100 instead of 0),
	# and route each peer out of its veth end when sent from the other end's
	# address by this host ("iif lo": packets arriving on the veth still match
	# the local table and are delivered).  The peers' neighbour entries are
	# permanent: the kernel's RDMA address resolution otherwise sees the first
	# ARP reply only when its timeout expires.
	for name in net.ipv4.conf.all.accept_local=1 net.ipv4.conf.default.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0; do
		if [ "$TB_RESTORE" = 1 ]; then
			value=$(tb_sysctl_get "${name%=*}") && TB_SAVED_SYSCTL+=("${name%=*}=$value")
		fi
		tb_sysctl_set "${name%=*}" "${name#*=}" || return 1
	done
	printf '%s\n' >"$dir/ip.batch" \
		"link set lo up" \
		"link add $TB_A_NET address $TB_A_MAC type veth peer name $TB_B_NET address $TB_B_MAC" \
		"addr add $TB_A_ADDR/24 dev $TB_A_NET" \
		"addr add $TB_B_ADDR/24 dev $TB_B_NET" \
		"link set $TB_A_NET mtu $TB_VETH_MTU up" \
		"link set $TB_B_NET mtu $TB_VETH_MTU up" \
		"rule add pref 100 lookup local" \
		"rule del pref 0 lookup local" \
		"rule add $TB_RULE_A" \
		"rule add $TB_RULE_B" \
		"route add $TB_B_ADDR dev $TB_A_NET src $TB_A_ADDR table $TB_TABLE_A" \
		"route add $TB_A_ADDR dev $TB_B_NET src $TB_B_ADDR table $TB_TABLE_B" \
		"neigh replace $TB_B_ADDR lladdr $TB_B_MAC dev $TB_A_NET nud permanent" \
		"neigh replace $TB_A_ADDR lladdr $TB_A_MAC dev $TB_B_NET nud permanent"
	[ "$TB_RESTORE" = 1 ] && ip rule show pref 0 | grep -q 'lookup local' && TB_MOVED_LOCAL=1
	$TB_SUDO ip -batch "$dir/ip.batch" || { echo "ip -batch failed" >&2; return 1; }

	# "rdma -batch" would parse as "-b atch": use -b FILE.
	printf '%s\n' >"$dir/rdma.batch" \
		"link add $TB_LO_DEV type rxe netdev lo" \
		"link add $TB_A_DEV type rxe netdev $TB_A_NET" \
		"link add $TB_B_DEV type rxe netdev $TB_B_NET"
	$TB_SUDO rdma -b "$dir/rdma.batch" || { echo "rdma link add failed" >&2; return 1; }

	# The GIDs are filled in asynchronously; wait (at most ~10 s) for all.
	for ((i = 0; i < 500; i++)); do
		state=
		for name in $TB_LO_DEV $TB_A_DEV $TB_B_DEV; do
			read -r _ state <"/sys/class/infiniband/$name/ports/1/state" 2>/dev/null || state=
			[ "$state" = ACTIVE ] || break
		done
		if [ "$state" = ACTIVE ] &&
			tb_gid_index $TB_LO_DEV $TB_LO_ADDR && lo_gid=$TB_GID &&
			tb_gid_index $TB_A_DEV $TB_A_ADDR && a_gid=$TB_GID &&
			tb_gid_index $TB_B_DEV $TB_B_ADDR && b_gid=$TB_GID; then
			TB_ENV=(
				"VERBS4J_LO_DEV=$TB_LO_DEV" "VERBS4J_LO_ADDR=$TB_LO_ADDR" "VERBS4J_LO_GID=$lo_gid"
				"VERBS4J_A_DEV=$TB_A_DEV" "VERBS4J_A_ADDR=$TB_A_ADDR" "VERBS4J_A_GID=$a_gid"
				"VERBS4J_B_DEV=$TB_B_DEV" "VERBS4J_B_ADDR=$TB_B_ADDR" "VERBS4J_B_GID=$b_gid"
			)
			return 0
		fi
		tb_sleep 0.02
	done
	echo "the rxe ports did not become ACTIVE with IPv4 GIDs in time" >&2
	return 1
}

# tb_down: undoes tb_up, or what a killed earlier run left (host mode; the VM
# just powers off).  Best effort; touches only what tb_up made.
tb_down() {
	local name s moved=$TB_MOVED_LOCAL
	# Our rules left behind mean the local rule was moved by that run too.
	ip rule show pref 10 | grep -q "from $TB_A_ADDR to $TB_B_ADDR" && moved=1
	for name in $TB_LO_DEV $TB_A_DEV $TB_B_DEV; do
		[ -e "/sys/class/infiniband/$name" ] && $TB_SUDO rdma link delete "$name"
	done
	# (deleting one end deletes the pair, and the routes through it)
	[ -e "/sys/class/net/$TB_A_NET" ] && $TB_SUDO ip link delete "$TB_A_NET"
	# shellcheck disable=SC2086 # the rule's words
	$TB_SUDO ip rule del $TB_RULE_A 2>/dev/null
	# shellcheck disable=SC2086
	$TB_SUDO ip rule del $TB_RULE_B 2>/dev/null
	if [ "$moved" = 1 ] && ! ip rule show pref 0 | grep -q 'lookup local'; then
		$TB_SUDO ip rule add pref 0 lookup local && $TB_SUDO ip rule del pref 100 lookup local
	fi
	for s in "${TB_SAVED_SYSCTL[@]}"; do
		tb_sysctl_set "${s%=*}" "${s#*=}"
	done
	TB_SAVED_SYSCTL=() TB_MOVED_LOCAL=
	return 0
}
