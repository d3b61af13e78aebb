#!/usr/bin/env bats
# The apiserver away (issue 3, item 10): ckubelet started before it waits
# for it while its static pods run; when it goes away for a minute the pods
# are left alone, and the status written meanwhile reaches the apiserver
# when it returns.  The apiserver is stopped and started with
# hack/local-cluster (its pid file; `up` starts what is missing).

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-away
	MANIFESTS=$BATS_FILE_TMPDIR/manifests
	FLAG_DIR=$BATS_FILE_TMPDIR/flag
	mkdir -p "$MANIFESTS" "$FLAG_DIR"
	# the agent is started by the first test, in the file's directory, so
	# that the second test and teardown_file find it
	CKUBELET_PIDFILE=$BATS_FILE_TMPDIR/ckubelet.pid
	CKUBELET_ROOT=$BATS_FILE_TMPDIR/root
	CKUBELET_LOG=$BATS_FILE_TMPDIR/ckubelet.log
	export MANIFESTS FLAG_DIR CKUBELET_PIDFILE CKUBELET_ROOT CKUBELET_LOG
}

teardown_file() {
	apiserver_start
	rm -f "$MANIFESTS"/*.yaml
	cleanup_node "$TEST_NS"
}

apiserver_stop() {
	local pid
	pid=$(<"$CK_CLUSTER_DIR/run/kube-apiserver.pid")
	kill -KILL "$pid" # abruptly, as a crashed or unreachable apiserver
	wait_for -t 60 -i 0.5 process_gone "$pid"
}

apiserver_start() {
	cluster_up >/dev/null
}

apiserver_down() { ! kubectl get --raw /readyz --request-timeout=2s >/dev/null 2>&1; }

# static_pod NAME COMMAND: a static pod of the test namespace.
static_pod() {
	cat >"$MANIFESTS/$1.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1, namespace: $TEST_NS}
	spec:
	  restartPolicy: Never
	  terminationGracePeriodSeconds: 2
	  volumes: [{name: flag, hostPath: {path: $FLAG_DIR}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, '$2']
	    volumeMounts: [{name: flag, mountPath: /flag}]
	YAML
}

container_exited() { # NS POD CONTAINER
	[[ -n $(crictl ps -a -q --state exited --label "io.kubernetes.pod.namespace=$1" \
		--label "io.kubernetes.pod.name=$2" --label "io.kubernetes.container.name=$3") ]]
}

@test "apiserver away: ckubelet started before it runs its static pods, then joins" {
	apiserver_stop
	apiserver_down
	static_pod early 'trap "exit 0" TERM; while :; do sleep 1; done'
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR start_cluster_node "$MANIFESTS"
	wait_for -t 60 -i 0.5 eval '[[ -n $(kpod_running_container "$TEST_NS" "early-$CLUSTER_NODE_NAME" main) ]]'
	# it says why it waits
	wait_for -t 30 -i 0.5 grep -q "Unable to register node with API server" "$CKUBELET_LOG"
	wait_for -t 30 -i 0.5 grep -q '"Failed to list" reflector="pods"' "$CKUBELET_LOG"

	apiserver_start
	wait_for -t 90 -i 1 node_ready
	# Pods from the apiserver start no container before the Services are
	# listed once (upstream's "services have not yet been read at least
	# once"); that reflector retries on its own backoff (up to 60 s with
	# jitter), so it may list well after the node is Ready.
	wait_for -t 90 -i 0.5 grep -q '"Informer synced" resource="services"' "$CKUBELET_LOG"
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" "early-$CLUSTER_NODE_NAME" Running
	wait_for -t 30 -i 0.5 kpod_ready "$TEST_NS" "early-$CLUSTER_NODE_NAME"
}

@test "apiserver away for a minute: running pods untouched; status catches up when it returns" {
	bound_pod steady 2
	# finishes (exit 0) once the test creates $FLAG_DIR/done
	static_pod finisher 'until [ -e /flag/done ]; do sleep 0.2; done; exit 0'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" steady
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" "finisher-$CLUSTER_NODE_NAME" Running
	steady=$(kpod_running_container "$TEST_NS" steady main)
	[ -n "$steady" ]
	early=$(kpod_running_container "$TEST_NS" "early-$CLUSTER_NODE_NAME" main)
	[ -n "$early" ]

	apiserver_stop
	touch "$FLAG_DIR/done"
	wait_for -t 30 -i 0.5 container_exited "$TEST_NS" "finisher-$CLUSTER_NODE_NAME" main
	sleep 60
	# a minute later: the agent still runs, the pods are as they were
	kill -0 "$(<"$CKUBELET_PIDFILE")"
	[ "$(kpod_running_container "$TEST_NS" steady main)" = "$steady" ]
	[ "$(kpod_running_container "$TEST_NS" "early-$CLUSTER_NODE_NAME" main)" = "$early" ]

	apiserver_start
	local back=$SECONDS
	# what happened meanwhile reaches the apiserver
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" "finisher-$CLUSTER_NODE_NAME" Succeeded
	echo "the status written meanwhile reached the apiserver $((SECONDS - back)) s after it answered"
	wait_for -t 90 -i 1 node_ready
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" steady
	[ "$(kpod_running_container "$TEST_NS" steady main)" = "$steady" ]
	[ "$(kpod_field "$TEST_NS" steady '{.status.containerStatuses[0].restartCount}')" = 0 ]
	[ "$(kpod_running_container "$TEST_NS" "early-$CLUSTER_NODE_NAME" main)" = "$early" ]
	# the pod watch is back: a pod bound after the restart runs
	back=$SECONDS
	bound_pod after 2
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" after
	echo "a pod bound after the apiserver returned was Ready in $((SECONDS - back)) s"
}
