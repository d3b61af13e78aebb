#!/usr/bin/env bats
# Device plugins on a ckubelet node of the local cluster, with upstream's
# own sample device plugin (test/images/sample-device-plugin: the resource
# example.com/resource, devices Dev-1 and Dev-2, each allocated as a file
# /tmp/<id> the plugin mounts into the container), run on the host as a
# device plugin runs: it registers on /var/lib/kubelet/device-plugins/
# kubelet.sock and serves its own socket beside it.  What a kubectl user
# sees: the node's capacity and allocatable, pods given devices or
# refused, and what a stopped plugin or a restarted kubelet change.

load helpers
load cluster

TOOLS=$BATS_TEST_DIRNAME/../tools

setup_file() {
	"$TOOLS/build" "$TOOLS/bin" sample-device-plugin >&3
	cluster_file_setup e2e-devices
	start_cluster_node ""
	wait_for -t 60 -i 0.5 node_ready
	start_plugin
}

teardown_file() {
	stop_plugin
	cleanup_node "$TEST_NS"
	rm -f /tmp/Dev-1 /tmp/Dev-2
}

# start_plugin: the sample plugin, in the background (its log in the file
# temporary directory).
start_plugin() {
	"$TOOLS/bin/sample-device-plugin" >>"$BATS_FILE_TMPDIR/plugin.log" 2>&1 </dev/null &
	echo $! >"$BATS_FILE_TMPDIR/plugin.pid"
}

stop_plugin() {
	local pid
	pid=$(cat "$BATS_FILE_TMPDIR/plugin.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || true
	wait_for -t 20 eval "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null || true
	rm -f "$BATS_FILE_TMPDIR/plugin.pid"
}

# resource_is CAPACITY ALLOCATABLE: the node reports example.com/resource
# so ("" for absent).
resource_is() {
	local node
	node=$(kubectl get node "$CLUSTER_NODE_NAME" -o json) || return 1
	[[ $(jq -r '.status.capacity["example.com/resource"] // ""' <<<"$node") == "$1" &&
		$(jq -r '.status.allocatable["example.com/resource"] // ""' <<<"$node") == "$2" ]]
}

# device_pod NAME COUNT: a pod of TEST_NS bound to the node asking for
# COUNT devices.
device_pod() {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 2
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "exit 0" TERM; while :; do sleep 1; done']
	    resources: {limits: {example.com/resource: $2}}
	YAML
}

# node_metric NAME: the series of NAME on the node's /metrics (its
# read-only port).
node_metric() {
	local body
	body=$(curl -sf --max-time 5 "http://127.0.0.1:${CKUBELET_READ_ONLY_PORT:-10255}/metrics") ||
		return 2
	grep -F "$1" <<<"$body"
}

@test "device plugins: the plugin's devices on the node; a pod gets one (its mount); more than is free is refused" {
	wait_for -t 60 -i 1 resource_is 2 2
	device_pod one 1
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" one
	# the plugin's answer reached the container: the device's file, mounted
	run kubectl exec -n "$TEST_NS" one -- sh -c 'ls /tmp/Dev-*'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == /tmp/Dev-1 || $output == /tmp/Dev-2 ]]
	# allocations do not change what the node reports
	resource_is 2 2

	device_pod two 2
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" two Failed
	[ "$(kpod_field "$TEST_NS" two '{.status.reason}')" = UnexpectedAdmissionError ]
	[ "$(kpod_field "$TEST_NS" two '{.status.message}')" = "Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 2, Available: 1, which is unexpected" ]
	kubectl get events -n "$TEST_NS" --field-selector involvedObject.name=two -o json |
		jq -e '.items[] | select(.reason == "UnexpectedAdmissionError" and .type == "Warning")' >/dev/null
	kubectl delete pod two -n "$TEST_NS" --wait=false >/dev/null

	run node_metric 'kubelet_device_plugin_registration_total{resource_name="example.com/resource"}'
	echo "$output"
	[ "$status" -eq 0 ]
	run node_metric 'kubelet_device_plugin_alloc_duration_seconds_count{resource_name="example.com/resource"}'
	echo "$output"
	[[ $output == *" 1" ]]
}

@test "device plugins: a stopped plugin leaves its devices unhealthy; a restarted kubelet keeps what pods hold; the plugin comes back" {
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" one
	ctr=$(kpod_running_container "$TEST_NS" one main)
	stop_plugin
	# capacity stays, allocatable goes (for 5 minutes, then the resource)
	wait_for -t 60 -i 1 resource_is 2 0
	# the pod keeps its device and runs on
	[ "$(kpod_running_container "$TEST_NS" one main)" = "$ctr" ]
	device_pod three 1
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" three Failed
	[ "$(kpod_field "$TEST_NS" three '{.status.message}')" = "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices example.com/resource, which is unexpected" ]
	kubectl delete pod three -n "$TEST_NS" --wait=false >/dev/null

	start_plugin
	wait_for -t 60 -i 1 resource_is 2 2

	# a restart: the allocation is the checkpoint's, upstream's file
	jq -e --arg uid "$(kpod_uid "$TEST_NS" one)" \
		'.Data.PodDeviceEntries[] | select(.PodUID == $uid and .ResourceName == "example.com/resource")' \
		/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint >/dev/null
	stop_node
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR start_cluster_node ""
	wait_for -t 60 -i 0.5 node_ready
	# the plugin saw kubelet.sock made again and registered again
	wait_for -t 60 -i 1 resource_is 2 2
	[ "$(kpod_running_container "$TEST_NS" one main)" = "$ctr" ]
	# one device is held by "one": one left
	device_pod four 2
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" four Failed
	[[ $(kpod_field "$TEST_NS" four '{.status.message}') == *"Requested: 2, Available: 1"* ]]
	kubectl delete pod four -n "$TEST_NS" --wait=false >/dev/null
	# "one" gone, its device is free again
	kubectl delete pod one -n "$TEST_NS" --wait=true >/dev/null
	device_pod five 2
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" five
	[ "$(kubectl exec -n "$TEST_NS" five -- sh -c 'ls /tmp/Dev-* | wc -l')" = 2 ]
}
