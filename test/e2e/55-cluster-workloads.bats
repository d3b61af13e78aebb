#!/usr/bin/env bats
# Workloads on a ckubelet node of the local cluster, driven with kubectl:
# deployments, jobs, configMap and secret volumes and env, service account
# tokens, events and graceful deletion.  kubectl exec needs the kubelet's
# streaming endpoints, which ckubelet does not serve yet: what runs inside a
# container is read with crictl on the node instead (kubectl logs: 56).  One ckubelet for the
# whole file (setup_file), registered anew: the Node is deleted before and
# after.

load helpers
load cluster

setup_file() {
	cluster_file_setup e2e-work
	start_cluster_node ""
	wait_for -t 60 -i 0.5 node_ready
}

teardown_file() {
	cleanup_node "$TEST_NS"
}

# A container that exits at once on SIGTERM (sleep as PID 1 ignores it).
PATIENT='trap "exit 0" TERM; while :; do sleep 1; done'

# app_pods APP: names of the pods labelled app=APP, one a line.
app_pods() {
	kubectl get pods -n "$TEST_NS" -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}

app_pod_count_is() { # APP N: N pods (terminating ones included); a failed query is no count
	local names
	names=$(app_pods "$1") || return 1
	[[ $(grep -c . <<<"$names") -eq $2 ]]
}

# app_running APP N: N pods, each Running on this node with an IP, none
# being deleted.
app_running() {
	kubectl get pods -n "$TEST_NS" -l "app=$1" -o json | jq -e --arg node "$CLUSTER_NODE_NAME" \
		--argjson n "$2" '(.items | length) == $n and all(.items[];
			.status.phase == "Running" and .spec.nodeName == $node and
			(.status.podIP // "") != "" and .metadata.deletionTimestamp == null)' >/dev/null
}

no_running_container() { # NS POD: crictl answers, with no running container of it
	query_empty crictl ps -q --state running --label "io.kubernetes.pod.namespace=$1" \
		--label "io.kubernetes.pod.name=$2"
}

@test "cluster workloads: a deployment of 3 runs 3 pods with IPs; scaling down and deleting remove pods and containers" {
	kubectl create deployment web -n "$TEST_NS" --image=localhost/busybox:1.35 --replicas=3 \
		-- sh -c "$PATIENT"
	wait_for -t 90 -i 1 app_running web 3
	kubectl get pods -n "$TEST_NS" -l app=web -o wide
	mapfile -t pods < <(app_pods web)
	[ "${#pods[@]}" -eq 3 ]
	for p in "${pods[@]}"; do
		wait_for -t 30 -i 0.5 kpod_ready "$TEST_NS" "$p"
		[[ $(kpod_field "$TEST_NS" "$p" '{.status.podIP}') =~ ^${E2E_POD_NET/./\\.}\.[0-9]+\.[0-9]+$ ]]
		[ "$(kpod_field "$TEST_NS" "$p" '{.status.podIPs[0].ip}')" = "$(kpod_field "$TEST_NS" "$p" '{.status.podIP}')" ]
		[ "$(kpod_field "$TEST_NS" "$p" '{.status.hostIP}')" = 127.0.0.1 ]
		[ -n "$(kpod_running_container "$TEST_NS" "$p" busybox)" ]
	done
	[ "$(kubectl get deployment web -n "$TEST_NS" -o jsonpath='{.status.readyReplicas}')" = 3 ]

	kubectl scale deployment web -n "$TEST_NS" --replicas=1
	wait_for -t 60 -i 0.5 app_pod_count_is web 1
	kept=$(app_pods web)
	[ -n "$kept" ]
	removed=0
	for p in "${pods[@]}"; do
		[[ $p == "$kept" ]] && continue
		removed=$((removed + 1))
		kpod_gone "$TEST_NS" "$p"
		wait_for -t 30 -i 0.5 no_running_container "$TEST_NS" "$p"
		wait_for -t 90 -i 1 kpod_runtime_empty "$TEST_NS" "$p"
	done
	[ "$removed" -eq 2 ]
	[ -n "$(kpod_running_container "$TEST_NS" "$kept" busybox)" ]

	kubectl delete deployment web -n "$TEST_NS"
	wait_for -t 60 -i 0.5 app_pod_count_is web 0
	wait_for -t 30 -i 0.5 no_running_container "$TEST_NS" "$kept"
	wait_for -t 90 -i 1 kpod_runtime_empty "$TEST_NS" "$kept"
}

@test "cluster workloads: once Ready, the pod's Ready conditions no longer carry the reason they had while starting" {
	bound_pod described 1 'sleep 3600'
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" described
	# kubectl describe would show "Ready True" with "ContainersNotReady".
	# One read (a failed one fails the test, as an assignment), then the checks.
	conditions=$(kubectl get pod -n "$TEST_NS" described -o json | jq -ec .status.conditions)
	echo "$conditions"
	[ "$(jq -r '.[] | select(.type == "Ready") | .status' <<<"$conditions")" = True ]
	[ "$(jq -r '.[] | select(.type == "Ready") | .reason // ""' <<<"$conditions")" = "" ]
	[ "$(jq -r '.[] | select(.type == "Ready") | .message // ""' <<<"$conditions")" = "" ]
	[ "$(jq -r '.[] | select(.type == "ContainersReady") | .status' <<<"$conditions")" = True ]
	[ "$(jq -r '.[] | select(.type == "ContainersReady") | .reason // ""' <<<"$conditions")" = "" ]
	[ "$(jq -r '.[] | select(.type == "ContainersReady") | .message // ""' <<<"$conditions")" = "" ]
}

job_complete() { # JOB
	[[ $(kubectl get job -n "$TEST_NS" "$1" \
		-o jsonpath='{.status.conditions[?(@.type=="Complete")].status}') == True ]]
}

@test "cluster workloads: a Job completes; its pod Succeeded" {
	kubectl create job one-shot -n "$TEST_NS" --image=localhost/busybox:1.35 -- sh -c 'exit 0'
	wait_for -t 90 -i 1 job_complete one-shot
	[ "$(kubectl get job one-shot -n "$TEST_NS" -o jsonpath='{.status.succeeded}')" = 1 ]
	pod=$(kubectl get pods -n "$TEST_NS" -l job-name=one-shot -o jsonpath='{.items[0].metadata.name}')
	[ -n "$pod" ]
	[ "$(kpod_field "$TEST_NS" "$pod" '{.status.phase}')" = Succeeded ]
	[ "$(kpod_field "$TEST_NS" "$pod" '{.status.containerStatuses[0].state.terminated.exitCode}')" = 0 ]
	[ "$(kpod_field "$TEST_NS" "$pod" '{.status.containerStatuses[0].state.terminated.reason}')" = Completed ]
}

file_in_container_is() { # CONTAINER PATH CONTENT
	[[ $(crictl exec "$1" cat "$2" 2>/dev/null) == "$3" ]]
}

@test "cluster workloads: a configMap volume follows kubectl patch; env from the configMap" {
	kubectl create configmap settings -n "$TEST_NS" --from-literal=greeting=hello
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: cm-reader, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  volumes: [{name: settings, configMap: {name: settings}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo "GREETING=\$GREETING"; $PATIENT']
	    env:
	    - name: GREETING
	      valueFrom: {configMapKeyRef: {name: settings, key: greeting}}
	    volumeMounts: [{name: settings, mountPath: /etc/settings}]
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" cm-reader Running
	ctr=$(kpod_running_container "$TEST_NS" cm-reader main)
	[ -n "$ctr" ]
	[ "$(crictl exec "$ctr" cat /etc/settings/greeting)" = hello ]
	wait_for -t 10 -i 0.5 eval 'crictl logs "$ctr" 2>&1 | grep -qx GREETING=hello'
	# The payload is swapped atomically: the key is a link into ..data.
	[ "$(crictl exec "$ctr" readlink /etc/settings/greeting)" = ..data/greeting ]

	kubectl patch configmap settings -n "$TEST_NS" --type merge -p '{"data":{"greeting":"bonjour"}}'
	# The kubelet resyncs each pod every minute (--sync-frequency).
	wait_for -t 120 -i 2 file_in_container_is "$ctr" /etc/settings/greeting bonjour
	# Same file on the node.
	uid=$(kpod_uid "$TEST_NS" cm-reader)
	[ "$(cat "$CKUBELET_ROOT/pods/$uid/volumes/kubernetes.io~configmap/settings/greeting")" = bonjour ]
	# The container was not restarted for it.
	[ "$(kpod_running_container "$TEST_NS" cm-reader main)" = "$ctr" ]
}

# env_of CTR: the container's environment, sorted, one NAME=VALUE a line.
env_of() {
	crictl exec "$1" env | sort
}

@test "cluster workloads: Service environment variables: the apiserver's always, the namespace's with enableServiceLinks" {
	kubectl create service clusterip shop-db -n "$TEST_NS" --tcp=5432:5432 --tcp=9187:9187
	kubectl create service clusterip plain -n "$TEST_NS" --tcp=80:8080
	kubectl create service clusterip headless -n "$TEST_NS" --clusterip=None --tcp=80:80
	api_ip=$(kubectl get service kubernetes -n default -o jsonpath='{.spec.clusterIP}')
	db_ip=$(kubectl get service shop-db -n "$TEST_NS" -o jsonpath='{.spec.clusterIP}')
	plain_ip=$(kubectl get service plain -n "$TEST_NS" -o jsonpath='{.spec.clusterIP}')
	[ -n "$api_ip" ]
	[ -n "$db_ip" ]
	[ -n "$plain_ip" ]
	for links in true false; do
		kubectl apply -f - <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: links-$links, namespace: $TEST_NS}
		spec:
		  nodeName: $CLUSTER_NODE_NAME
		  terminationGracePeriodSeconds: 1
		  enableServiceLinks: $links
		  containers:
		  - name: main
		    image: localhost/busybox:1.35
		    command: [sh, -c, '$PATIENT']
		    env: [{name: DB_URL, value: 'postgres://\$(SHOP_DB_SERVICE_HOST):\$(SHOP_DB_SERVICE_PORT)/x'}]
		YAML
	done
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" links-true Running
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" links-false Running

	ctr=$(kpod_running_container "$TEST_NS" links-true main)
	[ -n "$ctr" ]
	env=$(env_of "$ctr")
	echo "$env"
	# what client-go's in-cluster config reads
	grep -qx "KUBERNETES_SERVICE_HOST=$api_ip" <<<"$env"
	grep -qx "KUBERNETES_SERVICE_PORT=443" <<<"$env"
	grep -qx "KUBERNETES_SERVICE_PORT_HTTPS=443" <<<"$env"
	grep -qx "KUBERNETES_PORT=tcp://$api_ip:443" <<<"$env"
	grep -qx "KUBERNETES_PORT_443_TCP_ADDR=$api_ip" <<<"$env"
	# the namespace's Services, with docker-link variables for each port
	grep -qx "SHOP_DB_SERVICE_HOST=$db_ip" <<<"$env"
	grep -qx "SHOP_DB_SERVICE_PORT=5432" <<<"$env"
	grep -qx "SHOP_DB_SERVICE_PORT_5432_5432=5432" <<<"$env"
	grep -qx "SHOP_DB_SERVICE_PORT_9187_9187=9187" <<<"$env"
	grep -qx "SHOP_DB_PORT=tcp://$db_ip:5432" <<<"$env"
	grep -qx "SHOP_DB_PORT_9187_TCP=tcp://$db_ip:9187" <<<"$env"
	grep -qx "SHOP_DB_PORT_9187_TCP_PROTO=tcp" <<<"$env"
	grep -qx "SHOP_DB_PORT_9187_TCP_PORT=9187" <<<"$env"
	grep -qx "SHOP_DB_PORT_9187_TCP_ADDR=$db_ip" <<<"$env"
	grep -qx "PLAIN_SERVICE_HOST=$plain_ip" <<<"$env"
	grep -qx "PLAIN_PORT_80_TCP=tcp://$plain_ip:80" <<<"$env"
	# \$(VAR) in env sees them
	grep -qx "DB_URL=postgres://$db_ip:5432/x" <<<"$env"
	# a headless Service has no address to give
	[ "$(grep -c '^HEADLESS_' <<<"$env")" -eq 0 ]

	ctr=$(kpod_running_container "$TEST_NS" links-false main)
	[ -n "$ctr" ]
	env=$(env_of "$ctr")
	grep -qx "KUBERNETES_SERVICE_HOST=$api_ip" <<<"$env"
	grep -qx "KUBERNETES_SERVICE_PORT=443" <<<"$env"
	[ "$(grep -c '^SHOP_DB_\|^PLAIN_' <<<"$env")" -eq 0 ]
	# unresolved references stay as written (upstream's expansion)
	grep -qx 'DB_URL=postgres://$(SHOP_DB_SERVICE_HOST):$(SHOP_DB_SERVICE_PORT)/x' <<<"$env"
	kubectl delete pod links-true links-false -n "$TEST_NS" --wait=false
}

@test "cluster workloads: /etc/hosts of a pod from the apiserver names its IP, hostname and FQDN" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: named, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  hostname: db-0
	  subdomain: db
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sh, -c, '$PATIENT']}
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" named Running
	ip=$(kpod_field "$TEST_NS" named '{.status.podIP}')
	[ -n "$ip" ]
	ctr=$(kpod_running_container "$TEST_NS" named main)
	[ -n "$ctr" ]
	run crictl exec "$ctr" cat /etc/hosts
	[ "$status" -eq 0 ]
	[[ $output == "# Kubernetes-managed hosts file."$'\n'* ]]
	# the local cluster's node runs with the default --cluster-domain ""
	grep -qxF "$ip	db-0.db.$TEST_NS.svc.	db-0" <<<"$output"
	kubectl delete pod named -n "$TEST_NS" --wait=false
}

@test "cluster workloads: a secret as env and as files: private, on tmpfs, with defaultMode" {
	kubectl create secret generic creds -n "$TEST_NS" --from-literal=username=admin \
		--from-literal=password='p@ss w0rd'
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: secret-user, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  volumes: [{name: creds, secret: {secretName: creds, defaultMode: 0400}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo "USERNAME=\$USERNAME"; echo "SEC_password=\$SEC_password"; $PATIENT']
	    env:
	    - name: USERNAME
	      valueFrom: {secretKeyRef: {name: creds, key: username}}
	    envFrom: [{prefix: SEC_, secretRef: {name: creds}}]
	    volumeMounts: [{name: creds, mountPath: /etc/creds, readOnly: true}]
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" secret-user Running
	ctr=$(kpod_running_container "$TEST_NS" secret-user main)
	[ -n "$ctr" ]
	wait_for -t 10 -i 0.5 eval 'crictl logs "$ctr" 2>&1 | grep -q ^SEC_password='
	run crictl logs "$ctr"
	echo "$output"
	grep -qx 'USERNAME=admin' <<<"$output"
	grep -qx 'SEC_password=p@ss w0rd' <<<"$output"

	[ "$(crictl exec "$ctr" cat /etc/creds/password)" = 'p@ss w0rd' ]
	[ "$(crictl exec "$ctr" stat -L -c %a /etc/creds/password)" = 400 ]

	# On the node: a tmpfs of its own, under a pod directory closed to others.
	uid=$(kpod_uid "$TEST_NS" secret-user)
	dir=$CKUBELET_ROOT/pods/$uid/volumes/kubernetes.io~secret/creds
	[ "$(findmnt -n -o FSTYPE --mountpoint "$dir")" = tmpfs ]
	mode=$(stat -c %a "$CKUBELET_ROOT/pods/$uid")
	echo "pod dir mode $mode"
	[ "${mode: -1}" = 0 ]
	[ "$(stat -L -c %a "$dir/password")" = 400 ]
}

@test "cluster workloads: the projected service account token passes a TokenReview" {
	bound_pod token-user 1 'sleep 3600'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" token-user Running
	ctr=$(kpod_running_container "$TEST_NS" token-user main)
	[ -n "$ctr" ]
	sa=/var/run/secrets/kubernetes.io/serviceaccount
	[ "$(crictl exec "$ctr" cat "$sa/namespace")" = "$TEST_NS" ]
	[ "$(crictl exec "$ctr" cat "$sa/ca.crt")" = \
		"$(kubectl get configmap kube-root-ca.crt -n "$TEST_NS" -o jsonpath='{.data.ca\.crt}')" ]
	token=$(crictl exec "$ctr" cat "$sa/token")
	[ -n "$token" ]

	review=$(kubectl create -o json -f - <<-JSON
	{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "$token"}}
	JSON
	)
	jq .status <<<"$review"
	[ "$(jq -r .status.authenticated <<<"$review")" = true ]
	[ "$(jq -r .status.user.username <<<"$review")" = "system:serviceaccount:$TEST_NS:default" ]
	# Bound to the pod (TokenRequest with the pod as boundObjectRef).
	[ "$(jq -r '.status.user.extra["authentication.kubernetes.io/pod-name"][0]' <<<"$review")" = token-user ]
	[ "$(jq -r '.status.user.extra["authentication.kubernetes.io/node-name"][0]' <<<"$review")" = "$CLUSTER_NODE_NAME" ]
}

# event_reasons POD: reasons of the events about POD, one a line.
event_reasons() {
	kubectl get events -n "$TEST_NS" --field-selector "involvedObject.name=$1" \
		-o jsonpath='{range .items[*]}{.reason}{"\n"}{end}'
}

has_events() { # POD REASON...
	local pod=$1 reasons r
	shift
	reasons=$(event_reasons "$pod") || return 1
	for r in "$@"; do
		grep -qx "$r" <<<"$reasons" || return 1
	done
}

@test "cluster workloads: events: Scheduled by the scheduler; Pulled, Created, Started by the kubelet" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: eventful, namespace: $TEST_NS}
	spec:
	  terminationGracePeriodSeconds: 1
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" eventful Running
	wait_for -t 30 -i 1 has_events eventful Scheduled Pulled Created Started
	events=$(kubectl get events -n "$TEST_NS" --field-selector involvedObject.name=eventful -o json)
	jq -c '.items[] | {reason, message, source, reportingComponent, reportingInstance}' <<<"$events"
	started=$(jq -c '[.items[] | select(.reason == "Started")][0]' <<<"$events")
	[ "$(jq -r '.source.component // .reportingComponent' <<<"$started")" = kubelet ]
	[ "$(jq -r '.source.host // .reportingInstance' <<<"$started")" = "$CLUSTER_NODE_NAME" ]
	[ "$(jq -r .type <<<"$started")" = Normal ]
	[ "$(jq -r .involvedObject.fieldPath <<<"$started")" = 'spec.containers{main}' ]
	[ "$(jq -r .involvedObject.uid <<<"$started")" = "$(kpod_uid "$TEST_NS" eventful)" ]
	pulled=$(jq -r '[.items[] | select(.reason == "Pulled")][0].message' <<<"$events")
	[[ $pulled == *localhost/busybox:1.35* ]]
}

@test "cluster workloads: runtimeClassName: the RuntimeClass's handler runs the sandbox; one the runtime lacks is FailedCreatePodSandBox" {
	rc_ok=e2e-runc-$$ rc_bad=e2e-missing-$$
	kubectl apply -f - <<-YAML
	apiVersion: node.k8s.io/v1
	kind: RuntimeClass
	metadata: {name: $rc_ok}
	handler: runc
	---
	apiVersion: node.k8s.io/v1
	kind: RuntimeClass
	metadata: {name: $rc_bad}
	handler: no-such-handler
	YAML
	for rc in "$rc_ok" "$rc_bad"; do
		kubectl apply -f - <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: $rc, namespace: $TEST_NS}
		spec:
		  runtimeClassName: $rc
		  terminationGracePeriodSeconds: 1
		  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
		YAML
	done
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" "$rc_ok" Running
	run crictl inspectp "$(kpod_sandboxes "$TEST_NS" "$rc_ok")"
	[ "$(jq -r .status.runtimeHandler <<<"$output")" = runc ]
	wait_for -t 60 -i 1 has_events "$rc_bad" FailedCreatePodSandBox
	msg=$(kubectl get events -n "$TEST_NS" --field-selector "involvedObject.name=$rc_bad,reason=FailedCreatePodSandBox" -o jsonpath='{.items[0].message}')
	echo "$msg"
	[[ $msg == "Failed to create pod sandbox: "*no-such-handler* ]]
	[ "$(kpod_field "$TEST_NS" "$rc_bad" '{.status.phase}')" = Pending ]
	kubectl delete runtimeclass "$rc_ok" "$rc_bad" --wait=false
}

@test "cluster workloads: a pod with a ResourceClaim: not reserved for it, then its driver not registered: FailedPrepareDynamicResources, the pod waits" {
	dc=e2e-dc-$$
	kubectl apply -f - <<-YAML
	apiVersion: resource.k8s.io/v1
	kind: DeviceClass
	metadata: {name: $dc}
	spec: {}
	---
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaim
	metadata: {name: gpu-claim, namespace: $TEST_NS}
	spec:
	  devices:
	    requests: [{name: gpu, exactly: {deviceClassName: $dc}}]
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: claimer, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"], resources: {claims: [{name: gpu}]}}
	YAML
	prepare_failed_with() { # TEXT: a FailedPrepareDynamicResources event of claimer says it
		kubectl get events -n "$TEST_NS" --field-selector involvedObject.name=claimer,reason=FailedPrepareDynamicResources \
			-o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -qF "$1"
	}
	uid=$(kpod_uid "$TEST_NS" claimer)
	claim_uid=$(kubectl get resourceclaim -n "$TEST_NS" gpu-claim -o jsonpath='{.metadata.uid}')
	wait_for -t 60 -i 1 prepare_failed_with "Failed to prepare dynamic resources: prepare dynamic resources: pod claimer ($uid) is not allowed to use ResourceClaim gpu-claim ($claim_uid)"
	# as if a scheduler had allocated it from a driver's devices
	kubectl patch resourceclaim -n "$TEST_NS" gpu-claim --subresource=status --type=merge -p "{\"status\": {
		\"allocation\": {\"devices\": {\"results\": [{\"request\": \"gpu\", \"driver\": \"gpu.e2e.example.com\", \"pool\": \"pool-a\", \"device\": \"gpu-0\"}]}},
		\"reservedFor\": [{\"resource\": \"pods\", \"name\": \"claimer\", \"uid\": \"$uid\"}]}}"
	wait_for -t 60 -i 1 prepare_failed_with "prepare dynamic resources: DRA driver gpu.e2e.example.com is not registered"
	[ "$(kpod_field "$TEST_NS" claimer '{.status.phase}')" = Pending ]
	[ -z "$(kpod_sandboxes "$TEST_NS" claimer)" ]
	kubectl delete pod -n "$TEST_NS" claimer --wait=false
	kubectl delete resourceclaim -n "$TEST_NS" gpu-claim --wait=false
	kubectl delete deviceclass "$dc" --wait=false
}

@test "cluster workloads: a failing liveness probe: Unhealthy events, with the probe's output, and the container restarted" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: unhealthy, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, '$PATIENT']
	    livenessProbe:
	      exec: {command: [sh, -c, 'echo not well; exit 1']}
	      periodSeconds: 1
	      failureThreshold: 2
	YAML
	wait_for -t 60 -i 1 has_events unhealthy Unhealthy Killing
	events=$(kubectl get events -n "$TEST_NS" --field-selector involvedObject.name=unhealthy -o json)
	bad=$(jq -c '[.items[] | select(.reason == "Unhealthy")][0]' <<<"$events")
	echo "$bad"
	[ "$(jq -r .type <<<"$bad")" = Warning ]
	[ "$(jq -r .involvedObject.fieldPath <<<"$bad")" = 'spec.containers{main}' ]
	[[ $(jq -r .message <<<"$bad") == "Liveness probe failed: not well"* ]]
	wait_for -t 60 -i 1 eval '[[ $(kpod_field "$TEST_NS" unhealthy "{.status.containerStatuses[0].restartCount}") -ge 1 ]]'
}

@test "cluster workloads: a configMap volume of a missing configMap: FailedMount, then it starts once created" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: mount-fails, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 1
	  volumes: [{name: settings, configMap: {name: no-such-config}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, '$PATIENT']
	    volumeMounts: [{name: settings, mountPath: /etc/settings}]
	YAML
	wait_for -t 60 -i 1 has_events mount-fails FailedMount
	events=$(kubectl get events -n "$TEST_NS" --field-selector involvedObject.name=mount-fails -o json)
	failed=$(jq -c '[.items[] | select(.reason == "FailedMount")][0]' <<<"$events")
	echo "$failed"
	[ "$(jq -r .type <<<"$failed")" = Warning ]
	[ "$(jq -r '.source.component // .reportingComponent' <<<"$failed")" = kubelet ]
	[ "$(jq -r .involvedObject.uid <<<"$failed")" = "$(kpod_uid "$TEST_NS" mount-fails)" ]
	[[ $(jq -r .message <<<"$failed") == *no-such-config* ]]
	# nothing runs without the volume
	[ "$(kpod_field "$TEST_NS" mount-fails '{.status.phase}')" = Pending ]
	query_empty kpod_containers "$TEST_NS" mount-fails

	kubectl create configmap no-such-config -n "$TEST_NS" --from-literal=k=v
	wait_for -t 120 -i 1 kpod_phase_is "$TEST_NS" mount-fails Running
	ctr=$(kpod_running_container "$TEST_NS" mount-fails main)
	[ "$(crictl exec "$ctr" cat /etc/settings/k)" = v ]
}

@test "cluster workloads: kubectl delete waits out terminationGracePeriodSeconds=5, then the pod is gone" {
	bound_pod stubborn 5 'sleep 3600'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" stubborn Running
	ctr=$(kpod_running_container "$TEST_NS" stubborn main)
	[ -n "$ctr" ]
	t0=$EPOCHREALTIME
	kubectl delete pod stubborn -n "$TEST_NS" --wait=false
	wait_for -t 60 -i 0.2 kpod_gone "$TEST_NS" stubborn
	elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "gone from the API after ${elapsed}s"
	# sleep ignores SIGTERM: it ran until the grace period was over.
	awk -v e="$elapsed" 'BEGIN { exit !(e >= 4.5) }'
	wait_for -t 30 -i 0.5 no_running_container "$TEST_NS" stubborn
	wait_for -t 60 -i 1 kpod_runtime_empty "$TEST_NS" stubborn
	wait_for -t 20 -i 1 has_events stubborn Killing
}

@test "cluster workloads: a deleted pod held by a finalizer shows its terminal status" {
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: held, namespace: $TEST_NS, finalizers: [example.com/hold]}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 5
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, '$PATIENT']
	YAML
	wait_for -t 60 -i 0.5 kpod_ready "$TEST_NS" held
	kubectl delete pod held -n "$TEST_NS" --wait=false
	# stopped (exit 0 on SIGTERM): the last status the kubelet writes
	wait_for -t 30 -i 0.5 kpod_phase_is "$TEST_NS" held Succeeded
	[ "$(kpod_field "$TEST_NS" held '{.status.containerStatuses[0].state.terminated.exitCode}')" = 0 ]
	[ "$(kpod_field "$TEST_NS" held '{.status.conditions[?(@.type=="Ready")].status}')" = False ]
	wait_for -t 30 -i 0.5 kpod_runtime_empty "$TEST_NS" held
	kubectl patch pod held -n "$TEST_NS" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
	wait_for -t 30 -i 0.5 kpod_gone "$TEST_NS" held
}
