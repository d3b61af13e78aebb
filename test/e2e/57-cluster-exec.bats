#!/usr/bin/env bats
# kubectl exec, cp, attach and port-forward through the real apiserver:
# the apiserver opens the stream on the node's secure port (SPDY, or
# WebSocket translated by it), the node asks containerd for a streaming
# session (CRI Exec/Attach/PortForward) and proxies the upgraded
# connection to it.  One ckubelet for the whole file, set up as a kubeadm
# node (client CA, webhook authentication and authorization).

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-exec
	start_cluster_node "" --client-ca-file="$CK_CLUSTER_DIR/pki/ca.crt" \
		--anonymous-auth=false --authentication-token-webhook --authorization-mode=Webhook
	wait_for -t 60 -i 0.5 node_ready
	bound_pod box 2
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" box
}

teardown_file() {
	cleanup_node "$TEST_NS"
}

kexec() { kubectl exec -n "$TEST_NS" box -- "$@"; }

https_status() { # URL [CURL ARGS...]: the status code; the body in $BATS_TEST_TMPDIR/body
	local url=$1
	shift
	curl -sk -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' --max-time 10 "$@" "$url"
}

@test "kubectl exec: output, stdin, exit codes, a missing command" {
	run kexec sh -c 'echo out; echo err >&2'
	[ "$status" -eq 0 ]
	[[ $output == *out* && $output == *err* ]]
	run kexec cat /etc/hostname
	[ "$output" = box ]
	# stdin reaches the command and its end ends it
	local n
	n=$(printf 'a\nb\nc\n' | kubectl exec -i -n "$TEST_NS" box -- wc -l)
	[ "$(echo "$n" | tr -d ' ')" = 3 ]
	run kexec sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[[ $output == *"command terminated with exit code 3"* ]]
	run kexec /no/such/command
	[ "$status" -ne 0 ]
	[[ $output == *"no such file or directory"* ]]
}

@test "kubectl exec -t: the command runs on a terminal" {
	# kubectl asks for a TTY only when its own stdin is one: script(1) gives it one
	run script -qec "$KUBECTL --kubeconfig $ADMIN_KUBECONFIG --cache-dir $CK_CLUSTER_DIR/kubectl-cache exec -ti -n $TEST_NS box -- tty" /dev/null </dev/null
	[ "$status" -eq 0 ]
	[[ $output == */dev/pts/* ]]
}

@test "kubectl exec -t: the terminal's size reaches the command (the resize stream)" {
	run script -qec "stty cols 123 rows 45; $KUBECTL --kubeconfig $ADMIN_KUBECONFIG --cache-dir $CK_CLUSTER_DIR/kubectl-cache exec -ti -n $TEST_NS box -- sh -c 'sleep 1; stty size'" /dev/null </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	# kubectl sends the size on the resize stream once the session is up:
	# the command asks a second later
	[[ $output == *"45 123"* ]]
}

@test "POST /run: the command's output, as the node answers it" {
	local cert=(--cert "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.crt" --key "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.key")
	run https_status "https://127.0.0.1:10250/run/$TEST_NS/box/main?cmd=echo+hello" -X POST "${cert[@]}"
	[ "$output" = 200 ]
	[ "$(cat "$BATS_TEST_TMPDIR/body")" = hello ]
	run https_status "https://127.0.0.1:10250/run/$TEST_NS/box/nosuch?cmd=true" -X POST "${cert[@]}"
	[ "$output" = 500 ]
	[[ $(cat "$BATS_TEST_TMPDIR/body") == *'container not found ("nosuch")'* ]]
}

agent_threads() { awk '$1 == "Threads:" { print $2 }' "/proc/$(<"$CKUBELET_PIDFILE")/status"; }
# The agent's TCP connections other than its own to the apiserver (the REST
# client's pool comes and goes with TokenReviews): the apiserver's to the
# node's port and the node's to containerd's streaming server.
agent_streams() {
	ss -tnpH state established state close-wait state fin-wait-1 state fin-wait-2 |
		grep "pid=$(<"$CKUBELET_PIDFILE")," | grep -vc ':16443 ' || true
}
agent_back_to() { # STREAMS THREADS: no more than that again
	(($(agent_streams) <= $1 && $(agent_threads) <= $2))
}

@test "a client killed mid-stream: the node's connection threads and stream sockets go away" {
	local streams threads i
	kexec true
	sleep 2
	streams=$(agent_streams)
	threads=$(agent_threads)
	for i in 1 2 3; do
		kubectl exec -n "$TEST_NS" box -- sleep 60 &
		local pid=$!
		# while it runs, the node proxies it
		wait_for -t 10 -i 0.5 eval '(($(agent_streams) > streams))'
		kill -KILL "$pid"
		wait "$pid" || true
	done
	# the apiserver notices, closes its side; the node's proxy ends with it
	if ! wait_for -t 90 -i 1 agent_back_to "$streams" "$threads"; then
		echo "before: $streams streams, $threads threads; now: $(agent_streams) streams, $(agent_threads) threads"
		ss -tnp | grep "pid=$(<"$CKUBELET_PIDFILE")," || true
		return 1
	fi
}

@test "kubectl cp: a 10 MB file into the pod and back, checksums equal" {
	head -c 10485760 /dev/urandom >"$BATS_TEST_TMPDIR/in.bin"
	kubectl cp "$BATS_TEST_TMPDIR/in.bin" "$TEST_NS/box:/tmp/in.bin"
	[ "$(kexec sha256sum /tmp/in.bin | cut -d' ' -f1)" = "$(sha256sum <"$BATS_TEST_TMPDIR/in.bin" | cut -d' ' -f1)" ]
	kubectl cp "$TEST_NS/box:/tmp/in.bin" "$BATS_TEST_TMPDIR/out.bin"
	cmp "$BATS_TEST_TMPDIR/in.bin" "$BATS_TEST_TMPDIR/out.bin"
}

@test "two exec sessions at once" {
	kexec sh -c 'sleep 2; echo one' >"$BATS_TEST_TMPDIR/1" &
	local p1=$!
	kexec sh -c 'sleep 2; echo two' >"$BATS_TEST_TMPDIR/2" &
	local p2=$!
	wait "$p1"
	wait "$p2"
	[ "$(cat "$BATS_TEST_TMPDIR/1")" = one ]
	[ "$(cat "$BATS_TEST_TMPDIR/2")" = two ]
}

@test "kubectl attach: the container's own output" {
	bound_pod talker 2 'trap "exit 0" TERM; i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.3; done'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" talker
	run timeout 5 "$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" --cache-dir "$CK_CLUSTER_DIR/kubectl-cache" \
		attach -n "$TEST_NS" talker -c main
	# cut by timeout (124) after lines came through the attach stream
	[ "$status" -eq 124 ]
	[[ $output == *"tick "* ]]
}

@test "kubectl port-forward: many requests and a large body from a busybox httpd" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: web, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 2
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'mkdir -p /www && head -c 5242880 /dev/urandom >/www/big && echo hello >/www/index.html && exec httpd -f -p 8080 -h /www']
	YAML
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" web
	"$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" --cache-dir "$CK_CLUSTER_DIR/kubectl-cache" \
		port-forward -n "$TEST_NS" pod/web 18080:8080 >"$BATS_TEST_TMPDIR/pf.log" 2>&1 &
	local pf=$!
	wait_for -t 30 -i 0.5 curl -fsS --noproxy '*' -o /dev/null http://127.0.0.1:18080/index.html
	local i
	for i in $(seq 1 30); do
		[ "$(curl -fsS --noproxy '*' http://127.0.0.1:18080/index.html)" = hello ]
	done
	curl -fsS --noproxy '*' -o "$BATS_TEST_TMPDIR/big" http://127.0.0.1:18080/big
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/big")" -eq 5242880 ]
	[ "$(sha256sum <"$BATS_TEST_TMPDIR/big" | cut -d' ' -f1)" = "$(kubectl exec -n "$TEST_NS" web -- sha256sum /www/big | cut -d' ' -f1)" ]
	kill "$pf"
	wait "$pf" || true
}

@test "exec on the node: a user without nodes/proxy gets 403; an unknown pod 404" {
	local sa=no-exec token
	kubectl create serviceaccount "$sa" -n "$TEST_NS"
	token=$(kubectl create token "$sa" -n "$TEST_NS")
	run https_status "https://127.0.0.1:10250/exec/$TEST_NS/box/main?command=true&output=1" \
		-H "Authorization: Bearer $token"
	[ "$output" = 403 ]
	run https_status "https://127.0.0.1:10250/exec/$TEST_NS/nobody/main?command=true&output=1" \
		--cert "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.crt" \
		--key "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.key"
	[ "$output" = 404 ]
	# not an upgrade: upstream's answer
	run https_status "https://127.0.0.1:10250/exec/$TEST_NS/box/main?command=true&output=1" \
		--cert "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.crt" \
		--key "$CK_CLUSTER_DIR/pki/apiserver-kubelet-client.key"
	[ "$output" = 400 ]
	[ "$(cat "$BATS_TEST_TMPDIR/body")" = "Upgrade request required" ]
}

# kpod_eph_started NS POD NAME: the ephemeral container's status says running.
kpod_eph_started() {
	[[ -n $(kpod_field "$1" "$2" "{.status.ephemeralContainerStatuses[?(@.name==\"$3\")].state.running.startedAt}") ]]
}

@test "kubectl debug: an ephemeral container starts in the pod, in its target's process namespace, and answers exec and logs" {
	bound_pod debugme 2 'trap "exit 0" TERM; while :; do sleep 1; done; echo main-marker'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" debugme
	local main_id
	main_id=$(kpod_running_container "$TEST_NS" debugme main)
	[ -n "$main_id" ]
	run kubectl debug -n "$TEST_NS" debugme --image=localhost/busybox:1.35 --target=main -c dbg \
		-- sh -c 'while :; do echo polo; sleep 2; done'
	[ "$status" -eq 0 ]
	wait_for -t 60 -i 0.5 kpod_eph_started "$TEST_NS" debugme dbg
	# exec and logs reach it by name
	run kubectl exec -n "$TEST_NS" debugme -c dbg -- echo marco
	[ "$status" -eq 0 ]
	[ "$output" = marco ]
	wait_for -t 20 -i 0.5 eval '[[ $(kubectl logs -n "$TEST_NS" debugme -c dbg) == *polo* ]]'
	# --target: it sees the main container's processes (PID namespace TARGET)
	run kubectl exec -n "$TEST_NS" debugme -c dbg -- ps -o args
	[[ $output == *main-marker* ]]
	# the app container is untouched and the pod stays Ready
	[ "$(kpod_running_container "$TEST_NS" debugme main)" = "$main_id" ]
	kpod_ready "$TEST_NS" debugme
	# its events name it as upstream does
	wait_for -t 20 -i 0.5 eval '[[ $(kubectl get events -n "$TEST_NS" --field-selector involvedObject.name=debugme -o jsonpath="{.items[*].involvedObject.fieldPath}") == *"spec.ephemeralContainers{dbg}"* ]]'

	# one without a target has its own PID namespace; an exited one is never restarted
	run kubectl debug -n "$TEST_NS" debugme --image=localhost/busybox:1.35 -c once -- sh -c 'ps -o args; exit 3'
	[ "$status" -eq 0 ]
	wait_for -t 60 -i 0.5 eval '[[ $(kpod_field "$TEST_NS" debugme "{.status.ephemeralContainerStatuses[?(@.name==\"once\")].state.terminated.exitCode}") == 3 ]]'
	run kubectl logs -n "$TEST_NS" debugme -c once
	[[ $output != *main-marker* ]]
	sleep 5
	[ "$(kpod_field "$TEST_NS" debugme '{.status.ephemeralContainerStatuses[?(@.name=="once")].restartCount}')" = 0 ]
	[ -z "$(kpod_running_container "$TEST_NS" debugme once)" ]
	kubectl delete pod -n "$TEST_NS" debugme --wait=true --timeout=60s
}
