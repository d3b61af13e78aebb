#!/usr/bin/env bats
# The agent itself: configuration file, flag errors, and a runtime that
# restarts under it.

load helpers
load pods

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	mkdir -p "$MANIFESTS"
}

teardown() {
	cleanup_agent
}

@test "an unknown flag or a bad value exits 1 with a message naming the flag" {
	run "$BUILD/ckubelet" --no-such-flag
	[ "$status" -eq 1 ]
	[[ $output == *"unknown flag: --no-such-flag"* ]]
	run "$BUILD/ckubelet" --max-pods=many
	[ "$status" -eq 1 ]
	[[ $output == *'invalid argument "many" for "--max-pods" flag'* ]]
	run "$BUILD/ckubelet" --sync-frequency=10parsecs
	[ "$status" -eq 1 ]
	[[ $output == *"--sync-frequency"* ]]
}

@test "--cgroup-driver=systemd is refused at start with a clear error" {
	run timeout 30 "$BUILD/ckubelet" --cgroup-driver=systemd --root-dir="$BATS_TEST_TMPDIR/root" \
		--container-runtime-endpoint="$CONTAINER_RUNTIME_ENDPOINT" --read-only-port=0
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"cgroup driver systemd is not supported yet"* ]]
}

@test "a KubeletConfiguration file configures the agent; a bad one is rejected" {
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	staticPodPath: manifests
	readOnlyPort: 10255
	cgroupRoot: $E2E_CGROUP_ROOT
	fileCheckFrequency: 2s
	syncFrequency: 10s
	maxPods: 5
	clusterDNS: [10.96.0.10]
	clusterDomain: cluster.local
	evictionHard: {memory.available: 100Mi}
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	cat >"$MANIFESTS/cfg.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: cfg}
	spec:
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	# staticPodPath is relative to the file's directory, as upstream resolves it
	start_ckubelet "" --config="$BATS_TEST_TMPDIR/config.yaml"
	wait_for -t 60 phase_is cfg Running
	ctr=$(running_containers_of cfg)
	run crictl exec "$ctr" cat /etc/resolv.conf
	[[ $output == *"nameserver 10.96.0.10"* ]]
	[ -d "/sys/fs/cgroup/cpu$E2E_CGROUP_ROOT/kubepods" ]
	stop_ckubelet
	printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: lots\n' \
		>"$BATS_TEST_TMPDIR/bad.yaml"
	run "$BUILD/ckubelet" --config="$BATS_TEST_TMPDIR/bad.yaml"
	[ "$status" -eq 1 ]
	[[ $output == *bad.yaml*maxPods* ]]
}

# kill_containerd: stop the runtime's daemon only; the shims (and so the
# containers) live on, as on a node where containerd is restarted.
kill_containerd() {
	local pid
	pid=$(cat "${CK_RUNTIME_DIR:-/var/lib/ckubelet-runtime}/containerd.pid")
	kill -TERM "$pid"
	wait_for -t 20 process_gone "$pid"
}

@test "the runtime restarts under the agent: running pods are kept, new pods start" {
	cat >"$MANIFESTS/before.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: before}
	spec:
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is before Running
	ctr=$(running_containers_of before)
	kill_containerd
	sleep 3 # the agent's relists and syncs fail meanwhile; it must not give up
	kill -0 "$CKUBELET_PID"
	runtime_up
	sed 's/before/after/' "$MANIFESTS/before.yaml" >"$MANIFESTS/after.yaml"
	wait_for -t 60 phase_is after Running
	[ "$(running_containers_of before)" = "$ctr" ]
	[ "$(restart_count before main)" -eq 0 ]
	[ "$(sandboxes_of before | count_lines)" -eq 1 ]
}

@test "the agent waits for a runtime that is not there yet" {
	cat >"$MANIFESTS/late.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: late}
	spec:
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	start_agent "$MANIFESTS" --container-runtime-endpoint=unix://$BATS_TEST_TMPDIR/later.sock
	sleep 2
	kill -0 "$CKUBELET_PID"
	grep -q 'Container runtime not ready.*later.sock' "$CKUBELET_LOG"
	# the runtime "appears" at that path
	ln -s "${CONTAINER_RUNTIME_ENDPOINT#unix://}" "$BATS_TEST_TMPDIR/later.sock"
	wait_for -t 60 phase_is late Running
}
