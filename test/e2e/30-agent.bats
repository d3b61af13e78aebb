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

@test "--cgroup-driver=systemd without systemd fails at start, naming systemd's socket" {
	# with systemd as init the driver works: test/vm runs the suites with it
	[[ ! -d /run/systemd/system ]] || skip "systemd is the init system here: make test-vm covers the driver"
	run timeout 30 "$BUILD/ckubelet" --cgroup-driver=systemd --root-dir="$BATS_TEST_TMPDIR/root" \
		--container-runtime-endpoint="$CONTAINER_RUNTIME_ENDPOINT" --read-only-port=0 \
		"${E2E_CGROUP_V1_FLAGS[@]}"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"connect to systemd at unix:path=/run/systemd/private (is systemd the init system?)"* ]]
}

@test "on a cgroup v1 host the agent refuses to start by default (failCgroupV1), and starts with it false" {
	[[ ! -f /sys/fs/cgroup/cgroup.controllers ]] || skip "this host is cgroup v2"
	run timeout 30 "$BUILD/ckubelet" --root-dir="$BATS_TEST_TMPDIR/root" \
		--container-runtime-endpoint="$CONTAINER_RUNTIME_ENDPOINT" --read-only-port=0
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release"* ]]
	# nothing made before the refusal
	[ ! -e "$BATS_TEST_TMPDIR/root/pods" ]
	# --fail-cgroupv1=false (start_ckubelet's flag here): it runs, with
	# upstream's deprecation warning
	start_ckubelet "$MANIFESTS"
	grep -q "cgroup v1 detected. cgroup v1 support is deprecated" "$CKUBELET_LOG"
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

@test "a shutdown grace period on a node without logind: the node shutdown manager is refused with its cause, the pods run" {
	# this machine runs no system bus: the shutdown manager cannot start,
	# which upstream logs and runs on without
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	shutdownGracePeriod: 20s
	shutdownGracePeriodCriticalPods: 5s
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	cat >"$MANIFESTS/runs.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: runs}
	spec:
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BATS_TEST_TMPDIR/no-bus \
		start_agent "$MANIFESTS" --config="$BATS_TEST_TMPDIR/config.yaml"
	wait_for -t 60 phase_is runs Running
	grep -q "Failed to start node shutdown manager\" err=\"connect to the system bus at unix:path=$BATS_TEST_TMPDIR/no-bus: No such file or directory\"" "$CKUBELET_LOG"
	# the fields are taken, not listed among those the agent does not use
	grep -q "Creating node shutdown manager" "$CKUBELET_LOG"
	! grep "does not implement" "$CKUBELET_LOG" | grep -q shutdownGracePeriod
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
