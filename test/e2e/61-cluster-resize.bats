#!/usr/bin/env bats
# In-place pod resize (the pods/resize subresource) on a ckubelet node of the
# local cluster, as a kubectl user drives it: what the containers and the pod
# cgroup get (read on the node), what the status reports, the resize
# conditions and events, a RestartContainer policy, and resizes the node
# cannot take now (Deferred) or ever (Infeasible).  upstream's own resize
# specs run in 70-conformance.bats; these check what they do not: the pod
# cgroup, the checkpoint, Deferred and Infeasible, a restart policy.

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-resize
	start_cluster_node ""
	wait_for -t 60 -i 0.5 node_ready
}

teardown_file() {
	cleanup_node "$TEST_NS"
}

PATIENT='trap "exit 0" TERM; while :; do sleep 1; done'

# resources_pod NAME RESOURCES [RESIZE-POLICY]: a pod of one container
# "main" with these resources (YAML flow mapping), bound to the node.
resources_pod() {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, '$PATIENT']
	    resizePolicy: ${3:-[]}
	    resources: $2
	YAML
}

# resize_pod POD PATCH: a strategic merge patch (containers merged by name)
# through the resize subresource.
resize_pod() {
	kubectl patch pod "$1" -n "$TEST_NS" --subresource resize --type strategic -p "$2"
}

# resized POD: the status reports the spec's resources for every container,
# with no resize condition left and the new generation observed.
resized() {
	kubectl get pod "$1" -n "$TEST_NS" -o json | jq -e '
		.metadata.generation == .status.observedGeneration and
		([.status.conditions[] | select(.type | startswith("PodResize"))] | length) == 0 and
		(.spec.containers | map({(.name): .resources}) | add) as $want |
		all(.status.containerStatuses[];
			.resources == $want[.name] and
			.allocatedResources == $want[.name].requests)' >/dev/null
}

# pod_condition POD TYPE: its reason (empty when absent; a failed query fails).
pod_condition_reason() {
	kubectl get pod "$1" -n "$TEST_NS" -o json |
		jq -er --arg t "$2" '[.status.conditions[] | select(.type == $t)][0].reason // ""'
}
pending_is() { [[ $(pod_condition_reason "$1" PodResizePending) == "$2" ]]; }

# cgroup_value CONTROLLER PATH-UNDER-KUBEPODS FILE: a control file of the node.
cgroup_value() {
	cat "/sys/fs/cgroup/$1$CLUSTER_CGROUP_ROOT/kubepods/$2/$3"
}

container_id() { # POD CONTAINER
	kubectl get pod "$1" -n "$TEST_NS" -o json |
		jq -er --arg c "$2" '.status.containerStatuses[] | select(.name == $c) | .containerID' |
		sed 's|^containerd://||'
}

event_seen() { # POD REASON
	kubectl get events -n "$TEST_NS" --field-selector "involvedObject.name=$1,reason=$2" \
		-o name | grep -q .
}

@test "resize: cpu and memory of a running container change in place; the pod cgroup, the status and the checkpoint follow" {
	resources_pod grow '{requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 200m, memory: 64Mi}}'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" grow
	uid=$(kpod_uid "$TEST_NS" grow)
	id=$(container_id grow main)
	[ "$(cgroup_value cpu "burstable/pod$uid/$id" cpu.cfs_quota_us)" = 20000 ]
	[ "$(cgroup_value cpu "burstable/pod$uid" cpu.cfs_quota_us)" = 20000 ]
	resized grow

	resize_pod grow '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"150m","memory":"48Mi"},"limits":{"cpu":"300m","memory":"96Mi"}}}]}}'
	wait_for -t 60 -i 0.5 resized grow
	# the same container, now with the new values; its pod cgroup too
	[ "$(container_id grow main)" = "$id" ]
	[ "$(kpod_field "$TEST_NS" grow '{.status.containerStatuses[0].restartCount}')" = 0 ]
	[ "$(cgroup_value cpu "burstable/pod$uid/$id" cpu.cfs_quota_us)" = 30000 ]
	[ "$(cgroup_value cpu "burstable/pod$uid/$id" cpu.shares)" = 153 ]
	[ "$(cgroup_value memory "burstable/pod$uid/$id" memory.limit_in_bytes)" = 100663296 ]
	[ "$(cgroup_value cpu "burstable/pod$uid" cpu.cfs_quota_us)" = 30000 ]
	[ "$(cgroup_value cpu "burstable/pod$uid" cpu.shares)" = 153 ]
	[ "$(cgroup_value memory "burstable/pod$uid" memory.limit_in_bytes)" = 100663296 ]
	wait_for -t 30 -i 0.5 event_seen grow ResizeStarted
	wait_for -t 30 -i 0.5 event_seen grow ResizeCompleted

	# down again: decreases too, below nothing in use
	resize_pod grow '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"50m","memory":"32Mi"},"limits":{"cpu":"100m","memory":"40Mi"}}}]}}'
	wait_for -t 60 -i 0.5 resized grow
	[ "$(cgroup_value cpu "burstable/pod$uid/$id" cpu.cfs_quota_us)" = 10000 ]
	[ "$(cgroup_value memory "burstable/pod$uid/$id" memory.limit_in_bytes)" = 41943040 ]
	[ "$(cgroup_value cpu "burstable/pod$uid" cpu.cfs_quota_us)" = 10000 ]
	[ "$(cgroup_value memory "burstable/pod$uid" memory.limit_in_bytes)" = 41943040 ]

	# upstream's checkpoints, with the checksum upstream verifies
	for f in allocated_pods_state actuated_pods_state; do
		python3 - "$CKUBELET_ROOT/$f" "$uid" <<-'PY'
		import json, sys
		cp = json.load(open(sys.argv[1]))
		h = 2166136261
		for b in b"(string)" + cp["data"].encode():
		    h = ((h ^ b) * 16777619) & 0xffffffff
		assert h == cp["checksum"], (h, cp["checksum"])
		res = json.loads(cp["data"])["entries"][sys.argv[2]]["ContainerResources"]["main"]
		assert res["limits"]["memory"] == "40Mi", res
		PY
	done
}

@test "resize: a RestartContainer policy restarts the container with its new memory limit" {
	resources_pod restart '{requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 100m, memory: 32Mi}}' \
		'[{resourceName: memory, restartPolicy: RestartContainer}]'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" restart
	uid=$(kpod_uid "$TEST_NS" restart)
	id=$(container_id restart main)
	resize_pod restart '{"spec":{"containers":[{"name":"main","resources":{"requests":{"memory":"48Mi"},"limits":{"memory":"48Mi"}}}]}}'
	wait_for -t 60 -i 0.5 resized restart
	wait_for -t 30 -i 0.5 kpod_ready "$TEST_NS" restart
	[ "$(kpod_field "$TEST_NS" restart '{.status.containerStatuses[0].restartCount}')" = 1 ]
	new=$(container_id restart main)
	[ "$new" != "$id" ]
	[ "$(cgroup_value memory "pod$uid/$new" memory.limit_in_bytes)" = 50331648 ]
	[ "$(cgroup_value memory "pod$uid" memory.limit_in_bytes)" = 50331648 ]
}

@test "resize: more cpu than the node has is Infeasible, more than is free now Deferred until another pod goes" {
	alloc=$(kubectl get node "$CLUSTER_NODE_NAME" -o jsonpath='{.status.allocatable.cpu}')
	milli=$(python3 -c 'import sys; v=sys.argv[1]; print(int(v[:-1]) if v.endswith("m") else int(v)*1000)' "$alloc")
	# the other tests' pods gone: the numbers below are the node's alone
	kubectl delete pod grow restart -n "$TEST_NS" --ignore-not-found --wait=true >/dev/null
	half=$((milli / 2))
	resources_pod big "{requests: {cpu: ${half}m}}"
	resources_pod small '{requests: {cpu: 100m}}'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" big
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" small

	# never on this node
	resize_pod small '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1000"}}}]}}'
	wait_for -t 30 -i 0.5 pending_is small Infeasible
	msg=$(kubectl get pod small -n "$TEST_NS" -o json |
		jq -r '.status.conditions[] | select(.type == "PodResizePending") | .message')
	[ "$msg" = "Node didn't have enough capacity: cpu, requested: 1000000, capacity: $milli" ]
	[ "$(kpod_field "$TEST_NS" small '{.status.containerStatuses[0].allocatedResources.cpu}')" = 100m ]
	wait_for -t 30 -i 0.5 event_seen small ResizeInfeasible

	# fits the node, not what big leaves free
	want=$((milli - half + 100))
	resize_pod small "{\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"${want}m\"}}}]}}"
	wait_for -t 30 -i 0.5 pending_is small Deferred
	msg=$(kubectl get pod small -n "$TEST_NS" -o json |
		jq -r '.status.conditions[] | select(.type == "PodResizePending") | .message')
	[[ $msg == "Node didn't have enough resource: cpu, requested: $want, used: $half, capacity: $milli" ]]
	[ "$(kpod_field "$TEST_NS" small '{.status.containerStatuses[0].allocatedResources.cpu}')" = 100m ]

	# big goes: the deferred resize is admitted and done
	kubectl delete pod big -n "$TEST_NS" --wait=true >/dev/null
	wait_for -t 60 -i 0.5 resized small
	[ "$(kpod_field "$TEST_NS" small '{.status.containerStatuses[0].allocatedResources.cpu}')" = "${want}m" ]
	[ "$(kpod_field "$TEST_NS" small '{.status.containerStatuses[0].restartCount}')" = 0 ]
}

# restart_node: ckubelet again, with the same root directory (its
# checkpoints) and flags; the first run's log kept.
restart_node() {
	stop_node
	cp "$BATS_FILE_TMPDIR/ckubelet.log" "$BATS_FILE_TMPDIR/ckubelet-$SECONDS.log"
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR start_cluster_node ""
	wait_for -t 60 -i 0.5 node_ready
}

@test "resize: a resize deferred when the kubelet stops is decided again when it starts" {
	kubectl delete pod big small -n "$TEST_NS" --ignore-not-found --wait=true >/dev/null
	alloc=$(kubectl get node "$CLUSTER_NODE_NAME" -o jsonpath='{.status.allocatable.cpu}')
	milli=$(python3 -c 'import sys; v=sys.argv[1]; print(int(v[:-1]) if v.endswith("m") else int(v)*1000)' "$alloc")
	half=$((milli / 2))
	resources_pod hog "{requests: {cpu: ${half}m}}"
	resources_pod waits '{requests: {cpu: 100m}}'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" hog
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" waits
	id=$(container_id waits main)
	want=$((milli - half + 100))
	resize_pod waits "{\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"${want}m\"}}}]}}"
	wait_for -t 30 -i 0.5 pending_is waits Deferred

	# hog goes while the kubelet is away (forced: no kubelet to stop it)
	stop_node
	kubectl delete pod hog -n "$TEST_NS" --force --grace-period=0 --wait=true >/dev/null 2>&1
	restart_node
	# the running container is adopted with what was allocated, then resized
	wait_for -t 60 -i 0.5 resized waits
	[ "$(container_id waits main)" = "$id" ]
	[ "$(kpod_field "$TEST_NS" waits '{.status.containerStatuses[0].restartCount}')" = 0 ]
	[ "$(kpod_field "$TEST_NS" waits '{.status.containerStatuses[0].allocatedResources.cpu}')" = "${want}m" ]
	uid=$(kpod_uid "$TEST_NS" waits)
	[ "$(cgroup_value cpu "burstable/pod$uid/$id" cpu.shares)" = "$((want * 1024 / 1000))" ]
	kubectl delete pod waits -n "$TEST_NS" --wait=true >/dev/null
}

@test "resize: a memory limit is not lowered below what the container uses; PodResizeInProgress says why until it can be" {
	resources_pod full '{requests: {cpu: 100m, memory: 96Mi}, limits: {cpu: 100m, memory: 96Mi}}'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" full
	uid=$(kpod_uid "$TEST_NS" full)
	id=$(container_id full main)
	# 48 MiB of tmpfs pages, charged to the container
	kubectl exec -n "$TEST_NS" full -c main -- sh -c 'head -c 50331648 /dev/zero >/dev/shm/fill'
	resize_pod full '{"spec":{"containers":[{"name":"main","resources":{"requests":{"memory":"32Mi"},"limits":{"memory":"32Mi"}}}]}}'
	in_progress_error() {
		kubectl get pod full -n "$TEST_NS" -o json | jq -e '.status.conditions[] |
			select(.type == "PodResizeInProgress" and .reason == "Error") | .message' >/dev/null
	}
	wait_for -t 60 -i 0.5 in_progress_error
	msg=$(kubectl get pod full -n "$TEST_NS" -o json |
		jq -r '.status.conditions[] | select(.type == "PodResizeInProgress") | .message')
	echo "$msg"
	[[ $msg == "cannot decrease memory limits: "*"attempting to set container \"main\" memory limit (33554432) below current usage ("* ]]
	# nothing was lowered
	[ "$(cgroup_value memory "pod$uid/$id" memory.limit_in_bytes)" = 100663296 ]
	[ "$(cgroup_value memory "pod$uid" memory.limit_in_bytes)" = 100663296 ]
	wait_for -t 30 -i 0.5 event_seen full ResizeError

	# the memory freed, a later sync lowers the limits
	kubectl exec -n "$TEST_NS" full -c main -- rm /dev/shm/fill
	wait_for -t 90 -i 1 resized full
	[ "$(container_id full main)" = "$id" ]
	[ "$(cgroup_value memory "pod$uid/$id" memory.limit_in_bytes)" = 33554432 ]
	[ "$(cgroup_value memory "pod$uid" memory.limit_in_bytes)" = 33554432 ]
}
