#!/usr/bin/env bats
# The eviction manager on a ckubelet node of the local cluster, with real
# pressure: processes (pid.available), memory (a threshold above what the
# machine has) and a small root directory filled by a pod's emptyDir
# (nodefs.available); and the local storage limits (emptyDir sizeLimit,
# ephemeral-storage limits).  What a kubectl user sees: the node's pressure
# conditions, the evicted pod's status (Failed, Evicted, upstream's message,
# DisruptionTarget), its event, the pods refused meanwhile, the others
# running on.

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-evict
}

teardown_file() {
	cleanup_node "$TEST_NS"
}

teardown() {
	# a failed test shows what the eviction manager decided, and when
	[[ -n ${BATS_TEST_COMPLETED:-} ]] || ckubelet_log_lines 'Eviction manager|PIDPressure|MemoryPressure|DiskPressure'
	# each test starts its own node: its pods go with it
	kubectl delete pods --all -n "$TEST_NS" --grace-period=0 --force --wait=false \
		>/dev/null 2>&1 || true
	stop_node || true
	kubectl delete node "$CLUSTER_NODE_NAME" --ignore-not-found >/dev/null 2>&1 || true
	remove_namespace_sandboxes "$TEST_NS"
	unmount_agent_root
	if [[ -n ${SMALL_ROOT:-} ]]; then
		umount -l "$SMALL_ROOT" 2>/dev/null || true
	fi
}

pod_json() { kubectl get pod "$1" -n "$TEST_NS" -o json; }
evicted() { # POD: Failed, reason Evicted
	pod_json "$1" | jq -e '.status.phase == "Failed" and .status.reason == "Evicted"' >/dev/null
}
status_message() { pod_json "$1" | jq -r '.status.message'; }
disruption_reason() {
	pod_json "$1" | jq -r '[.status.conditions[] | select(.type == "DisruptionTarget")][0].reason'
}
condition_is() { [[ $(node_condition "$1") == "$2" ]]; } # TYPE STATUS
evicted_event() { # POD: its Evicted event's message
	kubectl get events -n "$TEST_NS" --field-selector "involvedObject.name=$1,reason=Evicted" \
		-o jsonpath='{.items[0].message}'
}
node_metric() { # SAMPLE: the value of a sample of the node's /metrics (read-only port)
	curl -sf --max-time 5 "http://127.0.0.1:$CKUBELET_READ_ONLY_PORT/metrics" |
		awk -v s="$1" '$1 == s { print $2 }'
}
evictions_are() { # SIGNAL N: kubelet_evictions of SIGNAL is N (says what it is otherwise)
	local got
	got=$(node_metric "kubelet_evictions{eviction_signal=\"$1\"}")
	[[ $got == "$2" ]] || {
		echo "kubelet_evictions{eviction_signal=\"$1\"} is '$got', not $2" >&2
		return 1
	}
}

@test "pid.available: the pod with the most processes is evicted, PIDPressure meanwhile, another pod refused, the bystander runs on" {
	# the threshold 800 processes below what is free now
	local tasks max
	tasks=$(awk '{ split($4, a, "/"); print a[2] }' /proc/loadavg)
	max=$(cat /proc/sys/kernel/pid_max /proc/sys/kernel/threads-max | sort -n | head -1)
	local threshold=$((max - tasks - 800))
	# not a multiple of 1000: the message prints it as is ("31k" otherwise)
	((threshold % 1000)) || threshold=$((threshold - 1))
	start_cluster_node "" --eviction-hard="pid.available<$threshold" \
		--eviction-pressure-transition-period=30s
	wait_for -t 60 -i 0.5 node_ready
	condition_is PIDPressure False
	bound_pod bystander
	wait_for -t 60 kpod_phase_is "$TEST_NS" bystander Running
	# 1500 processes: 700 under the threshold
	bound_pod forker 5 'for i in $(seq 1500); do sleep 3600 & done; wait'
	wait_for -t 90 evicted forker
	# refused while the pressure is reported
	bound_pod late
	wait_for -t 30 evicted late
	[ "$(status_message late)" = "Pod was rejected: The node had condition: [PIDPressure]. " ]
	wait_for -t 30 condition_is PIDPressure True
	[[ $(status_message forker) == "The node was low on resource: pids. Threshold quantity: $threshold, available: "* ]]
	[ "$(disruption_reason forker)" = TerminationByKubelet ]
	wait_for -t 30 test -n "$(evicted_event forker)"
	[ "$(evicted_event forker)" = "$(status_message forker)" ]
	evictions_are pid.available 1
	kpod_phase_is "$TEST_NS" bystander Running
	[ "$(kpod_field "$TEST_NS" bystander '{.status.containerStatuses[0].restartCount}')" = 0 ]
	# the processes are gone: no pressure once the transition period passed
	wait_for -t 90 condition_is PIDPressure False
	kpod_phase_is "$TEST_NS" bystander Running
}

@test "memory.available above the machine's memory: MemoryPressure, a BestEffort pod refused, a Burstable one admitted then evicted" {
	start_cluster_node "" --eviction-hard="memory.available<64Gi"
	wait_for -t 60 -i 0.5 node_ready
	wait_for -t 60 condition_is MemoryPressure True
	[ "$(kubectl get node "$CLUSTER_NODE_NAME" -o json | jq -r \
		'.status.conditions[] | select(.type == "MemoryPressure") | .reason')" = \
		KubeletHasInsufficientMemory ]
	bound_pod besteffort
	wait_for -t 30 evicted besteffort
	[ "$(status_message besteffort)" = "Pod was rejected: The node had condition: [MemoryPressure]. " ]
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: burstable, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "exit 0" TERM; while :; do sleep 1; done']
	    resources: {requests: {memory: 32Mi}}
	YAML
	# admitted (not BestEffort), then the only pod to rank: evicted
	wait_for -t 60 evicted burstable
	[[ $(status_message burstable) == "The node was low on resource: memory. Threshold quantity: 64Gi, available: "* ]]
	[ "$(disruption_reason burstable)" = TerminationByKubelet ]
	evictions_are memory.available 1
}

@test "nodefs.available on a small root directory: the pod filling its emptyDir is evicted and its volume freed, the other pod runs on" {
	SMALL_ROOT=$BATS_TEST_TMPDIR/small-root
	mkdir -p "$SMALL_ROOT"
	mount -t tmpfs -o size=64m,mode=0750 ckubelet-e2e-small "$SMALL_ROOT"
	start_cluster_node "" --root-dir="$SMALL_ROOT" --eviction-hard="nodefs.available<50%" \
		--eviction-pressure-transition-period=20s --volume-stats-agg-period=2s
	wait_for -t 60 -i 0.5 node_ready
	bound_pod quiet
	wait_for -t 60 kpod_phase_is "$TEST_NS" quiet Running
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: filler, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  volumes: [{name: data, emptyDir: {}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'dd if=/dev/zero of=/data/fill bs=1M count=40; exec sleep 3600']
	    volumeMounts: [{name: data, mountPath: /data}]
	YAML
	wait_for -t 90 evicted filler
	[[ $(status_message filler) == "The node was low on resource: ephemeral-storage. Threshold quantity: 32Mi, available: "* ]]
	[ "$(disruption_reason filler)" = TerminationByKubelet ]
	wait_for -t 30 condition_is DiskPressure True
	# the node reclaimed images and containers before evicting
	grep -q '"Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"' \
		"$CKUBELET_LOG"
	# its emptyDir is gone: the disk is free again
	wait_for -t 30 test "$(df --output=used -B1M "$SMALL_ROOT" | tail -1 | tr -d ' ')" -lt 20
	wait_for -t 60 condition_is DiskPressure False
	kpod_phase_is "$TEST_NS" quiet Running
	[ "$(kpod_field "$TEST_NS" quiet '{.status.containerStatuses[0].restartCount}')" = 0 ]
}

@test "local storage limits: an emptyDir over its sizeLimit and a container over its ephemeral-storage limit are evicted, the pod within its limits runs on" {
	start_cluster_node "" --volume-stats-agg-period=2s
	wait_for -t 60 -i 0.5 node_ready
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: sized, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  volumes: [{name: data, emptyDir: {sizeLimit: 10Mi}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'dd if=/dev/zero of=/data/fill bs=1M count=20; exec sleep 3600']
	    volumeMounts: [{name: data, mountPath: /data}]
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: limited, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'dd if=/dev/zero of=/fill bs=1M count=20; exec sleep 3600']
	    resources: {limits: {ephemeral-storage: 5Mi}}
	  # the pod's total (105Mi) is not exceeded: the container's own limit is
	  - name: roomy
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'exec sleep 3600']
	    resources: {limits: {ephemeral-storage: 100Mi}}
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: within, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  volumes: [{name: data, emptyDir: {sizeLimit: 10Mi}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'dd if=/dev/zero of=/data/fill bs=1M count=2; exec sleep 3600']
	    volumeMounts: [{name: data, mountPath: /data}]
	    resources: {limits: {ephemeral-storage: 50Mi}}
	YAML
	wait_for -t 60 evicted sized
	[ "$(status_message sized)" = 'Usage of EmptyDir volume "data" exceeds the limit "10Mi". ' ]
	wait_for -t 60 evicted limited
	[ "$(status_message limited)" = 'Container main exceeded its local ephemeral storage limit "5Mi". ' ]
	# upstream adds no DisruptionTarget on this path
	[ "$(disruption_reason sized)" = null ]
	evictions_are emptydirfs.limit 1
	evictions_are ephemeralcontainerfs.limit 1
	kpod_phase_is "$TEST_NS" within Running
}
