#!/usr/bin/env bats
# Graceful node shutdown with the guest's systemd-logind (the VM suite,
# test/vm/run: it needs logind on the system bus, which the development
# machines do not run).  What an operator sees: logind's InhibitDelayMaxSec
# raised to the shutdown grace period, the agent's delay inhibitor lock
# (systemd-inhibit --list), and at logind's PrepareForShutdown (emitted as
# upstream's node e2e does) the pods stopped by priority, regular ones
# first, each Failed with reason Terminated; new pods refused; the lock
# released; the shutdown's times in the state file and the metrics; the lock
# taken again when the shutdown is cancelled.

load ../e2e/helpers
load ../e2e/pods

LOGIND=(org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager)
DROPIN=/etc/systemd/logind.conf.d/99-kubelet.conf

setup_file() {
	runtime_up
}

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	OUT_DIR=$BATS_TEST_TMPDIR/out
	mkdir -p "$MANIFESTS" "$OUT_DIR"
}

teardown() {
	cleanup_agent
	# logind as it was: no drop-in, its default delay again
	if [[ -f $DROPIN ]]; then
		rm -f "$DROPIN"
		systemctl kill -s HUP systemd-logind.service || true
	fi
}

inhibit_delay() { busctl get-property "${LOGIND[@]}" InhibitDelayMaxUSec; }
kubelet_lock_held() { systemd-inhibit --list --no-pager --no-legend | grep -Eq '^kubelet .* shutdown .* delay'; }
kubelet_lock_gone() {
	local list
	list=$(systemd-inhibit --list --no-pager --no-legend) || return 1
	! grep -q '^kubelet ' <<<"$list"
}
prepare_for_shutdown() { busctl emit /org/freedesktop/login1 org.freedesktop.login1.Manager PrepareForShutdown b "$1"; }
metric() { # NAME: its value on the read-only port's /metrics
	curl -sf --max-time 5 "http://127.0.0.1:$CKUBELET_READ_ONLY_PORT/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}

# trapper NAME [PRIORITY]: a static pod whose container, at SIGTERM, writes
# the time to OUT_DIR/NAME and exits 3 s later
trapper() {
	cat >"$MANIFESTS/$1.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1}
	spec:
	  ${2:+priority: $2}
	  terminationGracePeriodSeconds: 30
	  volumes: [{name: out, hostPath: {path: $OUT_DIR}}]
	  containers:
	  - name: c
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "date +%s > /out/$1; sleep 3; exit 0" TERM; while :; do sleep 1; done']
	    volumeMounts: [{name: out, mountPath: /out}]
	YAML
}

@test "graceful node shutdown: regular pods, then critical ones, stopped at PrepareForShutdown; the inhibitor lock held until then" {
	inhibit_delay # logind answers
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	shutdownGracePeriod: 20s
	shutdownGracePeriodCriticalPods: 8s
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	trapper regular
	trapper critical 2000001000
	start_agent "$MANIFESTS" --config="$BATS_TEST_TMPDIR/config.yaml"
	wait_for -t 120 phase_is regular Running
	wait_for -t 120 phase_is critical Running
	# logind's delay raised to the whole period through the drop-in
	[ "$(cat "$DROPIN")" = "$(printf '# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=20')" ]
	[ "$(inhibit_delay)" = "t 20000000" ]
	wait_for -t 10 kubelet_lock_held
	[ "$(metric kubelet_graceful_shutdown_start_time_seconds)" = 0 ]

	local before
	before=$(date +%s)
	prepare_for_shutdown true
	wait_for -t 60 phase_is regular Failed
	[ "$(pod_field regular .status.reason)" = Terminated ]
	[ "$(pod_field regular .status.message)" = "Pod was terminated in response to imminent node shutdown." ]
	[ "$(pod_field regular '.status.conditions[] | select(.type == "DisruptionTarget") | .reason')" = TerminationByKubelet ]
	wait_for -t 60 phase_is critical Failed
	[ "$(pod_field critical .status.reason)" = Terminated ]
	# a pod made meanwhile is refused
	trapper late
	wait_for -t 30 phase_is late Failed
	[ "$(pod_field late .status.reason)" = NodeShutdown ]
	# upstream's rejectPod prefixes the handler's message
	[ "$(pod_field late .status.message)" = "Pod was rejected: Pod was rejected as the node is shutting down." ]
	# the regular pod got SIGTERM first; the critical one only once the
	# regular group had ended (its container exits 3 s after the signal)
	local regular critical
	regular=$(<"$OUT_DIR/regular")
	critical=$(<"$OUT_DIR/critical")
	((regular >= before && critical - regular >= 2))
	# the lock released: the shutdown may go on
	wait_for -t 30 kubelet_lock_gone
	# the shutdown's start and end: the metrics and the state file
	local start end
	start=$(metric kubelet_graceful_shutdown_start_time_seconds)
	end=$(metric kubelet_graceful_shutdown_end_time_seconds)
	[[ $start =~ ^[0-9.e+]+$ && $end =~ ^[0-9.e+]+$ ]]
	start=$(printf '%.0f' "$start")
	end=$(printf '%.0f' "$end")
	((start >= before && end >= start + 2))
	jq -e '.startTime != "0001-01-01T00:00:00Z" and .endTime != "0001-01-01T00:00:00Z"' \
		"$CKUBELET_ROOT/graceful_node_shutdown_state"

	# cancelled: the lock is taken again
	prepare_for_shutdown false
	wait_for -t 30 kubelet_lock_held
	grep -q 'Shutdown manager detected new shutdown event" event="cancelled"' "$CKUBELET_LOG"
}

# finished_at POD: when its container ended (crictl, seconds since the epoch)
finished_at() {
	local id at
	id=$(containers_of "$1") || return 1
	at=$(crictl inspect "$id" | jq -r '.status.finishedAt') || return 1
	date -d "$at" +%s.%N
}
exited() { [[ $(crictl inspect "$(containers_of "$1")" | jq -r .status.state) == CONTAINER_EXITED ]]; }

# deaf NAME GRACE: a static pod whose container ignores SIGTERM (only the
# kill at the end of its grace period stops it)
deaf() {
	cat >"$MANIFESTS/$1.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1}
	spec:
	  terminationGracePeriodSeconds: $2
	  containers:
	  - name: c
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "" TERM; while :; do sleep 1; done']
	YAML
}

@test "graceful node shutdown: a pod's own shorter grace period is kept; a longer one is cut to its group's" {
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	shutdownGracePeriodByPodPriority:
	- {priority: 0, shutdownGracePeriodSeconds: 8}
	- {priority: 100000, shutdownGracePeriodSeconds: 4}
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	deaf stubborn 60
	deaf quick 2
	start_agent "$MANIFESTS" --config="$BATS_TEST_TMPDIR/config.yaml"
	wait_for -t 120 phase_is stubborn Running
	wait_for -t 120 phase_is quick Running
	# the sum of the periods
	[ "$(inhibit_delay)" = "t 12000000" ]
	wait_for -t 10 kubelet_lock_held
	local signal
	signal=$(date +%s.%N)
	prepare_for_shutdown true
	wait_for -t 60 exited quick
	wait_for -t 60 exited stubborn
	grep -q 'Shutdown manager killing pod with gracePeriod" pod="default/stubborn-e2e-node" gracePeriod=8' "$CKUBELET_LOG"
	grep -q 'Shutdown manager killing pod with gracePeriod" pod="default/quick-e2e-node" gracePeriod=2' "$CKUBELET_LOG"
	# killed at the end of their grace periods: 2 s and 8 s after the
	# signal, not 60 (the guest is slow: a margin either way)
	local quick stubborn
	quick=$(finished_at quick)
	stubborn=$(finished_at stubborn)
	awk -v s="$signal" -v q="$quick" -v t="$stubborn" 'BEGIN {
		printf "quick ended %.1f s after the signal, stubborn %.1f s\n", q - s, t - s
		exit !(q - s >= 1.5 && t - s >= 7.5 && t - s < 40 && t - q >= 4) }'
	[ "$(pod_field stubborn .status.reason)" = Terminated ]
	wait_for -t 60 kubelet_lock_gone
}
