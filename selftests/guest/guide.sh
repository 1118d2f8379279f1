#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The admin guide's command lines, run as written, on 3 guests whose
# addresses are the guide's (10.77.0.1 to 10.77.0.3). Every concrete
# rdlockctl line of its literal blocks (not a synopsis with placeholders,
# not the tool's output) is run here, each node's configuration line made
# its own by the rule the guide gives ("its own id and address and
# everybody else's"); a line that is no longer in the guide fails, and so
# does a line of the guide that no step ran. In order: node 0's keygen,
# its key copied; the shipped example as /etc/rdlock/rdlock.conf, whose
# dry run on node 0 prints the guide's block to the byte; the cluster
# formed by hand, a lockspace, the guide's nightly-backup lock (the backup
# a script that counts its runs), its Prometheus line and "locks" on a
# hashed DLM lockspace; then formed again by running the dry run's
# printed commands; then by "up --config".

# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh" || { echo "not ok 1 cannot source lib.sh"; exit 1; }

GUIDE=$RDL/doc/admin-guide.rst
EXAMPLE=$RDL/doc/rdlock.conf.example
CONF=/etc/rdlock/rdlock.conf
KEY=/etc/rdlock/cluster.key
RAN=/tmp/guide-ran
PROM=/var/lib/prometheus/node-exporter
# Ports no other script of a boot uses (guest/seq.sh runs several, and
# a signal's listener outlives its script): 7870 to 7879.
KEY_PORT=7870
B=7871			# barriers B, B + 1, ... (7 of them)

# The guide's concrete rdlockctl command lines, one a line: a literal
# block's line (four spaces in, after an optional "# " prompt) joined
# over a trailing backslash or "&&", its trailing comment dropped;
# synopses (a placeholder in capitals, "[" or "|") left out, and the
# tool's output ("rdlockctl 0.1", "rdlockctl: ...").
guide_lines() {
	awk '
	function flush() { if (cmd != "") print cmd; cmd = "" }
	function more() {
		if (cmd ~ /\\$/) { sub(/ *\\$/, "", cmd); return 1 }
		return cmd ~ /&&$/
	}
	cont { l = $0; sub(/^ +/, "", l); cmd = cmd " " l
	       if (more()) next
	       cont = 0; flush(); next }
	/^    (# )?rdlockctl [a-z]/ {
		cmd = $0; sub(/^    (# )?/, "", cmd)
		if (more()) { cont = 1; next }
		flush()
	}' "$GUIDE" | sed 's/  *# .*$//' |
	grep -v -E '\[|\||( [A-Z][A-Z_]*)( |$)' | sort -u
}

# guide_run LINE [AS]: LINE is one of the guide's; it is recorded as run
# and runs (as AS if given: the same line with this node's id, or a name
# this cluster has) with sh.
guide_run() {
	if ! guide_lines | grep -qxF -- "$1"; then
		echo "# not in the guide (any more): $1"
		return 1
	fi
	echo "$1" >> "$RAN"
	echo "# run: ${2:-$1}"
	sh -c "${2:-$1}"
}

# LINE with this node's id, address and peers in place of node 0's, as
# the guide says every node runs it.
as_this_node() {
	atn_peers=
	j=0
	while [ "$j" -lt "$RDLOCK_NR_NODES" ]; do
		[ "$j" -eq "$RDLOCK_NODE_ID" ] ||
			atn_peers="$atn_peers --peer $j=$(rdl_node_addr "$j")"
		j=$((j + 1))
	done
	echo "$1" | sed "s/--node 0 --addr 10[.]77[.]0[.]1\(.*\) --peer 1=10[.]77[.]0[.]2 --peer 2=10[.]77[.]0[.]3/--node $RDLOCK_NODE_ID --addr $(rdl_node_addr "$RDLOCK_NODE_ID")\1$atn_peers/"
}

# barrier: every node reached the same point (a port per barrier).
barrier() {
	rdl_signal "$B" &&
	rdl_wait_all_signals "$B" 300
	b_rc=$?
	B=$((B + 1))
	return $b_rc
}

state_is() {
	rdlockctl status | grep -qx "state: $1"
}

# The dry run prints, on node 0, the guide's block after its command.
dry_run_as_guide() {
	line="rdlockctl up --config /etc/rdlock/rdlock.conf --dry-run"
	guide_run "$line" > /tmp/dry-run.out 2>&1 || {
		sed 's/^/# /' /tmp/dry-run.out
		return 1
	}
	grep -v '^# run: ' /tmp/dry-run.out > /tmp/dry-run
	awk -v l="    # $line" '
		found && /^$/ { exit }
		found { sub(/^    /, ""); print }
		$0 == l { found = 1 }' "$GUIDE" > /tmp/dry-run.guide
	[ -s /tmp/dry-run.guide ] || { echo "# no block after: $line"; return 1; }
	[ "$RDLOCK_NODE_ID" -eq 0 ] ||
		{ grep -q -- "--node $RDLOCK_NODE_ID " /tmp/dry-run; return; }
	cmp /tmp/dry-run /tmp/dry-run.guide || {
		diff /tmp/dry-run.guide /tmp/dry-run | sed 's/^/# /'
		return 1
	}
}

# The guide's backup job: a script that counts its runs.
make_backup() {
	mkdir -p /usr/local/bin &&
	printf '#!/bin/sh\necho "node %s" >> /tmp/backup.log\n' \
		"$RDLOCK_NODE_ID" > /usr/local/bin/backup &&
	chmod 0755 /usr/local/bin/backup
}

prometheus_file() {
	mkdir -p "$PROM" &&
	guide_run "rdlockctl stats --prometheus > $PROM/rdlock.prom.\$\$ && mv $PROM/rdlock.prom.\$\$ $PROM/rdlock.prom" &&
	grep -q '^rdlock_ls_acquisitions_total{lockspace="jobs"} [1-9]' \
		"$PROM/rdlock.prom" &&
	[ "$(ls "$PROM")" = rdlock.prom ]
}

# The guide's "locks dlmh.HASH", on a DLM lockspace whose name is too long
# for "dlm.NAME", with a lock held while it lists.
locks_hashed() {
	rdlockctl ls-create --dlm guide-a-dlm-lockspace-name-31 || return 1
	lh_core=$(rdlockctl ls | awk '$1 == "guide-a-dlm-lockspace-name-31" { print $8 }')
	case $lh_core in
	dlmh.*) ;;
	*) echo "# core '$lh_core'"; return 1 ;;
	esac
	guide_run "rdlockctl locks dlmh.2f1c0de5a0b6c7d8" \
		"rdlockctl lock -m ex -w 60 guide-a-dlm-lockspace-name-31 held$RDLOCK_NODE_ID -- rdlockctl locks $lh_core > /tmp/locks" &&
	sed 's/^/# /' /tmp/locks &&
	grep -q "^held$RDLOCK_NODE_ID  *$RDLOCK_NODE_ID  *granted  *ex " /tmp/locks &&
	rdlockctl ls-remove guide-a-dlm-lockspace-name-31
}

# The commands the dry run printed (node 0: the guide's block), each run;
# another node's config line is the guide's made its own.
run_dry_run() {
	while read -r drr_line; do
		case $drr_line in
		"rdlockctl config "*)
			guide_run "$(grep '^rdlockctl config ' /tmp/dry-run.guide)" \
				"$drr_line" || return 1
			;;
		rdlockctl*)
			guide_run "$drr_line" || return 1
			;;
		*)
			echo "# run: $drr_line"
			sh -c "$drr_line" || return 1
			;;
		esac
	done < /tmp/dry-run
}

# Every concrete line of the guide ran (on another node than 0, every one
# but node 0's keygen).
all_ran() {
	[ "$RDLOCK_NODE_ID" -eq 0 ] || echo "rdlockctl keygen" >> "$RAN"
	guide_lines > /tmp/guide-lines || return 1
	missing=$(awk 'NR == FNR { ran[$0] = 1; next } !($0 in ran)' \
		"$RAN" /tmp/guide-lines) || return 1
	[ -z "$missing" ] || echo "$missing" | sed 's/^/# never ran: /'
	echo "# $(wc -l < /tmp/guide-lines) command lines in the guide"
	[ -z "$missing" ] && [ "$(wc -l < /tmp/guide-lines)" -ge 10 ]
}

if [ "${RDLOCK_NR_NODES:-0}" -ne 3 ] || ! rdl_check_env ||
   [ "$RDLOCK_NODE_ADDRS" != "10.77.0.1 10.77.0.2 10.77.0.3" ]; then
	rdl_not_ok "guide.sh needs the guide's 3 nodes, 10.77.0.1 to 10.77.0.3"
	rdl_finish
	exit 1
fi
rm -f "$RAN" /tmp/backup.log
: > "$RAN"

if rdl_step "insmod rdlock.ko" insmod "$RDL/modules/rdlock.ko" &&
   { [ "$RDLOCK_NODE_ID" -ne 0 ] ||
     rdl_step "node 0: keygen as the guide" guide_run "rdlockctl keygen"; } &&
   rdl_step "the key copied to every node" rdl_share_key "$KEY" $KEY_PORT &&
   rdl_step "the shipped example as $CONF" \
	sh -c "mkdir -p /etc/rdlock && cp $EXAMPLE $CONF" &&
   rdl_step "up --config --dry-run prints the guide's block (node 0)" \
	dry_run_as_guide &&
   rdl_step "barrier: every node has its key and file" barrier; then
	cfg="rdlockctl config --cluster 7 --node 0 --addr 10.77.0.1 --peer 1=10.77.0.2 --peer 2=10.77.0.3 --key-file /etc/rdlock/cluster.key"
	rdl_step "Forming a cluster: config, this node's" \
		guide_run "$cfg" "$(as_this_node "$cfg")" &&
	rdl_step "rdlockctl up" guide_run "rdlockctl up" &&
	rdl_step "rdlockctl wait --timeout 60" guide_run "rdlockctl wait --timeout 60" &&
	rdl_step "rdlockctl status: ready" guide_run "rdlockctl status" &&
	rdl_step "... says ready" state_is ready &&
	rdl_step "rdlockctl stats" guide_run "rdlockctl stats" &&
	rdl_step "ls-create jobs as the guide" \
		guide_run "rdlockctl ls-create jobs --mode 0660 --gid 100" &&
	rdl_step "the backup job as the guide's" make_backup &&
	rdl_step "lock -w 30 jobs nightly-backup -- /usr/local/bin/backup" \
		guide_run "rdlockctl lock -w 30 jobs nightly-backup -- /usr/local/bin/backup" &&
	rdl_step "... the backup ran once" \
		sh -c "[ \"\$(cat /tmp/backup.log)\" = 'node $RDLOCK_NODE_ID' ]" &&
	rdl_step "stats --prometheus into the textfile collector's directory" \
		prometheus_file &&
	rdl_step "locks dlmh.HASH of a hashed DLM lockspace" locks_hashed &&
	rdl_step "barrier: done with the hand-formed cluster" barrier &&
	rdl_step "ls-remove jobs, down" \
		sh -c 'rdlockctl ls-remove jobs && rdlockctl down' &&
	rdl_step "barrier: every node down" barrier &&
	rdl_step "the dry run's printed commands, run" run_dry_run &&
	rdl_step "... ready, the example's cluster name and lockspace" \
		sh -c 'rdlockctl status | grep -qx "cluster name: rdlock" &&
		       rdlockctl status | grep -qx "state: ready" &&
		       rdlockctl ls | grep -q "^jobs "' &&
	rdl_step "barrier: done with the dry run's cluster" barrier &&
	rdl_step "ls-remove jobs, down" \
		sh -c 'rdlockctl ls-remove jobs && rdlockctl down' &&
	rdl_step "barrier: every node down again" barrier &&
	rdl_step "rdlockctl up --config /etc/rdlock/rdlock.conf" \
		guide_run "rdlockctl up --config /etc/rdlock/rdlock.conf" &&
	rdl_step "... ready, with jobs" \
		sh -c 'rdlockctl wait --timeout 120 && rdlockctl ls | grep -q "^jobs "' &&
	rdl_step "barrier: done with the file's cluster" barrier &&
	rdl_step "down --config" rdlockctl down --config "$CONF"
fi
rdl_step "every concrete command line of the admin guide ran" all_ran
rdl_loaded rdlock && rdl_step "rmmod rdlock" rdl_rmmod rdlock
rdl_finish
