#!/usr/bin/env bats
# The node's secure port (10250) as a cluster uses it: `kubectl logs` goes
# to the apiserver, which connects to https://<InternalIP>:10250 with its
# kubelet client certificate; the node authenticates it against the
# cluster CA (--client-ca-file) and authorizes it with a
# SubjectAccessReview (--authorization-mode=Webhook), as a kubeadm node is
# set up.  One ckubelet for the whole file, registered anew.

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-logs
	start_cluster_node "" --client-ca-file="$CK_CLUSTER_DIR/pki/ca.crt" \
		--anonymous-auth=false --authentication-token-webhook --authorization-mode=Webhook
	wait_for -t 60 -i 0.5 node_ready
}

teardown_file() {
	kubectl delete clusterrolebinding "$TEST_NS-proxy" --ignore-not-found >/dev/null 2>&1 || true
	kubectl delete clusterrole "$TEST_NS-proxy" --ignore-not-found >/dev/null 2>&1 || true
	cleanup_node "$TEST_NS"
}

# logged_pod NAME POLICY COMMAND [IMAGE]: bound_pod with a 2 s grace period
logged_pod() { bound_pod "$1" 2 "$3" "$2" "${4:-}"; }

logs_have() { # POD LINE [KUBECTL LOGS FLAGS...]: the pod's log has LINE
	local pod=$1 line=$2
	shift 2
	kubectl logs -n "$TEST_NS" "$pod" "$@" 2>/dev/null | grep -qxF -- "$line"
}

restarts_at_least() { # POD N
	(($(kpod_field "$TEST_NS" "$1" '{.status.containerStatuses[0].restartCount}') >= $2))
}

@test "kubectl logs: a container's output, both streams, with --tail, --timestamps and --limit-bytes" {
	logged_pod chatty Always 'echo "err 0" >&2; sleep 0.5; for i in 1 2 3 4 5; do echo "out $i"; done; exec sleep 3600'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" chatty Running
	wait_for -t 30 -i 0.5 logs_have chatty "out 5"
	run kubectl logs -n "$TEST_NS" chatty
	[ "$status" -eq 0 ]
	[ "$output" = $'err 0\nout 1\nout 2\nout 3\nout 4\nout 5' ]
	run kubectl logs -n "$TEST_NS" chatty -c main --tail=3
	[ "$status" -eq 0 ]
	[ "$output" = $'out 3\nout 4\nout 5' ]
	run kubectl logs -n "$TEST_NS" chatty --timestamps --tail=1
	[ "$status" -eq 0 ]
	[[ $output =~ ^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)\ out\ 5$ ]]
	run kubectl logs -n "$TEST_NS" chatty --limit-bytes=8
	[ "$status" -eq 0 ]
	[ "$output" = $'err 0\nou' ]
	run kubectl logs -n "$TEST_NS" chatty --since=1h
	[ "${#lines[@]}" -eq 6 ]
}

@test "kubectl logs -f: follows new lines as they come and ends when the container exits" {
	# The container writes line i only once the test has created flag i (a
	# hostPath), and the test creates flag i+1 only once line i came through
	# the follow: each line is delivered while the container runs, before the
	# next one is written, whatever the machine's speed.
	flags=$BATS_TEST_TMPDIR/flags
	mkdir -p "$flags"
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: follower, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 2
	  restartPolicy: Never
	  volumes: [{name: flags, hostPath: {path: $flags}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'for i in 1 2 3 4 5 6 7 8; do until [ -e /flags/\$i ]; do sleep 0.1; done; echo "tick \$i"; done']
	    volumeMounts: [{name: flags, mountPath: /flags}]
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" follower Running
	# started before any line is written; returns by itself at the end
	"$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" logs -f -n "$TEST_NS" follower \
		>"$BATS_TEST_TMPDIR/follow" 2>&1 3>&- &
	local follower=$! i
	for i in 1 2 3 4 5 6 7 8; do
		touch "$flags/$i"
		wait_for -t 30 -i 0.2 grep -qx "tick $i" "$BATS_TEST_TMPDIR/follow"
		# the follow is still open: the container has more to write (not
		# `! process_gone`: bats does not fail a test on a negated command)
		[ "$i" -eq 8 ] || kill -0 "$follower"
	done
	wait_for -t 60 -i 0.5 process_gone "$follower"
	wait "$follower"
	run cat "$BATS_TEST_TMPDIR/follow"
	[ "${#lines[@]}" -eq 8 ]
	[ "${lines[0]}" = "tick 1" ]
	[ "${lines[7]}" = "tick 8" ]
	wait_for -t 30 -i 0.5 kpod_phase_is "$TEST_NS" follower Succeeded
	# a finished container's log stays readable
	run kubectl logs -n "$TEST_NS" follower --tail=1
	[ "$output" = "tick 8" ]
}

# line_time FILE LINE: the timestamp (ns since the epoch) kubectl logs
# --timestamps (in FILE) shows for LINE.
line_time() {
	local ts rest
	while read -r ts rest; do
		[[ $rest == "$2" ]] && date -d "$ts" +%s%N && return 0
	done <"$1"
	echo "line_time: no line '$2' in $1" >&2
	return 1
}

@test "kubectl logs --since and --since-time: the lines of the window only" {
	logged_pod timed Always 'echo "early 1"; echo "early 2"; sleep 10; echo "late 1"; echo "late 2"; exec sleep 3600'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" timed Running
	wait_for -t 60 -i 0.5 logs_have timed "late 2"
	kubectl logs -n "$TEST_NS" timed --timestamps >"$BATS_TEST_TMPDIR/stamped"
	cat "$BATS_TEST_TMPDIR/stamped"
	early=$(line_time "$BATS_TEST_TMPDIR/stamped" "early 2")
	late=$(line_time "$BATS_TEST_TMPDIR/stamped" "late 1")
	(((late - early) / 1000000000 >= 9))

	# --since: a window that starts half way between the early and the late
	# lines (about 5 s from each: room for the time the request takes)
	now=$(date +%s%N)
	since=$(((now - (early + late) / 2 + 999999999) / 1000000000))
	run kubectl logs -n "$TEST_NS" timed --since="${since}s"
	echo "--since=${since}s: $output"
	[ "$status" -eq 0 ]
	[ "$output" = $'late 1\nlate 2' ]

	# --since-time: from the second of the first late line (the apiserver
	# passes whole seconds)
	since_time=$(date -u -d "@$((late / 1000000000))" +%Y-%m-%dT%H:%M:%SZ)
	run kubectl logs -n "$TEST_NS" timed --since-time="$since_time"
	echo "--since-time=$since_time: $output"
	[ "$status" -eq 0 ]
	[ "$output" = $'late 1\nlate 2' ]
}

@test "kubectl logs --previous: the instance before the last restart" {
	logged_pod restarter Always 'echo "run at $(cat /proc/uptime)"; sleep 1; exit 3'
	wait_for -t 90 -i 1 restarts_at_least restarter 1
	run kubectl logs -n "$TEST_NS" restarter --previous
	[ "$status" -eq 0 ]
	[[ $output == "run at "* ]]
	logged_pod fresh Always 'exec sleep 3600'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" fresh Running
	run kubectl logs -n "$TEST_NS" fresh --previous
	[ "$status" -ne 0 ]
	[[ $output == *'previous terminated container "main" in pod "fresh" not found'* ]]
}

@test "kubectl logs: a container that cannot start says why; asked directly, the node names an unknown container" {
	logged_pod unpullable Always 'true' localhost/not-there:1
	wait_for -t 60 -i 0.5 eval "kubectl get pod -n '$TEST_NS' unpullable -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' | grep -q Image"
	run kubectl logs -n "$TEST_NS" unpullable
	[ "$status" -ne 0 ]
	[[ $output == *'container "main" in pod "unpullable" is waiting to start'* ]]
	# the apiserver refuses an unknown container itself; asked directly, as
	# the apiserver asks, the node names it
	run https_status "https://127.0.0.1:10250/containerLogs/$TEST_NS/unpullable/nope" \
		--cert "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.crt" \
		--key "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.key"
	[ "$output" = 404 ]
	[ "$(cat "$BATS_TEST_TMPDIR/body")" = 'container "nope" not found in pod "unpullable"' ]
}

# https_status URL [CURL ARGS...]: the HTTP status the node's port answers
https_status() {
	local url=$1
	shift
	curl -sk -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' --max-time 10 "$@" "$url"
}

@test "the secure port: no credentials 401, a token without the right 403, then granted 200" {
	local url=https://127.0.0.1:10250/pods token sa=log-reader
	run https_status "$url"
	[ "$output" = 401 ]
	kubectl create serviceaccount "$sa" -n "$TEST_NS"
	token=$(kubectl create token "$sa" -n "$TEST_NS")
	run https_status "$url" -H "Authorization: Bearer $token"
	[ "$output" = 403 ]
	grep -q "user=system:serviceaccount:$TEST_NS:$sa, verb=get, resource=nodes" "$BATS_TEST_TMPDIR/body"
	kubectl create clusterrole "$TEST_NS-proxy" --verb=get --resource=nodes/proxy,nodes/pods
	kubectl create clusterrolebinding "$TEST_NS-proxy" --clusterrole="$TEST_NS-proxy" \
		--serviceaccount="$TEST_NS:$sa"
	# denials are cached for 30 s (authorization.webhook.cacheUnauthorizedTTL)
	wait_for -t 60 -i 2 eval "[ \"\$(https_status '$url' -H 'Authorization: Bearer $token')\" = 200 ]"
	jq -e '.kind == "PodList" and (.items | length) >= 1' "$BATS_TEST_TMPDIR/body"
	# the apiserver's own client certificate is what kubectl logs rides on
	run https_status https://127.0.0.1:10250/healthz \
		--cert "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.crt" \
		--key "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.key"
	[ "$output" = 200 ]
	[ "$(cat "$BATS_TEST_TMPDIR/body")" = ok ]
}
