# Helpers for suites that need the Kubernetes control plane
# (hack/local-cluster): `load helpers` then `load cluster` in a .bats file.
#
# cluster_up starts it (idempotent: seconds when it already runs; a cold build
# of the binaries takes minutes, which is why test/run-e2e builds them first)
# and exports:
#   ADMIN_KUBECONFIG  system:masters kubeconfig (certificates embedded)
#   NODE_KUBECONFIG   kubeconfig of node CLUSTER_NODE_NAME (certificate files)
#   KUBECTL           the kubectl hack/local-cluster chose (>= 1.34)
#   CLUSTER_NODE_NAME the node name (CK_NODE_NAME, default ckubelet-node)
#   CK_CLUSTER_DIR    the cluster's state directory
# The cluster stays up after the suite (later suites reuse it); test/run-e2e
# brings it down at the end. By hand: hack/local-cluster down.
# kubectl keeps its discovery cache in the cluster directory, not ~/.kube.

E2E_REPO=${E2E_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CK_CLUSTER_DIR=${CK_CLUSTER_DIR:-/var/lib/ckubelet-cluster}
CLUSTER_NODE_NAME=${CK_NODE_NAME:-ckubelet-node}
export CK_CLUSTER_DIR CLUSTER_NODE_NAME

# cluster_up: start the control plane (idempotent) and export the variables above.
cluster_up() {
	local out line
	out=$(CK_CLUSTER_DIR=$CK_CLUSTER_DIR CK_NODE_NAME=$CLUSTER_NODE_NAME \
		"$E2E_REPO/hack/local-cluster" up 3>&-) || {
		echo "cluster_up: hack/local-cluster up failed" >&2
		return 1
	}
	ADMIN_KUBECONFIG="" NODE_KUBECONFIG=""
	while IFS= read -r line; do
		case $line in
		ADMIN_KUBECONFIG=*) ADMIN_KUBECONFIG=${line#*=} ;;
		NODE_KUBECONFIG=*) NODE_KUBECONFIG=${line#*=} ;;
		esac
	done <<<"$out"
	[[ -f $ADMIN_KUBECONFIG && -f $NODE_KUBECONFIG ]] || {
		echo "cluster_up: no kubeconfig paths in the output of hack/local-cluster up: $out" >&2
		return 1
	}
	KUBECTL=$CK_CLUSTER_DIR/bin/kubectl
	[[ -x $KUBECTL ]] || {
		echo "cluster_up: $KUBECTL missing" >&2
		return 1
	}
	export ADMIN_KUBECONFIG NODE_KUBECONFIG KUBECTL
}

# cluster_down: stop the control plane and remove its directory.
cluster_down() {
	CK_CLUSTER_DIR=$CK_CLUSTER_DIR "$E2E_REPO/hack/local-cluster" down 3>&-
}

# kubectl ARGS...: kubectl as the cluster admin (call cluster_up first).
kubectl() {
	[[ -n ${ADMIN_KUBECONFIG:-} ]] || {
		echo "kubectl: ADMIN_KUBECONFIG unset: call cluster_up first" >&2
		return 1
	}
	"$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" --cache-dir "$CK_CLUSTER_DIR/kubectl-cache" \
		--request-timeout=30s "$@"
}

# node_kubectl ARGS...: kubectl with the node's credentials
# (system:node:$CLUSTER_NODE_NAME, group system:nodes).
node_kubectl() {
	[[ -n ${NODE_KUBECONFIG:-} ]] || {
		echo "node_kubectl: NODE_KUBECONFIG unset: call cluster_up first" >&2
		return 1
	}
	"$KUBECTL" --kubeconfig "$NODE_KUBECONFIG" --cache-dir "$CK_CLUSTER_DIR/kubectl-cache" \
		--request-timeout=30s "$@"
}

# start_node [FLAGS...]: start ckubelet as node CLUSTER_NODE_NAME of the local
# cluster (call cluster_up first): the node kubeconfig, InternalIP 127.0.0.1
# (the only address the apiserver reaches kubelets by here), no static pod
# directory; FLAGS are passed on. See start_ckubelet for CKUBELET_* variables.
start_node() {
	start_ckubelet "" --kubeconfig="$NODE_KUBECONFIG" --node-ip=127.0.0.1 \
		--hostname-override="$CLUSTER_NODE_NAME" "$@"
}

# node_ready: the node's Ready condition is True.
node_ready() {
	[[ $(kubectl get node "$CLUSTER_NODE_NAME" \
		-o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# ---------------------------------------------------------------------------
# Helpers of the cluster-mode suites (50-59): a ckubelet node of the local
# cluster, observed as a kubectl user observes it, plus crictl on the node.

# The cgroup root of the cluster suites' pods (removed by cleanup_node).
CLUSTER_CGROUP_ROOT=/ckubelet-e2e-cluster

# wait_runtime_free [SECONDS]: wait (default 900 s) until no other ckubelet
# runs: the runtime is shared, and two agents on it remove each other's pods.
wait_runtime_free() {
	local deadline=$((SECONDS + ${1:-900})) others
	while others=$(pgrep -ax ckubelet); do
		if ((SECONDS >= deadline)); then
			echo "wait_runtime_free: another ckubelet still runs after ${1:-900}s: $others" >&2
			return 1
		fi
		sleep 5
	done
}

# start_cluster_node MANIFEST_DIR [FLAGS...]: start_node with the cluster
# suites' cgroup root and a static pod directory ("": none).
start_cluster_node() {
	local dir=$1
	shift
	start_ckubelet "$dir" --kubeconfig="$NODE_KUBECONFIG" --node-ip=127.0.0.1 \
		--hostname-override="$CLUSTER_NODE_NAME" --cgroup-root="$CLUSTER_CGROUP_ROOT" "$@"
}

# stop_node: stop the ckubelet of this file, whichever test (re)started it
# (its pid file, not a CKUBELET_PID inherited from setup_file).
stop_node() {
	unset CKUBELET_PID
	stop_ckubelet
}

# create_test_namespace NS: create it and wait until pods can be made there
# (its default service account) and mounted (its kube-root-ca.crt).
create_test_namespace() {
	kubectl create namespace "$1" >/dev/null || return 1
	wait_for -t 60 -i 0.5 kubectl get serviceaccount default -n "$1" -o name >/dev/null &&
		wait_for -t 60 -i 0.5 kubectl get configmap kube-root-ca.crt -n "$1" -o name >/dev/null
}

# node_field JSONPATH: a field of the Node (kubectl -o jsonpath).
node_field() {
	kubectl get node "$CLUSTER_NODE_NAME" -o jsonpath="$1"
}

# node_condition TYPE: the status (True, False, Unknown) of a Node condition.
node_condition() {
	node_field "{.status.conditions[?(@.type==\"$1\")].status}" 2>/dev/null
}

node_not_ready() { [[ $(node_condition Ready) == Unknown || $(node_condition Ready) == False ]]; }
node_absent() { # the apiserver answers NotFound (a failed query is not an absence)
	local out
	out=$(kubectl get node "$CLUSTER_NODE_NAME" -o name 2>&1) && return 1
	[[ $out == *NotFound* || $out == *"not found"* ]]
}

# kpod_field NS POD JSONPATH: a field of the pod as the apiserver has it.
kpod_field() {
	kubectl get pod -n "$1" "$2" -o jsonpath="$3" 2>/dev/null
}

kpod_phase_is() { [[ $(kpod_field "$1" "$2" '{.status.phase}') == "$3" ]]; }
kpod_ready() { [[ $(kpod_field "$1" "$2" '{.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
kpod_uid() { kpod_field "$1" "$2" '{.metadata.uid}'; }
kpod_gone() { # NS POD: the apiserver answers NotFound
	local out
	out=$(kubectl get pod -n "$1" "$2" -o name 2>&1) && return 1
	[[ $out == *NotFound* || $out == *"not found"* ]]
}

# kpod_containers NS POD [CONTAINER]: the pod's container ids in the runtime
# (every state), by the labels the kubelet puts on them.
kpod_containers() {
	local args=(ps -a -q --label "io.kubernetes.pod.namespace=$1" --label "io.kubernetes.pod.name=$2")
	[[ -n ${3:-} ]] && args+=(--label "io.kubernetes.container.name=$3")
	crictl "${args[@]}"
}

# kpod_running_container NS POD CONTAINER: the id of its running container.
kpod_running_container() {
	crictl ps -q --state running --label "io.kubernetes.pod.namespace=$1" \
		--label "io.kubernetes.pod.name=$2" --label "io.kubernetes.container.name=$3"
}

# kpod_sandboxes NS POD: its sandbox ids in the runtime (every state).
kpod_sandboxes() {
	crictl pods -q --namespace "^$1\$" --name "^$2\$"
}

# kpod_runtime_empty NS POD: crictl answers, and the runtime has no sandbox
# or container of it.
kpod_runtime_empty() {
	query_empty kpod_sandboxes "$1" "$2" && query_empty kpod_containers "$1" "$2"
}

# remove_namespace_sandboxes NS...: stop and remove what the runtime still
# has of these namespaces (after the agent is stopped), and their logs.
remove_namespace_sandboxes() {
	local ns id
	for ns in "$@"; do
		for id in $(crictl pods -q --namespace "^$ns\$"); do
			crictl stopp "$id" >/dev/null || true
			crictl rmp -f "$id" >/dev/null || true
		done
		rm -rf /var/log/pods/"${ns}"_* 2>/dev/null || true
	done
}

# unmount_agent_root: the tmpfs mounts (secrets, projected volumes, memory
# emptyDirs) left under the stopped agent's root directory, deepest first:
# a pod force-deleted while its node stops keeps them, and bats cannot
# remove a test's temporary directory while they are there.
unmount_agent_root() {
	[[ -n ${CKUBELET_ROOT:-} ]] || return 0
	grep -o " ${CKUBELET_ROOT}[^ ]*" /proc/self/mountinfo | sort -r |
		xargs -r -n1 umount -l 2>/dev/null
	return 0
}

# cleanup_node NS...: what a cluster suite leaves behind, in order: its
# namespaces deleted while the agent still runs (it stops their pods), the
# agent stopped, the Node deleted (the next file registers anew), leftover
# sandboxes, tmpfs mounts under the agent's root and the cgroups removed.
# Fails (after all of it) when stopping the agent does (stop_ckubelet).
cleanup_node() {
	local ns d stopped=0
	for ns in "$@"; do
		kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	done
	for ns in "$@"; do
		wait_for -t 90 -i 1 eval "! kubectl get namespace '$ns' -o name >/dev/null 2>&1" || true
	done
	stop_node || stopped=$?
	kubectl delete node "$CLUSTER_NODE_NAME" --ignore-not-found >/dev/null 2>&1 || true
	remove_namespace_sandboxes "$@"
	unmount_agent_root
	for d in /sys/fs/cgroup/*/"${CLUSTER_CGROUP_ROOT#/}"; do
		[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return "$stopped"
}

# cluster_file_setup PREFIX: the start of every cluster suite's setup_file:
# the control plane and the runtime up, no other agent on the runtime, no
# stale Node (the suite registers anew), and a new namespace
# TEST_NS=PREFIX-<pid> (exported).
cluster_file_setup() {
	cluster_up
	runtime_up
	wait_runtime_free
	kubectl delete node "$CLUSTER_NODE_NAME" --ignore-not-found >/dev/null
	TEST_NS=$1-$$
	export TEST_NS
	create_test_namespace "$TEST_NS"
}

# bound_pod NAME [GRACE] [COMMAND] [RESTART_POLICY] [IMAGE] [SPEC]: a pod of
# TEST_NS bound to the node (no scheduler), with terminationGracePeriodSeconds
# GRACE (default 5), restartPolicy RESTART_POLICY (default Always), one
# container "main" of IMAGE (default localhost/busybox:1.35) running the
# shell COMMAND (default: a loop that exits at once on SIGTERM; `sleep 3600`
# alone is PID 1 and ignores it), and SPEC: more lines of the spec (YAML
# indented by two spaces, e.g. '  nodeSelector: {a: b}').
bound_pod() {
	local cmd=${3:-'trap "exit 0" TERM; while :; do sleep 1; done'}
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: ${2:-5}
	  restartPolicy: ${4:-Always}
	${6:-}
	  containers:
	  - name: main
	    image: ${5:-localhost/busybox:1.35}
	    command: [sh, -c, '$cmd']
	YAML
}

# ---------------------------------------------------------------------------
# metrics-server (hack/local-cluster metrics-server): the metrics.k8s.io API
# of kubectl top.

# build_metrics_server: build metrics-server into the tools cache (nothing
# when it is there), its progress as TAP comments on fd 3 when bats has it
# open (setup_file): a cold build takes minutes, and test/run-e2e builds
# only the control plane before bats.
build_metrics_server() {
	local status
	if { true >&3; } 2>/dev/null; then
		"$E2E_REPO/test/tools/build" "$E2E_REPO/test/tools/bin" metrics-server 2>&1 | sed -u 's/^/# /' >&3
		status=${PIPESTATUS[0]}
	else
		"$E2E_REPO/test/tools/build" "$E2E_REPO/test/tools/bin" metrics-server >&2
		status=$?
	fi
	return "$status"
}

# metrics_server_up: start metrics-server against the local cluster (call
# cluster_up first; it listens on the local runtime's bridge, which exists
# once a pod has run) and wait until its APIService is Available. Exports
# METRICS_SERVER (https://<address>:<port>) and METRICS_SERVER_KUBECONFIG
# (its service account's kubeconfig: a bearer token).
metrics_server_up() {
	local out
	out=$(CK_CLUSTER_DIR=$CK_CLUSTER_DIR CK_NODE_NAME=$CLUSTER_NODE_NAME \
		"$E2E_REPO/hack/local-cluster" metrics-server up 3>&-) || {
		echo "metrics_server_up: hack/local-cluster metrics-server up failed" >&2
		return 1
	}
	METRICS_SERVER=$(sed -n 's/^METRICS_SERVER=//p' <<<"$out" | tail -n 1)
	METRICS_SERVER_KUBECONFIG=$CK_CLUSTER_DIR/metrics-server/kubeconfig
	[[ -n $METRICS_SERVER && -f $METRICS_SERVER_KUBECONFIG ]] || {
		echo "metrics_server_up: no METRICS_SERVER line or kubeconfig: $out" >&2
		return 1
	}
	export METRICS_SERVER METRICS_SERVER_KUBECONFIG
}

# metrics_server_down: unregister and stop it, delete its objects.
metrics_server_down() {
	CK_CLUSTER_DIR=$CK_CLUSTER_DIR CK_NODE_NAME=$CLUSTER_NODE_NAME \
		"$E2E_REPO/hack/local-cluster" metrics-server down 3>&-
}

# metrics_server_token: the bearer token metrics-server sends to the nodes.
metrics_server_token() {
	awk '$1 == "token:" { print $2; exit }' "$METRICS_SERVER_KUBECONFIG"
}
