#!/usr/bin/env bats
# Garbage collection on the real containerd.  Images: unused ones removed by
# disk usage and by age, never one a container uses or the sandbox image.
# Containers: the dead instances kept per container and per node, the log
# directories of pods that are gone.  A collection removes every unused
# image and may remove any dead container, so these tests run on a
# containerd of their own (hack/local-runtime with CK_RUNTIME_NETWORK=none,
# hostNetwork pods only), never on the store the other suites share.

load helpers
load pods

setup_file() {
	GC_RUNTIME_DIR=$(mktemp -d /tmp/ckgc.XXXXXX)
	export GC_RUNTIME_DIR
	export CK_RUNTIME_DIR=$GC_RUNTIME_DIR CK_RUNTIME_NETWORK=none
	runtime_up
}

teardown_file() {
	CK_RUNTIME_DIR=$GC_RUNTIME_DIR CK_RUNTIME_NETWORK=none CK_BUILD_DIR=$BUILD \
		"$E2E_REPO/hack/local-runtime" down
}

setup() {
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	mkdir -p "$MANIFESTS"
	unset CKUBELET_GC_PERIOD
}

teardown() {
	unset CKUBELET_GC_PERIOD
	cleanup_agent
}

# import_image NAME: builds localhost/NAME:1, an image of one file whose
# content is unique (its own ID), and imports it into this file's runtime.
import_image() {
	local name=$1 out=$BATS_TEST_TMPDIR/images
	(
		OUT_DIR=$out
		# shellcheck source=images/oci.bash
		. "$E2E_REPO/images/oci.bash"
		mkdir -p "$WORK/root"
		echo "$name $BATS_TEST_NAME $(date +%s%N)" >"$WORK/root/content"
		build_image "$name" "localhost/$name:1" "$WORK/root" '{"Cmd": ["/content"]}' >/dev/null
	)
	ctr -a "$GC_RUNTIME_DIR/containerd.sock" -n k8s.io images import "$out/$name.tar" >/dev/null
}

image_id() { # NAME: the ID of the image NAME, or nothing when absent
	crictl images -o json | jq -r --arg n "$1" '.images[] | select(.repoTags | index($n)) | .id'
}

image_present() { [[ -n $(image_id "$1") ]]; }
image_gone() { query_empty image_id "$1"; }

metric() { # NAME LABELS: the value of a /metrics sample, or nothing
	curl -sf --max-time 5 "http://127.0.0.1:$CKUBELET_READ_ONLY_PORT/metrics" |
		awk -v s="$1{$2}" '$1 == s { print $2 }'
}

# A hostNetwork pod on busybox, started by an agent without image GC and
# left running: busybox is in use from the first collection on.
start_user_pod() {
	cat >"$MANIFESTS/user.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: user}
	spec:
	  hostNetwork: true
	  containers:
	  - name: c
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	YAML
	start_agent "$MANIFESTS" --image-gc-high-threshold=100
	wait_for -t 60 phase_is user Running
	stop_ckubelet
}

@test "over the high threshold, unused images are removed; an image in use and the sandbox image stay" {
	import_image gc-victim
	image_present localhost/gc-victim:1
	start_user_pod
	# GC down to 0% used: more than any image can free (a FreeDiskSpaceFailed
	# warning), so every eligible image goes
	export CKUBELET_GC_PERIOD=1s
	start_agent "$MANIFESTS" --image-gc-high-threshold=1 --image-gc-low-threshold=0 \
		--minimum-image-ttl-duration=1s
	wait_for -t 30 image_gone localhost/gc-victim:1
	image_present localhost/busybox:1.35
	image_present "$PAUSE_IMAGE"
	grep -q '"Removing image to free bytes" imageID="sha256:' "$CKUBELET_LOG"
	grep -q 'reason="FreeDiskSpaceFailed" message="Insufficient free disk space on the node' \
		"$CKUBELET_LOG"
	[ "$(metric kubelet_image_garbage_collected_total 'reason="space"')" = 1 ]
	# the pod never noticed
	phase_is user Running
	[ "$(restart_count user c)" = 0 ]
	# later collections keep the images in use
	sleep 3
	image_present localhost/busybox:1.35
	image_present "$PAUSE_IMAGE"
}

@test "imageMaximumGCAge removes images unused for longer, with disk-usage GC off" {
	import_image gc-old
	image_present localhost/gc-old:1
	start_user_pod
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	imageGCHighThresholdPercent: 100
	imageGCLowThresholdPercent: 80
	imageMinimumGCAge: 1s
	imageMaximumGCAge: 3s
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	export CKUBELET_GC_PERIOD=1s
	start_agent "$MANIFESTS" --config="$BATS_TEST_TMPDIR/config.yaml"
	# not before 3 s since the agent started
	image_present localhost/gc-old:1
	wait_for -t 30 image_gone localhost/gc-old:1
	image_present localhost/busybox:1.35
	image_present "$PAUSE_IMAGE"
	[ "$(metric kubelet_image_garbage_collected_total 'reason="age"')" = 1 ]
	phase_is user Running
}

@test "with the high threshold at 100 and no maximum age, image GC is off" {
	import_image gc-kept
	export CKUBELET_GC_PERIOD=1s
	start_agent "$MANIFESTS" --image-gc-high-threshold=100 --minimum-image-ttl-duration=1s
	grep -q 'ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC' \
		"$CKUBELET_LOG"
	sleep 3
	image_present localhost/gc-kept:1
}

# the containers of a static pod in the runtime, by state ("" for all)
n_containers() { # POD [STATE]
	crictl ps -a -o json | jq --arg p "$1-$E2E_NODE" --arg s "${2:-}" \
		'[.containers[] | select(.labels["io.kubernetes.pod.name"] == $p)
		  | select($s == "" or .state == $s)] | length'
}

crashed_twice_two_kept() {
	waiting_reason_is crash c CrashLoopBackOff && [ "$(restart_count crash c)" = 2 ] &&
		[ "$(n_containers crash)" = 2 ]
}

@test "--maximum-dead-containers-per-container=2 keeps the two newest dead instances" {
	cat >"$MANIFESTS/crash.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: crash}
	spec:
	  hostNetwork: true
	  containers:
	  - name: c
	    image: localhost/busybox:1.35
	    command: [sh, -c, "exit 1"]
	YAML
	start_agent "$MANIFESTS" --image-gc-high-threshold=100 --maximum-dead-containers-per-container=2
	# three instances ran and exited (restart count 2, backing off): the
	# oldest is gone, the other two stay (the default keeps one)
	wait_for -t 90 crashed_twice_two_kept
	[ "$(n_containers crash CONTAINER_EXITED)" = 2 ]
	grep -q 'Flag --maximum-dead-containers-per-container has been deprecated, Use --eviction-hard' \
		"$CKUBELET_LOG"
}

# runs once (exit 1), then, restarted, keeps running: one dead instance
once_then_run() { # NAME
	cat >"$MANIFESTS/$1.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1}
	spec:
	  hostNetwork: true
	  volumes: [{name: d, emptyDir: {}}]
	  containers:
	  - name: c
	    image: localhost/busybox:1.35
	    command: [sh, -c, "[ -e /d/ran ] && exec sleep 3600; touch /d/ran; exit 1"]
	    volumeMounts: [{name: d, mountPath: /d}]
	YAML
}

dead_on_node() {
	echo $(($(n_containers once-a CONTAINER_EXITED) + $(n_containers once-b CONTAINER_EXITED)))
}

both_running_one_dead() {
	running_is once-a c && running_is once-b c && [ "$(dead_on_node)" = 1 ]
}

@test "--maximum-dead-containers=1 keeps one dead container on the node" {
	once_then_run once-a
	once_then_run once-b
	export CKUBELET_GC_PERIOD=1s
	start_agent "$MANIFESTS" --image-gc-high-threshold=100 --maximum-dead-containers=1
	# each pod's container exited once and runs again: two dead instances,
	# one over the limit
	wait_for -t 60 both_running_one_dead
	grep -q "Removing container to stay within the dead containers' limit" "$CKUBELET_LOG"
	sleep 3
	both_running_one_dead
}

@test "the log directory of a pod removed while the agent was down is removed; a running pod's stays" {
	logs=$BATS_TEST_TMPDIR/podlogs
	gone=$logs/default_gone-e2e-node_6b1c2f9e0a7d4c3b8e5f1a2b3c4d5e6f
	mkdir -p "$gone/c"
	echo "an old line" >"$gone/c/0.log"
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	podLogsDir: $logs
	imageGCHighThresholdPercent: 100
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	cat >"$MANIFESTS/logger.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: logger}
	spec:
	  hostNetwork: true
	  containers:
	  - name: c
	    image: localhost/busybox:1.35
	    command: [sh, -c, "echo hello; exec sleep 3600"]
	YAML
	start_agent "$MANIFESTS" --config="$BATS_TEST_TMPDIR/config.yaml"
	wait_for -t 60 phase_is logger Running
	wait_for -t 30 test ! -e "$gone"
	uid=$(pod_uid logger)
	[ -f "$logs/default_logger-e2e-node_$uid/c/0.log" ]
	grep -q '"Removing the log directory of a pod that is gone"' "$CKUBELET_LOG"
}
