# Pod-level helpers for the e2e suites (load after helpers).  They read what a
# user reads: the read-only port's /pods (the API view of each pod) and crictl.

E2E_NODE=e2e-node
E2E_CGROUP_ROOT=/ckubelet-e2e
# The agent's --cgroup-driver (test/vm runs the suites with both; the local
# runtime must use the same one: CK_RUNTIME_CGROUP_DRIVER).
E2E_CGROUP_DRIVER=${CK_E2E_CGROUP_DRIVER:-cgroupfs}

# start_agent MANIFEST_DIR [FLAGS...]: start_ckubelet with the e2e cgroup root.
start_agent() {
	local dir=$1
	shift
	start_ckubelet "$dir" --cgroup-root="$E2E_CGROUP_ROOT" --cgroup-driver="$E2E_CGROUP_DRIVER" \
		--sync-frequency=10s --file-check-frequency=2s "$@"
}

# e2e_cgroup_v2: the machine has the unified hierarchy only (cgroup v2).
e2e_cgroup_v2() {
	[[ -f /sys/fs/cgroup/cgroup.controllers ]]
}

# e2e_cgroup_literal NAME: the path under a hierarchy of the agent's cgroup
# NAME below the e2e cgroup root (as src/cm names it: kubepods/burstable/
# pod<uid>), for the driver: the name, or the systemd slice path
# (ckubelet_e2e.slice/ckubelet_e2e-kubepods.slice/...).
e2e_cgroup_literal() {
	local name=${E2E_CGROUP_ROOT#/}/$1
	if [[ $E2E_CGROUP_DRIVER != systemd ]]; then
		echo "$name"
		return
	fi
	local part stem="" path=""
	local -a parts
	IFS=/ read -ra parts <<<"$name"
	for part in "${parts[@]}"; do
		stem=${stem:+$stem-}${part//-/_}
		path+=/$stem.slice
	done
	echo "${path#/}"
}

# e2e_cgroup_path NAME [CONTROLLER]: the directory of the agent's cgroup
# NAME: /sys/fs/cgroup/<literal> on v2, /sys/fs/cgroup/CONTROLLER/<literal>
# on v1.
e2e_cgroup_path() {
	if e2e_cgroup_v2; then
		echo "/sys/fs/cgroup/$(e2e_cgroup_literal "$1")"
	else
		echo "/sys/fs/cgroup/${2:?a v1 controller}/$(e2e_cgroup_literal "$1")"
	fi
}

# e2e_cgroup_dirs NAME: NAME's directory in every hierarchy the agent
# manages whose parent directory exists (v2: one; v1: each controller, but
# not a hybrid layout's "unified" tree, which is runc's), one per line.
e2e_cgroup_dirs() {
	local lit h
	lit=$(e2e_cgroup_literal "$1")
	if e2e_cgroup_v2; then
		echo "/sys/fs/cgroup/$lit"
		return
	fi
	for h in /sys/fs/cgroup/*/; do
		h=${h%/}
		[[ $h != /sys/fs/cgroup/unified && -d $(dirname "$h/$lit") ]] && echo "$h/$lit"
	done
	return 0
}

# pod_json NAME: the pod (static name NAME-e2e-node) from /pods, or nothing
# when /pods does not have it.  Fails when /pods cannot be read.
pod_json() {
	local pods
	pods=$(curl -sf --max-time 5 "http://127.0.0.1:${CKUBELET_READ_ONLY_PORT:-10255}/pods") || {
		echo "pod_json: GET /pods failed" >&2
		return 1
	}
	jq -c --arg n "$1-$E2E_NODE" '.items[] | select(.metadata.name == $n)' <<<"$pods"
}

pod_field() { # NAME JQ-EXPR
	local pod
	pod=$(pod_json "$1") || return
	jq -r "$2" <<<"$pod"
}

pod_phase() { pod_field "$1" '.status.phase // ""'; }
pod_ip() { pod_field "$1" '.status.podIP // ""'; }
pod_uid() { pod_field "$1" '.metadata.uid'; }
restart_count() { # POD CONTAINER
	pod_field "$1" ".status.containerStatuses[] | select(.name == \"$2\") | .restartCount"
}
container_state() { # POD CONTAINER -> running|waiting|terminated
	pod_field "$1" ".status.containerStatuses[] | select(.name == \"$2\") | .state | keys[0]"
}

phase_is() { [[ $(pod_phase "$1") == "$2" ]]; }
restarts_at_least() { local n; n=$(restart_count "$1" "$2"); [[ -n $n && $n -ge $3 ]]; }
pod_absent() { query_empty pod_json "$1"; } # /pods answers, without the pod
running_is() { [[ $(container_state "$1" "$2") == running ]]; }
waiting_reason() { # POD CONTAINER -> why it waits, or nothing
	pod_field "$1" ".status.containerStatuses[] | select(.name == \"$2\") | .state.waiting.reason // empty"
}
waiting_message() { # POD CONTAINER
	pod_field "$1" ".status.containerStatuses[] | select(.name == \"$2\") | .state.waiting.message // empty"
}
waiting_reason_is() { [[ $(waiting_reason "$1" "$2") == "$3" ]]; } # POD CONTAINER REASON

# Runtime side, by the upstream labels.
sandboxes_of() { # POD -> sandbox ids (all states)
	crictl pods -q --name "^$1-$E2E_NODE\$" --namespace default
}
ready_sandboxes_of() {
	crictl pods -q --name "^$1-$E2E_NODE\$" --namespace default --state ready
}
containers_of() { # POD [CONTAINER] -> container ids, all states
	local args=(ps -a -q --label "io.kubernetes.pod.name=$1-$E2E_NODE")
	[[ -n ${2:-} ]] && args+=(--name "^$2\$")
	crictl "${args[@]}"
}
running_containers_of() {
	crictl ps -q --state running --label "io.kubernetes.pod.name=$1-$E2E_NODE"
}
runtime_has_nothing_of() { # POD: crictl answers, with no sandbox or container of it
	query_empty sandboxes_of "$1" && query_empty containers_of "$1"
}
count_lines() { grep -c . || true; }

# remove_e2e_pods: stop and remove the sandboxes of this suite's node only
# (static pod names end in -e2e-node), leaving anything else in the runtime.
remove_e2e_pods() {
	local id
	for id in $(crictl pods -o json | jq -r --arg s "-$E2E_NODE" \
		'.items[] | select(.metadata.name | endswith($s)) | .id'); do
		crictl stopp "$id" >/dev/null || true
		crictl rmp -f "$id" >/dev/null || true
	done
}

# cleanup_agent: stop the agent, remove every pod it made, the e2e cgroups.
# Fails (after all the cleanup) when stop_ckubelet does: an agent that
# crashed or hung fails the test whose teardown this is.
cleanup_agent() {
	local stopped=0
	stop_ckubelet || stopped=$?
	remove_e2e_pods
	local d
	# systemd: the e2e slices (stopping the root slice stops those below)
	if [[ $E2E_CGROUP_DRIVER == systemd ]]; then
		systemctl stop "$(e2e_cgroup_literal "" | sed 's|/.*||')" 2>/dev/null || true
	fi
	for d in /sys/fs/cgroup/*/"${E2E_CGROUP_ROOT#/}"; do
		[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	# emptyDir tmpfs mounts under the test root
	if [[ -n ${CKUBELET_ROOT:-} ]]; then
		grep -o " ${CKUBELET_ROOT}[^ ]*" /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null
	fi
	return "$stopped"
}
