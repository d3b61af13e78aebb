# Pod-level helpers for the e2e suites (load after helpers).  They read what a
# user reads: the read-only port's /pods (the API view of each pod) and crictl.

E2E_NODE=e2e-node
E2E_CGROUP_ROOT=/ckubelet-e2e

# start_agent MANIFEST_DIR [FLAGS...]: start_ckubelet with the e2e cgroup root.
start_agent() {
	local dir=$1
	shift
	start_ckubelet "$dir" --cgroup-root="$E2E_CGROUP_ROOT" --sync-frequency=10s \
		--file-check-frequency=2s "$@"
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
	for d in /sys/fs/cgroup/*/"${E2E_CGROUP_ROOT#/}"; do
		[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	# emptyDir tmpfs mounts under the test root
	if [[ -n ${CKUBELET_ROOT:-} ]]; then
		grep -o " ${CKUBELET_ROOT}[^ ]*" /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null
	fi
	return "$stopped"
}
