#!/usr/bin/env bats
# ckubelet as a node of the local cluster (hack/local-cluster), seen as a
# kubectl user sees it: registration and status, the Lease, the Node
# authorizer, mirror pods of static pods, and a kubelet that stops and
# starts again.  One ckubelet for the whole file (setup_file), registered
# anew: the Node is deleted before and after.

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-node
	MANIFESTS=$BATS_FILE_TMPDIR/manifests
	mkdir -p "$MANIFESTS"
	export MANIFESTS
	start_cluster_node "$MANIFESTS"
}

teardown_file() {
	kubectl label node "$CLUSTER_NODE_NAME" e2e-disk- >/dev/null 2>&1 || true
	rm -f "$MANIFESTS"/*.yaml
	cleanup_node "$TEST_NS"
}

# restart_node: start ckubelet again with the flags and root dir of
# setup_file (the first run's log is kept as ckubelet-1.log).
restart_node() {
	cp "$BATS_FILE_TMPDIR/ckubelet.log" "$BATS_FILE_TMPDIR/ckubelet-1.log"
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR start_cluster_node "$MANIFESTS"
}

@test "cluster node: registers and turns Ready with capacity, addresses and nodeInfo" {
	wait_for -t 60 -i 0.5 node_ready
	run kubectl get node "$CLUSTER_NODE_NAME" --no-headers
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(awk '{ print $2 }' <<<"$output")" = Ready ]

	node=$(kubectl get node "$CLUSTER_NODE_NAME" -o json)
	jq .status <<<"$node"
	field() { jq -r "$1" <<<"$node"; }
	[ "$(field .status.capacity.cpu)" = "$(getconf _NPROCESSORS_ONLN)" ]
	[ "$(field .status.capacity.memory)" = "$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)Ki" ]
	[ "$(field .status.capacity.pods)" = 110 ]
	[ "$(field '.status.capacity["ephemeral-storage"] // ""')" != "" ]
	[ "$(field .status.allocatable.cpu)" != null ]
	[ "$(field .status.allocatable.memory)" != null ]
	[ "$(field '.status.allocatable["ephemeral-storage"] // ""')" != "" ]
	[ "$(field .status.allocatable.pods)" = 110 ]

	[ "$(field '.status.addresses[] | select(.type == "InternalIP") | .address')" = 127.0.0.1 ]
	[ "$(field '.status.addresses[] | select(.type == "Hostname") | .address')" = "$CLUSTER_NODE_NAME" ]

	[[ $(field .status.nodeInfo.kubeletVersion) =~ ^v1\.[0-9]+\.[0-9]+ ]]
	[[ $(field .status.nodeInfo.containerRuntimeVersion) == containerd://* ]]
	[ "$(field .status.nodeInfo.kernelVersion)" = "$(uname -r)" ]
	[ "$(field .status.nodeInfo.operatingSystem)" = linux ]
	[ "$(field .status.nodeInfo.architecture)" = "$(dpkg --print-architecture)" ]
	[ "$(field .status.nodeInfo.bootID)" = "$(cat /proc/sys/kernel/random/boot_id)" ]
	if [[ -s /etc/machine-id ]]; then
		[ "$(field .status.nodeInfo.machineID)" = "$(cat /etc/machine-id)" ]
	fi

	[ "$(field '.metadata.labels["kubernetes.io/hostname"]')" = "$CLUSTER_NODE_NAME" ]
	[ "$(field '.metadata.labels["kubernetes.io/os"]')" = linux ]
	for c in MemoryPressure DiskPressure PIDPressure; do
		[ "$(node_condition "$c")" = False ]
	done
}

# node_images_are WANT: the node's status.images, as a set, is WANT (both
# normalized: names as a list, sorted by names).
node_images_are() {
	local got
	got=$(kubectl get node "$CLUSTER_NODE_NAME" -o json |
		jq -cS '[.status.images // [] | .[] | {names: (.names // []), sizeBytes: (.sizeBytes // 0)}] | sort_by(.names)')
	[ "$got" = "$1" ] || {
		echo "status.images: $got"
		return 1
	}
}

@test "cluster node: status.images lists the runtime's images (digests then tags, at most 5 names) with their sizes" {
	wait_for -t 60 -i 0.5 node_ready
	local want
	want=$(crictl images -o json |
		jq -cS '[.images[] | {names: (((.repoDigests // []) + (.repoTags // []))[:5]), sizeBytes: (.size | tonumber)}] | sort_by(.names)')
	echo "crictl images: $want"
	[ "$(jq length <<<"$want")" -gt 0 ]
	# listed every 30 s (upstream's image cache), patched at the next check (10 s)
	wait_for -t 60 -i 1 node_images_are "$want"
}

# lease_renewed_since TIME: the node's Lease has a renewTime other than TIME.
lease_renewed_since() {
	local t
	t=$(kubectl get lease -n kube-node-lease "$CLUSTER_NODE_NAME" -o jsonpath='{.spec.renewTime}')
	[[ -n $t && $t != "$1" ]]
}

@test "cluster node: its Lease in kube-node-lease is held by the node, owned by the Node, renewed" {
	wait_for -t 60 -i 0.5 kubectl get lease -n kube-node-lease "$CLUSTER_NODE_NAME" -o name
	lease=$(kubectl get lease -n kube-node-lease "$CLUSTER_NODE_NAME" -o json)
	echo "$lease"
	[ "$(jq -r .spec.holderIdentity <<<"$lease")" = "$CLUSTER_NODE_NAME" ]
	[ "$(jq -r .spec.leaseDurationSeconds <<<"$lease")" = 40 ]
	[ "$(jq -r '.metadata.ownerReferences[0].kind' <<<"$lease")" = Node ]
	[ "$(jq -r '.metadata.ownerReferences[0].name' <<<"$lease")" = "$CLUSTER_NODE_NAME" ]
	[ "$(jq -r '.metadata.ownerReferences[0].uid' <<<"$lease")" = "$(node_field '{.metadata.uid}')" ]
	# Renewed every 10 s (a quarter of the duration).
	wait_for -t 25 -i 1 lease_renewed_since "$(jq -r .spec.renewTime <<<"$lease")"
}

@test "cluster node: the Node authorizer gives the node the secrets of its own pods only" {
	kubectl create secret generic mine -n "$TEST_NS" --from-literal=password=s3cret
	kubectl create secret generic other -n "$TEST_NS" --from-literal=password=hidden

	# Before a pod of this node refers to it, "mine" is not the node's either.
	run node_kubectl get secret mine -n "$TEST_NS" -o name
	echo "before the pod: $output"
	[ "$status" -ne 0 ]
	[[ $output == *[Ff]orbidden* ]]

	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: reader, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  volumes: [{name: creds, secret: {secretName: mine}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    volumeMounts: [{name: creds, mountPath: /etc/creds}]
	YAML
	# The authorizer's graph follows the pod's binding asynchronously.
	wait_for -t 30 -i 0.5 node_kubectl get secret mine -n "$TEST_NS" -o name
	[ "$(node_kubectl get secret mine -n "$TEST_NS" -o jsonpath='{.data.password}' | base64 -d)" = s3cret ]

	run node_kubectl get secret other -n "$TEST_NS" -o name
	echo "another secret: $output"
	[ "$status" -ne 0 ]
	[[ $output == *[Ff]orbidden* ]]

	run node_kubectl get secrets -n "$TEST_NS" -o name
	echo "list: $output"
	[ "$status" -ne 0 ]
	[[ $output == *[Ff]orbidden* ]]

	# And the pod itself got it.
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" reader Running
	ctr=$(kpod_running_container "$TEST_NS" reader main)
	[ "$(crictl exec "$ctr" cat /etc/creds/password)" = s3cret ]
}

# mirror_replaced NS NAME OLD_UID: a mirror pod NAME other than OLD_UID,
# not being deleted.
mirror_replaced() {
	local uid deleting
	uid=$(kpod_uid "$1" "$2")
	deleting=$(kpod_field "$1" "$2" '{.metadata.deletionTimestamp}')
	[[ -n $uid && $uid != "$3" && -z $deleting ]]
}

@test "cluster node: a static pod gets a mirror pod, recreated when deleted, gone with the manifest" {
	cat >"$MANIFESTS/static-web.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: static-web, namespace: $TEST_NS, labels: {app: static-web}}
	spec:
	  terminationGracePeriodSeconds: 5
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "exit 0" TERM; while :; do sleep 1; done']
	YAML
	mirror=static-web-$CLUSTER_NODE_NAME
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" "$mirror" Running
	pod=$(kubectl get pod -n "$TEST_NS" "$mirror" -o json)
	jq .metadata <<<"$pod"
	[ "$(jq -r '.metadata.annotations["kubernetes.io/config.mirror"] // ""' <<<"$pod")" != "" ]
	[ "$(jq -r '.metadata.annotations["kubernetes.io/config.source"]' <<<"$pod")" = file ]
	[ "$(jq -r .spec.nodeName <<<"$pod")" = "$CLUSTER_NODE_NAME" ]
	[ "$(jq -r '.metadata.ownerReferences[0].kind' <<<"$pod")" = Node ]
	[ "$(jq -r '.metadata.ownerReferences[0].name' <<<"$pod")" = "$CLUSTER_NODE_NAME" ]
	[ "$(jq -r '.metadata.labels.app' <<<"$pod")" = static-web ]
	wait_for -t 30 -i 0.5 kpod_ready "$TEST_NS" "$mirror"
	ctr=$(kpod_running_container "$TEST_NS" "$mirror" main)
	[ -n "$ctr" ]
	[ "$(kpod_field "$TEST_NS" "$mirror" '{.status.containerStatuses[0].containerID}')" = "containerd://$ctr" ]

	# A user deletes the mirror pod: the kubelet puts it back, the static
	# pod itself runs on untouched.
	uid=$(kpod_uid "$TEST_NS" "$mirror")
	kubectl delete pod -n "$TEST_NS" "$mirror" --wait=false
	wait_for -t 60 -i 0.5 mirror_replaced "$TEST_NS" "$mirror" "$uid"
	wait_for -t 30 -i 0.5 kpod_phase_is "$TEST_NS" "$mirror" Running
	[ "$(kpod_running_container "$TEST_NS" "$mirror" main)" = "$ctr" ]

	# The manifest goes: the pod and its mirror go.
	rm "$MANIFESTS/static-web.yaml"
	wait_for -t 60 -i 0.5 kpod_gone "$TEST_NS" "$mirror"
	wait_for -t 60 -i 0.5 kpod_runtime_empty "$TEST_NS" "$mirror"
}

@test "cluster node: a pod bound by hand to the node it does not fit is refused with NodeAffinity (the Node's labels, an admin's among them)" {
	# a label an admin gave the node: the agent reads the Node's labels
	kubectl label node "$CLUSTER_NODE_NAME" e2e-disk=ssd --overwrite
	sleep 2 # the agent's watch of its Node
	bound_pod wrong-disk 1 'sleep 3600' Never '' '  nodeSelector: {e2e-disk: hdd}'
	bound_pod right-disk 1 'sleep 3600' Never '' '  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: e2e-disk, operator: In, values: [ssd, nvme]}]}]}}}'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" wrong-disk Failed
	[ "$(kpod_field "$TEST_NS" wrong-disk '{.status.reason}')" = NodeAffinity ]
	[ "$(kpod_field "$TEST_NS" wrong-disk '{.status.message}')" = "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" ]
	[ -z "$(kpod_sandboxes "$TEST_NS" wrong-disk)" ]
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" right-disk Running
	kubectl delete pod -n "$TEST_NS" right-disk wrong-disk --wait=false
}

@test "cluster node: a pod bound by hand that asks for more cpu than the node has is refused with OutOfcpu" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: too-big, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  restartPolicy: Never
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"], resources: {requests: {cpu: "64"}}}
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" too-big Failed
	[ "$(kpod_field "$TEST_NS" too-big '{.status.reason}')" = OutOfcpu ]
	msg=$(kpod_field "$TEST_NS" too-big '{.status.message}')
	echo "$msg"
	[[ $msg == "Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, used: "*", capacity: "* ]]
	[ -z "$(kpod_sandboxes "$TEST_NS" too-big)" ]
	kubectl delete pod -n "$TEST_NS" too-big --wait=false
}

@test "cluster node: stopped, the node turns NotReady; started again, Ready with its pods untouched" {
	bound_pod survivor
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" survivor
	uid=$(kpod_uid "$TEST_NS" survivor)
	ctr=$(kpod_running_container "$TEST_NS" survivor main)
	[ -n "$ctr" ]
	sandbox=$(kpod_sandboxes "$TEST_NS" survivor)

	stop_node
	# The node lifecycle controller waits --node-monitor-grace-period (50 s
	# by default) after the last Lease renewal.
	wait_for -t 120 -i 2 node_not_ready
	[ "$(node_condition Ready)" = Unknown ]
	[ "$(kubectl get node "$CLUSTER_NODE_NAME" --no-headers | awk '{ print $2 }')" = NotReady ]
	# Without its kubelet the pod runs on.
	[ "$(kpod_running_container "$TEST_NS" survivor main)" = "$ctr" ]

	restart_node
	wait_for -t 60 -i 0.5 node_ready
	# The controller marked the pod not Ready meanwhile; the kubelet's status
	# catches up.
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" survivor
	[ "$(kpod_uid "$TEST_NS" survivor)" = "$uid" ]
	[ "$(kpod_running_container "$TEST_NS" survivor main)" = "$ctr" ]
	[ "$(kpod_sandboxes "$TEST_NS" survivor)" = "$sandbox" ]
	[ "$(kpod_field "$TEST_NS" survivor '{.status.containerStatuses[0].restartCount}')" = 0 ]
	[ "$(kpod_field "$TEST_NS" survivor '{.status.containerStatuses[0].containerID}')" = "containerd://$ctr" ]
	[ "$(kpod_field "$TEST_NS" survivor '{.status.phase}')" = Running ]
}
