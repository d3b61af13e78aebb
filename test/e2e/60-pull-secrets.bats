#!/usr/bin/env bats
# Image pull secrets against a real registry: hack/local-registry runs
# Debian's docker-registry on 127.0.0.1 with TLS and htpasswd auth, holding
# the test image at <registry>/private/busybox:1.35.  ckubelet joins the local
# cluster; pods are created with kubectl.  A pod whose imagePullSecrets hold
# the registry's credentials runs; one without (or with credentials for
# another registry) gets ErrImagePull, then ImagePullBackOff.
#
# Every pod here uses imagePullPolicy: Always, so that each one really pulls
# (the image may be in the runtime already from an earlier pod), and no test
# removes the image: it shares its layers and id with localhost/busybox:1.35,
# which CRI RemoveImage would take away from the other suites.

load helpers
load cluster

setup_file() {
	cluster_up
	runtime_up
	registry_up
	# containerd learns the registry's CA from <runtime>/certs.d, which it
	# reads only when started with config_path (hack/local-runtime sets it).
	local config_path
	config_path=$(crictl info | jq -r '.config.registry.configPath // ""')
	[[ -n $config_path ]] || {
		echo "setup: the running containerd has no registry config_path: it was started" \
			"by an older hack/local-runtime; restart it (hack/local-runtime down; up)" >&2
		return 1
	}

	export TEST_NS=pull-secrets-$$
	kubectl create namespace "$TEST_NS" >/dev/null
	# the namespace's default service account, which the pods need
	wait_for -t 30 kubectl -n "$TEST_NS" get serviceaccount default
	start_node --sync-frequency=10s
	wait_for -t 60 node_ready
}

teardown_file() {
	local stopped=0 id
	if [[ -n ${TEST_NS:-} ]]; then
		kubectl delete namespace "$TEST_NS" --timeout=60s >/dev/null 2>&1 || true
	fi
	# an agent that crashed or hung fails the file (after the cleanup)
	stop_ckubelet || stopped=$?
	for id in $(crictl pods --namespace "${TEST_NS:-none}" -q 2>/dev/null); do
		crictl stopp "$id" >/dev/null 2>&1 || true
		crictl rmp -f "$id" >/dev/null 2>&1 || true
	done
	if [[ ${CK_KEEP_REGISTRY:-0} != 1 ]]; then
		"$E2E_REPO/hack/local-registry" down 3>&- || true
	fi
	return "$stopped"
}

# make_pod NAME [SECRET...]: a pod on this node running the private image,
# with the given imagePullSecrets.
make_pod() {
	local name=$1 secrets="" s
	shift
	for s in "$@"; do
		secrets+="{name: $s}, "
	done
	kubectl -n "$TEST_NS" apply -f - >/dev/null <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $name}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  imagePullSecrets: [${secrets%, }]
	  containers:
	  - name: main
	    image: $REGISTRY_IMAGE
	    imagePullPolicy: Always
	    command: [sleep, "3600"]
	YAML
}

# waiting_reason POD: the first container's waiting reason, if any.
waiting_reason() {
	kubectl -n "$TEST_NS" get pod "$1" \
		-o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' 2>/dev/null
}

phase_of() {
	kubectl -n "$TEST_NS" get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null
}
pod_phase_is() { [[ $(phase_of "$1") == "$2" ]]; }

# events_of POD: "reason<TAB>message" lines of the pod's events.
events_of() {
	kubectl -n "$TEST_NS" get events --field-selector "involvedObject.name=$1" \
		-o jsonpath='{range .items[*]}{.reason}{"\t"}{.message}{"\n"}{end}' 2>/dev/null
}
has_event() { # POD REASON MESSAGE-GLOB
	local reason message
	while IFS=$'\t' read -r reason message; do
		# shellcheck disable=SC2053 # $3 is a glob on purpose
		[[ $reason == "$2" && $message == $3 ]] && return 0
	done < <(events_of "$1")
	return 1
}

# expect_pull_failure POD: the pod's container waits with ErrImagePull, and
# then with ImagePullBackOff (the reasons seen in order over up to 90 s).
expect_pull_failure() {
	local pod=$1 seen="" r last="" deadline=$((SECONDS + 90))
	while ((SECONDS < deadline)); do
		r=$(waiting_reason "$pod")
		if [[ -n $r && $r != "$last" ]]; then
			seen+="$r "
			last=$r
		fi
		[[ $seen == *"ErrImagePull "*"ImagePullBackOff "* ]] && break
		sleep 0.3
	done
	echo "waiting reasons seen: $seen"
	[[ $seen == *"ErrImagePull "*"ImagePullBackOff "* ]]
	[ "$(phase_of "$pod")" = Pending ]
	# the message says why: the registry wants credentials
	run kubectl -n "$TEST_NS" get pod "$pod" \
		-o jsonpath='{.status.containerStatuses[0].state.waiting.message}'
	echo "message: $output"
	[[ $output == *"Back-off pulling image \"$REGISTRY_IMAGE\""* ]]
	[[ $output == *"401 Unauthorized"* ]]
}

@test "pull secrets: a pod with a docker-registry secret runs the private image" {
	kubectl -n "$TEST_NS" create secret docker-registry regcred \
		--docker-server="$REGISTRY" --docker-username="$REGISTRY_USER" \
		--docker-password="$REGISTRY_PASSWORD" >/dev/null
	make_pod private regcred
	wait_for -t 90 -i 0.5 pod_phase_is private Running
	run kubectl -n "$TEST_NS" get pod private \
		-o jsonpath='{.status.containerStatuses[0].image} {.status.containerStatuses[0].imageID}'
	echo "$output"
	# imageID: the digest the registry served the image by
	[[ $output == "$REGISTRY_IMAGE ${REGISTRY_IMAGE%:*}@sha256:"* ]]
	# events as upstream words them
	wait_for -t 30 has_event private Pulling "Pulling image \"$REGISTRY_IMAGE\""
	has_event private Pulled \
		"Successfully pulled image \"$REGISTRY_IMAGE\" in *s (*s including waiting). Image size: * bytes."
}

@test "pull secrets: without a secret the pull fails with ErrImagePull, then ImagePullBackOff" {
	make_pod anonymous
	expect_pull_failure anonymous
	has_event anonymous Failed "Failed to pull image \"$REGISTRY_IMAGE\": *401 Unauthorized*"
	has_event anonymous BackOff "Back-off pulling image \"$REGISTRY_IMAGE\""
}

@test "pull secrets: credentials for another registry are not sent; a missing secret is reported" {
	# right user and password, but for another port: they must not match
	kubectl -n "$TEST_NS" create secret docker-registry elsewhere \
		--docker-server="${REGISTRY%:*}:5999" --docker-username="$REGISTRY_USER" \
		--docker-password="$REGISTRY_PASSWORD" >/dev/null
	make_pod mismatched no-such-secret elsewhere
	expect_pull_failure mismatched
	has_event mismatched FailedToRetrieveImagePullSecret \
		"Unable to retrieve some image pull secrets (no-such-secret); attempting to pull the image may not succeed."
}
