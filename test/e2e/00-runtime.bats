#!/usr/bin/env bats
# The local runtime works through the real CRI, driven by crictl alone: the
# floor every other e2e suite (and the agent) stands on.

load helpers

setup_file() {
	runtime_up
}

teardown() {
	if [[ -n ${POD_ID:-} ]]; then
		crictl stopp "$POD_ID" >/dev/null || true
		crictl rmp -f "$POD_ID" >/dev/null || true
	fi
}

@test "crictl version: containerd answers CRI v1" {
	run crictl version
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"RuntimeName:  containerd"* ]]
	[[ $output == *"RuntimeApiVersion:  v1"* ]]
}

@test "crictl images: the pause and busybox images are imported" {
	run crictl images -o json
	[ "$status" -eq 0 ]
	tags=$(jq -r '.images[].repoTags[]' <<<"$output")
	echo "$tags"
	grep -qxF "$PAUSE_IMAGE" <<<"$tags"
	grep -qxF "$BUSYBOX_IMAGE" <<<"$tags"
}

@test "a pod sandbox with a busybox container: CNI IP, logs, no route out" {
	tmp=$BATS_TEST_TMPDIR
	uid=e2e-runtime-$$-$RANDOM
	mkdir -p "$tmp/logs"
	jq -n --arg uid "$uid" --arg logs "$tmp/logs" '{
		metadata: {name: "e2e-runtime", namespace: "default", uid: $uid, attempt: 0},
		hostname: "e2e-runtime",
		log_directory: $logs,
		linux: {}
	}' >"$tmp/pod.json"
	jq -n --arg image "$BUSYBOX_IMAGE" '{
		metadata: {name: "hello", attempt: 0},
		image: {image: $image},
		command: ["sh", "-c", "echo hello from $(hostname); exec sleep 3600"],
		log_path: "hello_0.log",
		linux: {}
	}' >"$tmp/ctr.json"

	POD_ID=$(crictl runp "$tmp/pod.json")
	[ -n "$POD_ID" ]
	[ "$(crictl inspectp -o json "$POD_ID" | jq -r .status.state)" = SANDBOX_READY ]

	ip=$(crictl inspectp -o json "$POD_ID" | jq -r .status.network.ip)
	echo "pod IP: $ip"
	[[ $ip == "$E2E_POD_NET".* ]]

	ctr_id=$(crictl create "$POD_ID" "$tmp/ctr.json" "$tmp/pod.json")
	crictl start "$ctr_id"
	[ "$(crictl inspect -o json "$ctr_id" | jq -r .status.state)" = CONTAINER_RUNNING ]

	# The runtime writes the CRI log file; crictl logs reads it back.
	wait_for -t 10 grep -q "hello from e2e-runtime" "$tmp/logs/hello_0.log"
	run crictl logs "$ctr_id"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"hello from e2e-runtime"* ]]

	# Inside the pod: eth0 has the IP, and only the bridge subnet is routed.
	run crictl exec "$ctr_id" ip -4 route
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"$E2E_POD_NET.0.0/16 dev eth0"* ]]
	[[ $output != *default* ]]
	run crictl exec "$ctr_id" ip -4 addr show eth0
	[[ $output == *"inet $ip/16"* ]]

	# The host reaches the pod over the bridge (the agent's probes need this).
	busybox ping -c 1 -W 2 "$ip"

	crictl stop "$ctr_id"
	crictl rm "$ctr_id"
	crictl stopp "$POD_ID"
	crictl rmp "$POD_ID"
	run crictl pods -q --id "$POD_ID"
	[ -z "$output" ]
	POD_ID=
}
