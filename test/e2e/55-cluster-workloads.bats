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

app_pod_count_is() { # APP N: N pods (terminating ones included)
	[[ $(app_pods "$1" | grep -c .) -eq $2 ]]
}

# app_running APP N: N pods, each Running on this node with an IP, none
# being deleted.
app_running() {
	kubectl get pods -n "$TEST_NS" -l "app=$1" -o json | jq -e --arg node "$CLUSTER_NODE_NAME" \
		--argjson n "$2" '(.items | length) == $n and all(.items[];
			.status.phase == "Running" and .spec.nodeName == $node and
			(.status.podIP // "") != "" and .metadata.deletionTimestamp == null)' >/dev/null
}

no_running_container() { # NS POD
	[[ -z $(crictl ps -q --state running --label "io.kubernetes.pod.namespace=$1" \
		--label "io.kubernetes.pod.name=$2") ]]
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
		[[ $(kpod_field "$TEST_NS" "$p" '{.status.podIP}') =~ ^10\.88\.[0-9]+\.[0-9]+$ ]]
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
	kubectl get pod -n "$TEST_NS" described -o jsonpath='{.status.conditions}'
	# kubectl describe would show "Ready True" with "ContainersNotReady".
	[ "$(kpod_field "$TEST_NS" described '{.status.conditions[?(@.type=="Ready")].reason}')" = "" ]
	[ "$(kpod_field "$TEST_NS" described '{.status.conditions[?(@.type=="Ready")].message}')" = "" ]
	[ "$(kpod_field "$TEST_NS" described '{.status.conditions[?(@.type=="ContainersReady")].reason}')" = "" ]
	[ "$(kpod_field "$TEST_NS" described '{.status.conditions[?(@.type=="ContainersReady")].message}')" = "" ]
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

@test "cluster workloads: kubectl delete waits out terminationGracePeriodSeconds=5, then the pod is gone" {
	bound_pod stubborn 5 'sleep 3600'
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" stubborn Running
	ctr=$(kpod_running_container "$TEST_NS" stubborn main)
	[ -n "$ctr" ]
	t0=$EPOCHREALTIME
	kubectl delete pod stubborn -n "$TEST_NS" --wait=false
	wait_for -t 15 -i 0.2 kpod_gone "$TEST_NS" stubborn
	elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "gone from the API after ${elapsed}s"
	# sleep ignores SIGTERM: it ran until the grace period was over.
	awk -v e="$elapsed" 'BEGIN { exit !(e >= 4.5) }'
	wait_for -t 10 -i 0.5 no_running_container "$TEST_NS" stubborn
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
