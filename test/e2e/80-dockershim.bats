#!/usr/bin/env bats
# ckubelet-dockershim on a real Docker Engine (hack/local-docker: Debian's
# dockerd 20.10 with its own containerd, the test images loaded), called by
# crictl as a kubelet would call it: the runtime's version and status, and
# the image service (list, status, pull with and without credentials from
# the local registry, remove, the image filesystem), a pod sandbox on the
# CNI bridge with a container in it (exec, logs, stop, removal, nothing
# left; the network torn down even when the shim lost its record of it),
# exec, attach and port-forward through the shim's streaming server,
# ckubelet running a static pod through it.  A dockerd that goes away gets
# errors, never a crash, and is found again when it is back.  The methods
# not implemented yet answer Unimplemented (docs/dockershim.md).

load helpers
load pods

setup_file() {
	registry_up
	export CK_DOCKER_DIR=${CK_DOCKER_DIR:-/var/lib/ckubelet-docker}
	local endpoint
	endpoint=$(set -o pipefail && CK_BUILD_DIR=$BUILD "$E2E_REPO/hack/local-docker" up 3>&- | tail -n 1) || {
		echo "setup: hack/local-docker up failed" >&2
		return 1
	}
	[[ $endpoint == unix://* ]] || {
		echo "setup: hack/local-docker up printed '$endpoint', not an endpoint" >&2
		return 1
	}
	export CONTAINER_RUNTIME_ENDPOINT=$endpoint IMAGE_SERVICE_ENDPOINT=$endpoint
	export DOCKER_HOST=unix://$CK_DOCKER_DIR/docker.sock
}

teardown_file() {
	local shim_alive=0
	# the shim must have survived every test (a crash fails the file)
	if [[ -f $CK_DOCKER_DIR/dockershim.pid ]] && kill -0 "$(<"$CK_DOCKER_DIR/dockershim.pid")"; then
		shim_alive=1
	fi
	if [[ ${CK_KEEP_DOCKER:-0} != 1 ]]; then
		"$E2E_REPO/hack/local-docker" down 3>&- || true
	fi
	if [[ ${CK_KEEP_REGISTRY:-0} != 1 ]]; then
		"$E2E_REPO/hack/local-registry" down 3>&- || true
	fi
	((shim_alive)) || {
		echo "ckubelet-dockershim is not running at the end: see $CK_DOCKER_DIR/dockershim.log" >&2
		return 1
	}
}

@test "dockershim: Version names docker and the engine's version" {
	local engine
	engine=$(docker version --format '{{.Server.Version}}')
	run crictl version
	[ "$status" -eq 0 ]
	[[ $output == *"RuntimeName:  docker"* ]]
	[[ $output == *"RuntimeVersion:  $engine"* ]]
	[[ $output == *"RuntimeApiVersion:  v1"* ]]
}

@test "dockershim: Status: the runtime and its network are ready" {
	run crictl info -o json
	[ "$status" -eq 0 ]
	[ "$(jq -r '.status.conditions[] | select(.type == "RuntimeReady") | .status' <<<"$output")" = true ]
	[ "$(jq -r '.status.conditions[] | select(.type == "NetworkReady") | .status' <<<"$output")" = true ]
}

@test "dockershim: the engine's images are listed with their IDs, the sandbox image pinned" {
	local id
	id=$(docker image inspect -f '{{.Id}}' "$BUSYBOX_IMAGE")
	run crictl images -o json
	[ "$status" -eq 0 ]
	[ "$(jq -r --arg t "$BUSYBOX_IMAGE" '.images[] | select(.repoTags | index($t)) | .id' <<<"$output")" = "$id" ]
	[ "$(jq -r --arg t "$PAUSE_IMAGE" '.images[] | select(.repoTags | index($t)) | .pinned' <<<"$output")" = true ]
	[ "$(jq -r --arg t "$BUSYBOX_IMAGE" '.images[] | select(.repoTags | index($t)) | .pinned' <<<"$output")" = false ]
	# one image asked for by name
	run crictl images -o json "$BUSYBOX_IMAGE"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.images | length' <<<"$output")" -eq 1 ]
}

@test "dockershim: ImageStatus of an image, and of one the engine does not have" {
	local size
	size=$(docker image inspect -f '{{.Size}}' "$BUSYBOX_IMAGE")
	run crictl inspecti -o json "$BUSYBOX_IMAGE"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.status.size' <<<"$output")" = "$size" ]
	jq -e --arg t "$BUSYBOX_IMAGE" '.status.repoTags | index($t)' <<<"$output" >/dev/null
	# an empty answer, which crictl reports as no such image
	run crictl inspecti localhost/no-such-image:1
	[ "$status" -ne 0 ]
	[[ $output == *"no such image"* ]]
}

@test "dockershim: PullImage with the registry's credentials, refused without" {
	# refused without: dockerd counts 127.0.0.0/8 as an insecure registry, so
	# after the TLS endpoint's 401 it tries plain HTTP, and that last answer
	# is the one it reports (as it does under any shim)
	# (an engine kept from an earlier run has it)
	docker rmi "$REGISTRY_IMAGE" >/dev/null 2>&1 || true
	run crictl pull "$REGISTRY_IMAGE"
	[ "$status" -ne 0 ]
	[[ $output == *"pull image \`$REGISTRY_IMAGE\`"* ]]
	! docker image inspect "$REGISTRY_IMAGE" >/dev/null 2>&1
	run crictl pull --creds "$REGISTRY_USER:$REGISTRY_PASSWORD" "$REGISTRY_IMAGE"
	[ "$status" -eq 0 ]
	[[ $output == *"Image is up to date for "* ]]
	# the engine has it now, under the registry's name and its digest
	docker image inspect "$REGISTRY_IMAGE" >/dev/null
	run crictl inspecti -o json "$REGISTRY_IMAGE"
	[ "$status" -eq 0 ]
	[[ $(jq -r '.status.repoDigests[0]' <<<"$output") == "${REGISTRY_IMAGE%:*}@sha256:"* ]]
}

@test "dockershim: RemoveImage removes the image with all its names" {
	local scratch=localhost/ckubelet-scratch:1 id
	# an image of its own (a size above 0: crictl checks it)
	echo scratch >"$BATS_TEST_TMPDIR/file"
	tar -C "$BATS_TEST_TMPDIR" -cf - file | docker import - "$scratch" >/dev/null
	docker tag "$scratch" localhost/ckubelet-scratch:2
	id=$(docker image inspect -f '{{.Id}}' "$scratch")
	run crictl rmi "$scratch"
	[ "$status" -eq 0 ]
	run docker image inspect "$id"
	[ "$status" -ne 0 ]
	run docker image inspect localhost/ckubelet-scratch:2
	[ "$status" -ne 0 ]
}

@test "dockershim: ImageFsInfo is the engine's data root" {
	run crictl imagefsinfo -o json
	[ "$status" -eq 0 ]
	[ "$(jq -r '.status.imageFilesystems[0].fsId.mountpoint' <<<"$output")" = "$CK_DOCKER_DIR/root" ]
	[ "$(jq -r '.status.imageFilesystems[0].usedBytes.value' <<<"$output")" -gt 0 ]
}

teardown() {
	if [[ -n ${CKUBELET_PID:-} ]]; then
		cleanup_agent || true
	fi
	if [[ -n ${POD_ID:-} ]]; then
		crictl stopp "$POD_ID" >/dev/null 2>&1 || true
		crictl rmp -f "$POD_ID" >/dev/null 2>&1 || true
	fi
	# a second shim a test started
	if [[ -f $BATS_TEST_TMPDIR/shim.pid ]]; then
		kill "$(<"$BATS_TEST_TMPDIR/shim.pid")" 2>/dev/null || true
	fi
}

@test "dockershim: a pod sandbox on the CNI bridge, a container in it: exec, logs, stop, remove" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-$$-$RANDOM ip ctr out
	mkdir -p "$tmp/logs"
	jq -n --arg uid "$uid" --arg logs "$tmp/logs" '{
		metadata: {name: "e2e-shim", namespace: "default", uid: $uid, attempt: 0},
		hostname: "e2e-shim",
		log_directory: $logs,
		dns_config: {servers: ["10.89.0.10"], searches: ["default.svc.cluster.local"], options: ["ndots:5"]},
		labels: {app: "e2e-shim"},
		annotations: {"example.com/note": "kept"},
		linux: {}
	}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{
		metadata: {name: "web", attempt: 0},
		image: {image: $image},
		command: ["sh", "-c", "echo hello from $(hostname); echo to stderr >&2; mkdir -p /www; echo served >/www/index.html; exec httpd -f -p 8080 -h /www"],
		envs: [{key: "GREETING", value: "hi there"}],
		log_path: "web_0.log",
		linux: {}
	}' >"$tmp/ctr.json"

	POD_ID=$(crictl runp "$tmp/pod.json")
	[ "$(crictl inspectp -o json "$POD_ID" | jq -r .status.state)" = SANDBOX_READY ]
	[ "$(crictl inspectp -o json "$POD_ID" | jq -r .status.labels.app)" = e2e-shim ]
	[ "$(crictl inspectp -o json "$POD_ID" | jq -r '.status.annotations["example.com/note"]')" = kept ]
	ip=$(crictl inspectp -o json "$POD_ID" | jq -r .status.network.ip)
	echo "pod IP: $ip"
	[[ $ip == 10.89.* ]]
	# the engine's own container, under cri-dockerd's name and labels
	[ "$(docker inspect -f '{{.Name}}' "$POD_ID")" = "/k8s_POD_e2e-shim_default_${uid}_0" ]
	[ "$(docker inspect -f '{{index .Config.Labels "io.kubernetes.docker.type"}}' "$POD_ID")" = podsandbox ]
	[ -f "$CK_DOCKER_DIR/shim/sandbox/$POD_ID" ]
	run crictl pods -q --label app=e2e-shim
	[ "$output" = "$POD_ID" ]

	ctr=$(crictl create "$POD_ID" "$tmp/ctr.json" "$tmp/pod.json")
	crictl start "$ctr"
	[ "$(crictl inspect -o json "$ctr" | jq -r .status.state)" = CONTAINER_RUNNING ]
	# served on the pod's IP, from this host
	wait_for -t 10 curl -sf --max-time 2 "http://$ip:8080/"
	[ "$(curl -sf --max-time 2 "http://$ip:8080/")" = served ]
	# ExecSync: output, environment, exit code, the pod's DNS file
	run crictl exec --sync "$ctr" sh -c 'echo "$GREETING"'
	[ "$status" -eq 0 ]
	[ "$output" = "hi there" ]
	# a command's exit code (crictl's client turns it into an error)
	run crictl exec --sync "$ctr" sh -c 'echo oops >&2; exit 3'
	[ "$status" -ne 0 ]
	[[ $output == *"exited with 3: oops"* ]]
	run crictl exec --sync "$ctr" cat /etc/resolv.conf
	[[ $output == *"nameserver 10.89.0.10"* ]]
	[[ $output == *"search default.svc.cluster.local"* ]]
	[[ $output == *"options ndots:5"* ]]
	# the log path: the engine's json-file log, read by crictl
	[ -L "$tmp/logs/web_0.log" ]
	wait_for -t 10 bash -c "'$CRICTL' --config /dev/null --runtime-endpoint '$CONTAINER_RUNTIME_ENDPOINT' logs '$ctr' 2>&1 | grep -q 'hello from e2e-shim'"
	run crictl ps -q --pod "$POD_ID"
	[ "$output" = "$ctr" ]
	# its CPU and memory, as the engine's stats give them
	run crictl stats -o json --id "$ctr"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.stats[0].attributes.id' <<<"$output")" = "$ctr" ]
	[ "$(jq -r '.stats[0].memory.workingSetBytes.value' <<<"$output")" -gt 0 ]
	[ "$(jq -r '.stats[0].cpu.usageCoreNanoSeconds.value' <<<"$output")" -gt 0 ]

	crictl stop -t 2 "$ctr"
	[ "$(crictl inspect -o json "$ctr" | jq -r .status.state)" = CONTAINER_EXITED ]
	crictl rm "$ctr"
	[ ! -e "$tmp/logs/web_0.log" ]
	crictl stopp "$POD_ID"
	[ "$(crictl inspectp -o json "$POD_ID" | jq -r .status.state)" = SANDBOX_NOTREADY ]
	crictl rmp "$POD_ID"
	run docker inspect "$POD_ID"
	[ "$status" -ne 0 ]
	[ ! -e "$CK_DOCKER_DIR/shim/sandbox/$POD_ID" ]
	[ ! -e "$CK_DOCKER_DIR/shim/network/$POD_ID" ]
	# the address went back to the pool
	[ -d "$CK_DOCKER_DIR/cni/networks/ckubelet-docker" ]
	run grep -rl "$POD_ID" "$CK_DOCKER_DIR/cni/networks"
	[ "$status" -eq 1 ]
	POD_ID=
}

@test "dockershim: a sandbox whose network record was lost gets its CNI DEL at the stop all the same" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-lost-$$-$RANDOM
	jq -n --arg uid "$uid" '{metadata: {name: "e2e-lost", namespace: "default", uid: $uid,
		attempt: 0}, linux: {}}' >"$tmp/pod.json"
	POD_ID=$(crictl runp "$tmp/pod.json")
	[[ $(crictl inspectp -o json "$POD_ID" | jq -r .status.network.ip) == 10.89.* ]]
	# the address is taken in host-local's store, under the sandbox's ID
	run grep -rl "$POD_ID" "$CK_DOCKER_DIR/cni/networks"
	[ "$status" -eq 0 ]
	# as if the shim had stopped between the ADD and writing its record
	rm "$CK_DOCKER_DIR/shim/network/$POD_ID"
	crictl stopp "$POD_ID"
	# the DEL ran (without the ADD's result): the address is back in the pool
	run grep -rl "$POD_ID" "$CK_DOCKER_DIR/cni/networks"
	[ "$status" -eq 1 ]
	crictl rmp "$POD_ID"
	POD_ID=
}

@test "dockershim: ckubelet runs a static pod through the shim, and removes it" {
	local dir=$BATS_TEST_TMPDIR/manifests ip
	mkdir -p "$dir"
	cat >"$dir/web.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: shimweb, namespace: default}
	spec:
	  terminationGracePeriodSeconds: 1
	  containers:
	  - name: web
	    image: $BUSYBOX_IMAGE
	    imagePullPolicy: Never
	    command: [sh, -c, "mkdir -p /www && echo via-docker >/www/index.html && exec httpd -f -p 8080 -h /www"]
	    readinessProbe:
	      exec: {command: [test, -f, /www/index.html]}
	      periodSeconds: 1
	YAML
	start_agent "$dir"
	wait_for -t 60 phase_is shimweb Running
	ip=$(pod_ip shimweb)
	echo "pod IP: $ip"
	[[ $ip == 10.89.* ]]
	wait_for -t 10 curl -sf --max-time 2 "http://$ip:8080/"
	[ "$(curl -sf --max-time 2 "http://$ip:8080/")" = via-docker ]
	# the readiness probe runs through ExecSync
	wait_for -t 30 bash -c "curl -sf http://127.0.0.1:$CKUBELET_READ_ONLY_PORT/pods | jq -e '.items[] | select(.metadata.name == \"shimweb-$E2E_NODE\") | .status.containerStatuses[0].ready' >/dev/null"
	# the engine's containers carry the kubelet's labels
	run docker ps --filter label=io.kubernetes.pod.name=shimweb-$E2E_NODE --format '{{.Names}}'
	[[ $output == *"k8s_web_shimweb-${E2E_NODE}_default_"* ]]
	[[ $output == *"k8s_POD_shimweb-${E2E_NODE}_default_"* ]]

	rm "$dir/web.yaml"
	wait_for -t 60 pod_absent shimweb
	wait_for -t 30 bash -c "[[ -z \$(docker ps -aq --filter label=io.kubernetes.pod.name=shimweb-$E2E_NODE) ]]"
	cleanup_agent
}

@test "dockershim: Exec, Attach and PortForward through the shim's streaming server (crictl's SPDY client)" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-stream-$$-$RANDOM ctr talker out n pf
	jq -n --arg uid "$uid" '{metadata: {name: "e2e-stream", namespace: "default", uid: $uid,
		attempt: 0}, log_directory: "'"$tmp"'", linux: {}}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "web"}, image: {image: $image},
		command: ["sh", "-c", "mkdir -p /www && head -c 3000000 /dev/urandom >/www/big && echo served >/www/index.html && exec httpd -f -p 8080 -h /www"],
		log_path: "web.log", linux: {}}' >"$tmp/web.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "talker"}, image: {image: $image},
		command: ["sh", "-c", "while read l; do echo got:$l; done; echo bye"],
		stdin: true, stdin_once: true, log_path: "talker.log", linux: {}}' >"$tmp/talker.json"
	POD_ID=$(crictl runp "$tmp/pod.json")
	ctr=$(crictl create "$POD_ID" "$tmp/web.json" "$tmp/pod.json")
	crictl start "$ctr"

	# exec (not --sync): stdout, stderr and the exit code over the stream
	run crictl exec "$ctr" sh -c 'echo out; echo err >&2; exit 3'
	[ "$status" -ne 0 ]
	[[ $output == *out* && $output == *err* ]]
	[[ $output == *"command terminated with exit code 3"* ]]
	run crictl exec "$ctr" sh -c 'echo fine'
	[ "$status" -eq 0 ]
	[ "$output" = fine ]
	# stdin reaches the command, and its end ends it
	n=$(printf 'a\nb\nc\n' | crictl exec -i "$ctr" wc -l)
	[ "$(echo "$n" | tr -d ' ')" = 3 ]
	# 1 MB through stdin and back
	head -c 1000000 /dev/urandom >"$tmp/in.bin"
	crictl exec -i "$ctr" sh -c 'cat >/tmp/in.bin'  <"$tmp/in.bin"
	crictl exec "$ctr" cat /tmp/in.bin >"$tmp/out.bin"
	cmp "$tmp/in.bin" "$tmp/out.bin"
	# a TTY (script(1) gives crictl a terminal), its size from the resize stream
	run script -qec "stty cols 111 rows 33; '$CRICTL' --config /dev/null --runtime-endpoint '$CONTAINER_RUNTIME_ENDPOINT' exec -it '$ctr' sh -c 'sleep 1; tty; stty size'" /dev/null </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == */dev/pts/* ]]
	[[ $output == *"33 111"* ]]

	# attach: the container's stdin and output
	talker=$(crictl create "$POD_ID" "$tmp/talker.json" "$tmp/pod.json")
	crictl start "$talker"
	out=$( (sleep 1; echo one; echo two) | timeout 20 "$CRICTL" --config /dev/null \
		--runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" attach -i "$talker")
	[[ $out == *got:one*got:two*bye* ]]
	# exec into a container that is not running is refused
	wait_for -t 10 bash -c "[[ \$('$CRICTL' --config /dev/null --runtime-endpoint '$CONTAINER_RUNTIME_ENDPOINT' inspect -o json '$talker' | jq -r .status.state) == CONTAINER_EXITED ]]"
	run crictl exec "$talker" true
	[ "$status" -ne 0 ]
	[[ $output == *"container not running"* ]]

	# port-forward to the pod's loopback: many requests, a 3 MB body
	"$CRICTL" --config /dev/null --runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
		port-forward "$POD_ID" 18089:8080 >"$tmp/pf.log" 2>&1 &
	pf=$!
	wait_for -t 20 curl -fsS --noproxy '*' -o /dev/null http://127.0.0.1:18089/index.html
	for n in $(seq 1 20); do
		[ "$(curl -fsS --noproxy '*' http://127.0.0.1:18089/index.html)" = served ]
	done
	curl -fsS --noproxy '*' -o "$tmp/big" http://127.0.0.1:18089/big
	[ "$(sha256sum <"$tmp/big" | cut -d' ' -f1)" = "$(crictl exec "$ctr" sha256sum /www/big | cut -d' ' -f1)" ]
	kill "$pf"
	wait "$pf" || true
	# a port nobody listens on: the client is told why
	"$CRICTL" --config /dev/null --runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
		port-forward "$POD_ID" 18090:9999 >"$tmp/pf2.log" 2>&1 &
	pf=$!
	wait_for -t 20 bash -c "curl -s --noproxy '*' --max-time 2 http://127.0.0.1:18090/; grep -q 'error forwarding port 9999' '$tmp/pf2.log'"
	grep -q 'connect to localhost:9999 in the sandbox: Connection refused' "$tmp/pf2.log"
	kill "$pf" 2>/dev/null || true
	wait "$pf" || true

	crictl rmp -f "$POD_ID"
	POD_ID=
}

@test "dockershim: Exec and Attach over WebSocket (crictl --transport=websocket, v5.channel.k8s.io)" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-ws-$$-$RANDOM ctr talker n out
	jq -n --arg uid "$uid" '{metadata: {name: "e2e-ws", namespace: "default", uid: $uid,
		attempt: 0}, log_directory: "'"$tmp"'", linux: {}}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "main"}, image: {image: $image},
		command: ["sleep", "3600"], log_path: "main.log", linux: {}}' >"$tmp/main.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "talker"}, image: {image: $image},
		command: ["sh", "-c", "while read l; do echo got:$l; done; echo bye"],
		stdin: true, stdin_once: true, log_path: "talker.log", linux: {}}' >"$tmp/talker.json"
	POD_ID=$(crictl runp "$tmp/pod.json")
	ctr=$(crictl create "$POD_ID" "$tmp/main.json" "$tmp/pod.json")
	crictl start "$ctr"

	# stdout, stderr and the exit code (the Status on the error channel)
	run crictl exec --transport websocket "$ctr" sh -c 'echo out; echo err >&2; exit 3'
	[ "$status" -ne 0 ]
	[[ $output == *out* && $output == *err* ]]
	[[ $output == *"command terminated with exit code 3"* ]]
	run crictl exec --transport websocket "$ctr" sh -c 'echo fine'
	[ "$status" -eq 0 ]
	[ "$output" = fine ]
	# stdin's end reaches the command: v5's close signal
	n=$(printf 'a\nb\nc\n' | timeout 30 "$CRICTL" --config /dev/null \
		--runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" exec --transport websocket -i "$ctr" wc -l)
	[ "$(echo "$n" | tr -d ' ')" = 3 ]
	# 1 MB through stdin and back
	head -c 1000000 /dev/urandom >"$tmp/in.bin"
	timeout 60 "$CRICTL" --config /dev/null --runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
		exec --transport websocket -i "$ctr" sh -c 'cat >/tmp/in.bin' <"$tmp/in.bin"
	crictl exec --transport websocket "$ctr" cat /tmp/in.bin >"$tmp/out.bin"
	cmp "$tmp/in.bin" "$tmp/out.bin"
	# a TTY and its size from the resize channel
	run script -qec "stty cols 97 rows 21; '$CRICTL' --config /dev/null --runtime-endpoint '$CONTAINER_RUNTIME_ENDPOINT' exec --transport websocket -it '$ctr' sh -c 'sleep 1; tty; stty size'" /dev/null </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == */dev/pts/* ]]
	[[ $output == *"21 97"* ]]

	# attach: the container's stdin and output
	talker=$(crictl create "$POD_ID" "$tmp/talker.json" "$tmp/pod.json")
	crictl start "$talker"
	out=$( (sleep 1; echo one; echo two) | timeout 20 "$CRICTL" --config /dev/null \
		--runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" attach --transport websocket -i "$talker")
	[[ $out == *got:one*got:two*bye* ]]

	crictl rmp -f "$POD_ID"
	POD_ID=
}

@test "dockershim: PodSandboxStats sums the pod's usage, with its network; ReopenContainerLog and UpdateRuntimeConfig as cri-dockerd" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-stats-$$-$RANDOM ctr st
	jq -n --arg uid "$uid" '{metadata: {name: "e2e-stats", namespace: "default", uid: $uid,
		attempt: 0}, log_directory: "'"$tmp"'", linux: {}}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "busy"}, image: {image: $image},
		command: ["sh", "-c", "head -c 20000000 /dev/zero >/dev/shm/fill; while :; do :; done"],
		log_path: "busy.log", linux: {}}' >"$tmp/busy.json"
	POD_ID=$(crictl runp "$tmp/pod.json")
	ctr=$(crictl create "$POD_ID" "$tmp/busy.json" "$tmp/pod.json")
	crictl start "$ctr"
	# traffic on the pod's interface: a ping of its own address's gateway
	crictl exec "$ctr" sh -c 'ping -c 3 -W 1 "$(ip route | awk "/default/ {print \$3}")" >/dev/null' || true
	sleep 2
	st=$(crictl statsp --id "$POD_ID" -o json)
	echo "$st" | jq .
	[ "$(echo "$st" | jq -r '.stats[0].attributes.id')" = "$POD_ID" ]
	[ "$(echo "$st" | jq -r '.stats[0].attributes.metadata.uid')" = "$uid" ]
	# the busy loop's CPU, the 20 MB in /dev/shm, the processes
	(($(echo "$st" | jq -r '.stats[0].linux.cpu.usageCoreNanoSeconds.value') > 500000000))
	(($(echo "$st" | jq -r '.stats[0].linux.memory.workingSetBytes.value') > 20000000))
	(($(echo "$st" | jq -r '.stats[0].linux.process.processCount.value') >= 2))
	# the pod's own interface, not the host's
	[ "$(echo "$st" | jq -r '.stats[0].linux.network.defaultInterface.name')" = eth0 ]
	(($(echo "$st" | jq -r '.stats[0].linux.network.defaultInterface.txBytes.value') > 0))
	# (the pod's namespace has lo and eth0 only; the host has its bridge and veths)
	[ "$(echo "$st" | jq -c '[.stats[0].linux.network.interfaces[].name]')" = '["eth0"]' ]
	# its container, as ListContainerStats gives it
	[ "$(echo "$st" | jq -r '.stats[0].linux.containers | length')" = 1 ]
	[ "$(echo "$st" | jq -r '.stats[0].linux.containers[0].attributes.metadata.name')" = busy ]
	# the pod's sum is at least its container's
	(($(echo "$st" | jq -r '.stats[0].linux.cpu.usageCoreNanoSeconds.value') >= $(echo "$st" | jq -r '.stats[0].linux.containers[0].cpu.usageCoreNanoSeconds.value')))
	# a stopped pod is not listed
	crictl stopp "$POD_ID"
	[ "$(crictl statsp -o json | jq --arg id "$POD_ID" '[.stats[] | select(.attributes.id == $id)] | length')" = 0 ]

	# ReopenContainerLog: cri-dockerd's refusal (the engine owns the log)
	run crictl logs --reopen "$ctr"
	[ "$status" -ne 0 ]
	[[ $output == *"docker does not support reopening container log files"* ]]
	# UpdateRuntimeConfig: accepted
	crictl update-runtime-config --pod-cidr 10.89.0.0/16
	crictl rmp -f "$POD_ID"
	POD_ID=
}

@test "dockershim: a container name in use: the holder removed, the next create takes the name (cri-dockerd's recovery)" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-conflict-$$-$RANDOM first third
	jq -n --arg uid "$uid" '{metadata: {name: "e2e-conflict", namespace: "default", uid: $uid,
		attempt: 0}, log_directory: "'"$tmp"'", linux: {}}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "app", attempt: 0}, image: {image: $image},
		command: ["sleep", "3600"], log_path: "app.log", linux: {}}' >"$tmp/app.json"
	POD_ID=$(crictl runp "$tmp/pod.json")
	first=$(crictl create "$POD_ID" "$tmp/app.json" "$tmp/pod.json")
	# the same name again (a kubelet's retry of a create that did happen):
	# the engine's conflict, and the container that held the name removed
	run crictl create "$POD_ID" "$tmp/app.json" "$tmp/pod.json"
	[ "$status" -ne 0 ]
	[[ $output == *"is already in use by container"* ]]
	run crictl inspect "$first"
	[ "$status" -ne 0 ]
	# the next try takes the name, and runs
	third=$(crictl create "$POD_ID" "$tmp/app.json" "$tmp/pod.json")
	[ "$third" != "$first" ]
	crictl start "$third"
	[ "$(crictl inspect -o json "$third" | jq -r .status.state)" = CONTAINER_RUNNING ]
	[ "$(crictl inspect -o json "$third" | jq -r .status.metadata.name)" = app ]
	crictl rmp -f "$POD_ID"
	POD_ID=
}

@test "dockershim: --streaming-connection-idle-timeout ends a silent stream session; a bad value is refused" {
	local tmp=$BATS_TEST_TMPDIR uid=e2e-dockershim-idle-$$-$RANDOM shim_pid ctr start out rc
	run "$BUILD/ckubelet-dockershim" --streaming-connection-idle-timeout=abc
	[ "$status" -eq 1 ]
	[[ $output == *'invalid argument "abc" for "--streaming-connection-idle-timeout"'* ]]
	# a second shim on the same engine, its sessions idle after 2 s
	"$BUILD/ckubelet-dockershim" --docker-endpoint "unix://$CK_DOCKER_DIR/docker.sock" \
		--listen "unix://$tmp/shim.sock" --root-directory "$tmp/root" \
		--cni-conf-dir "$CK_DOCKER_DIR/net.d" --cni-bin-dir /usr/lib/cni \
		--pod-infra-container-image localhost/pause:3.10 --restrict-oom-score-adj \
		--streaming-connection-idle-timeout=2s >"$tmp/shim.log" 2>&1 &
	shim_pid=$!
	echo "$shim_pid" >"$tmp/shim.pid"
	wait_for -t 10 test -S "$tmp/shim.sock"
	local CONTAINER_RUNTIME_ENDPOINT=unix://$tmp/shim.sock IMAGE_SERVICE_ENDPOINT=unix://$tmp/shim.sock
	jq -n --arg uid "$uid" '{metadata: {name: "e2e-idle", namespace: "default", uid: $uid,
		attempt: 0}, log_directory: "'"$tmp"'", linux: {}}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{metadata: {name: "main"}, image: {image: $image},
		command: ["sleep", "3600"], log_path: "main.log", linux: {}}' >"$tmp/main.json"
	POD_ID=$(crictl runp "$tmp/pod.json")
	ctr=$(crictl create "$POD_ID" "$tmp/main.json" "$tmp/pod.json")
	crictl start "$ctr"
	# no output for 20 s: crictl's pings come every 5 s, so the session
	# ends after 2 s, long before the command would (the client sees its
	# end without a status: Go's executor takes that for success, so the
	# exit code says nothing here)
	start=$SECONDS
	rc=0
	out=$(timeout 25 "$CRICTL" --config /dev/null --runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
		exec "$ctr" sh -c 'sleep 20; echo late' 2>&1) || rc=$?
	echo "rc=$rc after $((SECONDS - start)) s: $out"
	[ "$rc" -ne 124 ]
	((SECONDS - start < 15))
	[[ $out != *late* ]]
	# a session with output is not idle
	[ "$(crictl exec "$ctr" sh -c 'for i in 1 2 3 4; do echo $i; sleep 1; done' | tr -d '\n')" = 1234 ]
	crictl rmp -f "$POD_ID"
	POD_ID=
	kill "$shim_pid"
	wait "$shim_pid" || true
}

@test "dockershim: methods not implemented yet answer Unimplemented" {
	run crictl metricsp
	[ "$status" -ne 0 ]
	[[ $output == *"Unimplemented"* ]]
}

@test "dockershim: a dockerd that goes away gets errors, and is found again" {
	local pid
	pid=$(<"$CK_DOCKER_DIR/dockerd.pid")
	kill -TERM "$pid"
	wait_for -t 30 bash -c "! kill -0 $pid 2>/dev/null"
	run crictl version
	[ "$status" -ne 0 ]
	[[ $output == *"Unavailable"* ]]
	[[ $output == *"docker.sock"* ]]
	# (crictl, as the kubelet's CRI client, asks for Version before any
	# other call, so Status's DockerDaemonNotReady is test_dockershim's)
	run crictl images
	[ "$status" -ne 0 ]
	[[ $output == *"docker.sock"* ]]
	# the shim still runs; the engine comes back
	kill -0 "$(<"$CK_DOCKER_DIR/dockershim.pid")"
	CK_BUILD_DIR=$BUILD "$E2E_REPO/hack/local-docker" up 3>&- >/dev/null
	run crictl version
	[ "$status" -eq 0 ]
	[[ $output == *"RuntimeName:  docker"* ]]
}
