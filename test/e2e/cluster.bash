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
