#!/usr/bin/env bats
# The apiserver client library (src/client: kubeconfig, REST, watch,
# reflector) against the real local control plane, through a test-only
# driver (test/e2e/tools/client_smoke.c, built here, not part of the product).

load helpers
load cluster

setup_file() {
	cluster_up
	[[ -f $BUILD/libckubelet.a ]] || {
		echo "$BUILD/libckubelet.a missing (make)" >&2
		return 1
	}
	SMOKE=$BATS_FILE_TMPDIR/client_smoke
	# shellcheck disable=SC2046 # pkg-config prints several words
	cc -std=c17 -D_GNU_SOURCE -I"$E2E_REPO/src" -Wall -Wextra -Werror -O1 -g \
		"$E2E_REPO/test/e2e/tools/client_smoke.c" -o "$SMOKE" "$BUILD/libckubelet.a" \
		$(pkg-config --cflags --libs jansson yaml-0.1 libssl libcrypto zlib) -lpthread -lm
	SERVER=$(sed -n 's/^    server: //p' "$NODE_KUBECONFIG")
	CA=$(sed -n 's/^    certificate-authority: //p' "$NODE_KUBECONFIG")
	NODE_CERT=$(sed -n 's/^    client-certificate: //p' "$NODE_KUBECONFIG")
	NODE_KEY=$(sed -n 's/^    client-key: //p' "$NODE_KUBECONFIG")
	TEST_NS=e2e-client-$$-$RANDOM
	kubectl create namespace "$TEST_NS" >/dev/null
	export SMOKE SERVER CA NODE_CERT NODE_KEY TEST_NS
}

teardown_file() {
	kubectl delete namespace "$TEST_NS" --wait=false >/dev/null 2>&1 || true
}

teardown() {
	if [[ -n ${REFLECT_PID:-} ]]; then
		kill "$REFLECT_PID" 2>/dev/null || true
		wait "$REFLECT_PID" 2>/dev/null || true
	fi
}

# write_kubeconfig FILE CLUSTER_LINES USER_LINES: a kubeconfig for $SERVER
# whose cluster and user entries hold the given (already indented) lines.
write_kubeconfig() {
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: $SERVER
$2
users:
- name: u
  user:
$3
contexts:
- name: other
  context: {cluster: nowhere, user: u}
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
EOF
}

node_user_lines() {
	printf '    client-certificate: %s\n    client-key: %s' "$NODE_CERT" "$NODE_KEY"
}

@test "client: the node lists the pods bound to it and is refused secrets with the apiserver's reason" {
	names=$(kubectl get pods -A --field-selector "spec.nodeName=$CLUSTER_NODE_NAME" -o name)
	want=$(grep -c . <<<"$names" || true)
	run "$SMOKE" get "$NODE_KUBECONFIG" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "status=200 kind=PodList items=$want" ]

	run "$SMOKE" get "$NODE_KUBECONFIG" /api/v1/secrets
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == "error code=403: GET /api/v1/secrets: 403 Forbidden: "* ]]
	[[ $output == *"secrets is forbidden: User \"system:node:$CLUSTER_NODE_NAME\" cannot list resource \"secrets\""* ]]

	# A missing object: the apiserver's NotFound Status.
	run "$SMOKE" get "$ADMIN_KUBECONFIG" "/api/v1/namespaces/$TEST_NS/pods/absent"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"code=404: "*"404 NotFound: pods \"absent\" not found" ]]
}

@test "client: a reflector (admin kubeconfig, inline certificates) follows a pod bound to the node" {
	out=$BATS_TEST_TMPDIR/reflect.out
	# Watches of 2-4 s: the reflector resumes several times from its last
	# resourceVersion during the test, and must not relist for that.
	"$SMOKE" reflect "$ADMIN_KUBECONFIG" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME" 120 2 \
		>"$out" 2>&1 &
	REFLECT_PID=$!
	wait_for -t 30 grep -q '^REPLACE ' "$out"
	sleep 5

	kubectl apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: smoke, namespace: $TEST_NS}
spec:
  nodeName: $CLUSTER_NODE_NAME
  containers: [{name: c, image: $PAUSE_IMAGE}]
EOF
	wait_for -t 30 grep -qxF "EVENT ADDED $TEST_NS/smoke deleting=false" "$out"
	# No kubelet runs the pod: a graceful delete only marks it ...
	kubectl delete pod smoke -n "$TEST_NS" --wait=false
	wait_for -t 30 grep -qxF "EVENT MODIFIED $TEST_NS/smoke deleting=true" "$out"
	# ... and a forced one removes it.
	kubectl delete pod smoke -n "$TEST_NS" --grace-period=0 --force
	wait_for -t 30 grep -qxF "EVENT DELETED $TEST_NS/smoke deleting=true" "$out"

	# It stops promptly on request, in the middle of a watch.
	start=$SECONDS
	kill -TERM "$REFLECT_PID"
	wait "$REFLECT_PID"
	REFLECT_PID=
	cat "$out"
	((SECONDS - start <= 3))
	[ "$(tail -n 1 "$out")" = stopped ]
	[ "$(grep -c '^REPLACE ' "$out")" -eq 1 ]
	# the events in stream order
	grep "^EVENT .* $TEST_NS/smoke " "$out" | head -n 1 | grep -qxF "EVENT ADDED $TEST_NS/smoke deleting=false"
	grep "^EVENT .* $TEST_NS/smoke " "$out" | tail -n 1 | grep -qxF "EVENT DELETED $TEST_NS/smoke deleting=true"
}

@test "client: a pod that exists before the reflector starts is in its first list" {
	kubectl apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: listed, namespace: $TEST_NS}
spec:
  nodeName: $CLUSTER_NODE_NAME
  containers: [{name: c, image: $PAUSE_IMAGE}]
EOF
	run "$SMOKE" reflect "$ADMIN_KUBECONFIG" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME" 2
	echo "$output"
	kubectl delete pod listed -n "$TEST_NS" --grace-period=0 --force >/dev/null 2>&1
	[ "$status" -eq 0 ]
	grep -qxF "ITEM $TEST_NS/listed" <<<"$output"
	[ "$(tail -n 1 <<<"$output")" = stopped ]
}

@test "client: TLS is verified: a kubeconfig trusting another CA is refused, the right one (relative path) works" {
	dir=$BATS_TEST_TMPDIR
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj /CN=another-ca -keyout "$dir/other-ca.key" -out "$dir/other-ca.crt" 2>/dev/null
	write_kubeconfig "$dir/other.kubeconfig" "    certificate-authority: other-ca.crt" "$(node_user_lines)"
	run "$SMOKE" get "$dir/other.kubeconfig" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == "error code=1: GET /api/v1/pods: TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority" ]]

	cp "$CA" "$dir/right-ca.crt"
	write_kubeconfig "$dir/right.kubeconfig" "    certificate-authority: right-ca.crt" "$(node_user_lines)"
	run "$SMOKE" get "$dir/right.kubeconfig" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "status=200 kind=PodList "* ]]
}

@test "client: tls-server-name is the name the server certificate is verified for" {
	dir=$BATS_TEST_TMPDIR
	write_kubeconfig "$dir/sni.kubeconfig" \
		"$(printf '    certificate-authority: %s\n    tls-server-name: kubernetes.default.svc' "$CA")" \
		"$(node_user_lines)"
	run "$SMOKE" get "$dir/sni.kubeconfig" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME"
	echo "$output"
	[ "$status" -eq 0 ]

	write_kubeconfig "$dir/badsni.kubeconfig" \
		"$(printf '    certificate-authority: %s\n    tls-server-name: not-in-the-certificate.example' "$CA")" \
		"$(node_user_lines)"
	run "$SMOKE" get "$dir/badsni.kubeconfig" /api/v1/pods "spec.nodeName=$CLUSTER_NODE_NAME"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"code=1: "*"x509: certificate is valid for "*"kubernetes.default.svc"*", not not-in-the-certificate.example" ]]
}

@test "client: a bearer token from a tokenFile (relative path) authenticates as its service account" {
	dir=$BATS_TEST_TMPDIR
	wait_for -t 60 -i 0.5 kubectl get serviceaccount default -n "$TEST_NS" -o name
	kubectl create token default -n "$TEST_NS" --duration=10m >"$dir/token"
	ca_data=$(base64 -w0 <"$CA")
	write_kubeconfig "$dir/token.kubeconfig" "    certificate-authority-data: $ca_data" \
		"    tokenFile: token"
	run "$SMOKE" get "$dir/token.kubeconfig" "/api/v1/namespaces/$TEST_NS/secrets"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"code=403: "*"User \"system:serviceaccount:$TEST_NS:default\" cannot list resource \"secrets\""* ]]
}
