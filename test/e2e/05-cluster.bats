#!/usr/bin/env bats
# The local control plane (hack/local-cluster: upstream etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler on 127.0.0.1) works, and the node
# credentials ckubelet will use are what the apiserver expects of a node.

load helpers
load cluster

setup_file() {
	cluster_up
}

teardown() {
	if [[ -n ${TEST_NS:-} ]]; then
		kubectl delete namespace "$TEST_NS" --wait=false >/dev/null 2>&1 || true
	fi
}

@test "cluster: the apiserver is ready and serves the built-in namespaces" {
	run kubectl get --raw /readyz
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]

	run kubectl get namespaces -o name
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qxF namespace/default <<<"$output"
	grep -qxF namespace/kube-system <<<"$output"
}

@test "cluster: status reports every component healthy; env names the admin kubeconfig" {
	run "$E2E_REPO/hack/local-cluster" status
	echo "$output"
	[ "$status" -eq 0 ]
	for c in etcd kube-apiserver kube-controller-manager kube-scheduler; do
		grep -q "^$c: healthy" <<<"$output"
	done

	run "$E2E_REPO/hack/local-cluster" env
	[ "$status" -eq 0 ]
	[ "$output" = "KUBECONFIG=$ADMIN_KUBECONFIG" ]
}

@test "cluster: kubeconfigs are private; admin embeds its certificates, node refers to files" {
	[ "$(stat -c %a "$ADMIN_KUBECONFIG")" = 600 ]
	[ "$(stat -c %a "$NODE_KUBECONFIG")" = 600 ]
	grep -q '^    client-certificate-data: ' "$ADMIN_KUBECONFIG"
	grep -q '^    client-key-data: ' "$ADMIN_KUBECONFIG"
	grep -q '^    certificate-authority-data: ' "$ADMIN_KUBECONFIG"
	cert=$(sed -n 's/^    client-certificate: //p' "$NODE_KUBECONFIG")
	key=$(sed -n 's/^    client-key: //p' "$NODE_KUBECONFIG")
	ca=$(sed -n 's/^    certificate-authority: //p' "$NODE_KUBECONFIG")
	# one check a line: in bats only the last command of an && list can fail the test
	[ -f "$cert" ]
	[ -f "$key" ]
	[ -f "$ca" ]
	[ "$(stat -c %a "$key")" = 600 ]
}

@test "cluster: the node kubeconfig authenticates as system:node:<node> in system:nodes" {
	run node_kubectl auth whoami -o json
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r .status.userInfo.username <<<"$output")" = "system:node:$CLUSTER_NODE_NAME" ]
	jq -e '.status.userInfo.groups | index("system:nodes")' <<<"$output" >/dev/null
}

@test "cluster: the Node authorizer lets the node read its own Node but not a secret in default" {
	run node_kubectl auth can-i get "node/$CLUSTER_NODE_NAME"
	echo "get its node: $output"
	[ "$status" -eq 0 ]
	[[ $output == *yes* ]]

	# Since 1.34 a node reads only its own Node object.
	run node_kubectl auth can-i get node/some-other-node
	echo "get another node: $output"
	[ "$status" -eq 1 ]
	[[ $output == *"no - node '$CLUSTER_NODE_NAME' cannot read 'some-other-node'"* ]]

	run node_kubectl auth can-i get secrets -n default
	echo "get secrets: $output"
	[ "$status" -eq 1 ]
	[[ $output == no* ]]

	# And a real read is refused, not merely predicted to be.
	kubectl create secret generic e2e-cluster-secret -n default --from-literal=k=v \
		--dry-run=client -o yaml | kubectl apply -f - >/dev/null
	run node_kubectl get secret e2e-cluster-secret -n default
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *Forbidden* || $output == *forbidden* ]]
	kubectl delete secret e2e-cluster-secret -n default >/dev/null
}

@test "cluster: the controller-manager creates the default service account in a new namespace" {
	TEST_NS=e2e-cluster-$$-$RANDOM
	kubectl create namespace "$TEST_NS"
	wait_for -t 60 -i 0.5 kubectl get serviceaccount default -n "$TEST_NS" -o name
	# Its token controller publishes the root CA too.
	wait_for -t 60 -i 0.5 kubectl get configmap kube-root-ca.crt -n "$TEST_NS" -o name
}

@test "cluster: every component listens on 127.0.0.1 only" {
	pids=()
	for c in etcd kube-apiserver kube-controller-manager kube-scheduler; do
		pids+=("$(cat "$CK_CLUSTER_DIR/run/$c.pid")")
	done
	listening=$(ss -Hltnup)
	echo "$listening"
	for pid in "${pids[@]}"; do
		mine=$(grep -F "pid=$pid," <<<"$listening" || true)
		[ -n "$mine" ]
		# Local address is column 5: 127.0.0.1:PORT on every line.
		run awk '$5 !~ /^127\.0\.0\.1:[0-9]+$/' <<<"$mine"
		[ -z "$output" ]
	done
}
