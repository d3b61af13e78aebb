#!/usr/bin/env bats
# Static pods on the real containerd: what a user sees through the read-only
# port (/pods) and through crictl.

load helpers
load pods

setup_file() {
	runtime_up
}

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	mkdir -p "$MANIFESTS"
}

teardown() {
	cleanup_agent
}

@test "two containers share an emptyDir and serve it on the pod IP" {
	cat >"$MANIFESTS/web.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: web}
	spec:
	  volumes: [{name: html, emptyDir: {}}]
	  containers:
	  - name: server
	    image: localhost/busybox:1.35
	    command: [httpd, -f, -p, "8080", -h, /www]
	    ports: [{containerPort: 8080}]
	    volumeMounts: [{name: html, mountPath: /www}]
	  - name: writer
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo "written by $(POD_NAME)" > /www/index.html; exec sleep 3600']
	    env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
	    volumeMounts: [{name: html, mountPath: /www}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is web Running
	ip=$(pod_ip web)
	[[ $ip == "$E2E_POD_NET".* ]]
	wait_for -t 20 curl -sf --max-time 2 "http://$ip:8080/index.html"
	run curl -sf --max-time 2 "http://$ip:8080/index.html"
	[ "$status" -eq 0 ]
	[ "$output" = "written by web-e2e-node" ]
	# one sandbox, two running containers, the upstream labels on them
	[ "$(sandboxes_of web | count_lines)" -eq 1 ]
	[ "$(running_containers_of web | count_lines)" -eq 2 ]
	uid=$(pod_uid web)
	[[ $uid =~ ^[0-9a-f]{32}$ ]]
	run crictl inspectp "$(sandboxes_of web)"
	[ "$(jq -r '.status.labels["io.kubernetes.pod.uid"]' <<<"$output")" = "$uid" ]
	[ "$(jq -r '.status.labels["io.kubernetes.pod.namespace"]' <<<"$output")" = default ]
	# CRI log path as upstream: /var/log/pods/<ns>_<name>_<uid>/<container>/<restart>.log
	[ -f "/var/log/pods/default_web-e2e-node_${uid}/server/0.log" ]
	# the pod cgroup is a BestEffort one under the configured root
	[ -d "$(e2e_cgroup_path "kubepods/besteffort/pod${uid}" cpu)" ]
	[ "$(pod_field web .status.qosClass)" = BestEffort ]
}

@test "restartPolicy Never: exit 0 Succeeded, exit 1 Failed, never restarted" {
	for rc in 0 1; do
		cat >"$MANIFESTS/never$rc.yaml" <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: never$rc}
		spec:
		  restartPolicy: Never
		  containers: [{name: main, image: localhost/busybox:1.35, command: [sh, -c, "sleep 1; exit $rc"]}]
		YAML
	done
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is never0 Succeeded
	wait_for -t 60 phase_is never1 Failed
	[ "$(restart_count never0 main)" -eq 0 ]
	[ "$(restart_count never1 main)" -eq 0 ]
	[ "$(pod_field never1 '.status.containerStatuses[0].state.terminated.exitCode')" -eq 1 ]
	[ "$(pod_field never1 '.status.containerStatuses[0].state.terminated.reason')" = Error ]
	[ "$(pod_field never0 '.status.containerStatuses[0].state.terminated.reason')" = Completed ]
	# a finished pod's sandbox is stopped
	wait_for -t 20 query_empty ready_sandboxes_of never0
	sleep 3
	[ "$(containers_of never1 main | count_lines)" -eq 1 ]
}

@test "restartPolicy OnFailure: exit 0 Succeeded; exit 1 restarted" {
	cat >"$MANIFESTS/ok.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: ok}
	spec:
	  restartPolicy: OnFailure
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sh, -c, "sleep 1; exit 0"]}]
	YAML
	cat >"$MANIFESTS/bad.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: bad}
	spec:
	  restartPolicy: OnFailure
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sh, -c, "exit 3"]}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is ok Succeeded
	[ "$(restart_count ok main)" -eq 0 ]
	wait_for -t 60 restarts_at_least bad main 1
	[ "$(pod_field bad '.status.containerStatuses[0].lastState.terminated.exitCode')" -eq 3 ]
	phase=$(pod_phase bad)
	[[ $phase == Running || $phase == Pending ]]
}

@test "restartPolicy Always: a crash restarts at once, then backs off 10 s, then 20 s" {
	# Each run appends its start time to a file in an emptyDir (which lives as
	# long as the pod), so the delays survive the pruning of dead containers.
	cat >"$MANIFESTS/crash.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: crash}
	spec:
	  volumes: [{name: data, emptyDir: {}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, "date +%s >> /data/starts; exit 1"]
	    volumeMounts: [{name: data, mountPath: /data}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 120 restarts_at_least crash main 3
	[ "$(pod_phase crash)" = Running ]
	run pod_field crash '.status.containerStatuses[0].lastState.terminated.exitCode'
	[ "$output" -eq 1 ]
	starts=$CKUBELET_ROOT/pods/$(pod_uid crash)/volumes/kubernetes.io~empty-dir/data/starts
	wait_for -t 10 eval '[[ $(count_lines <"$starts") -ge 4 ]]'
	mapfile -t t <"$starts"
	d1=$((t[1] - t[0])) d2=$((t[2] - t[1])) d3=$((t[3] - t[2]))
	echo "starts: ${t[*]} delays: $d1 s, $d2 s, $d3 s"
	# upstream: the first failure restarts at once, then 10 s doubling.  The
	# lower bounds are the backoff; the upper ones only tell each step from
	# the next (at once < 10 s < 20 s < 40 s), with room for a busy machine.
	[ "$d1" -lt 9 ]
	[ "$d2" -ge 9 ]
	[ "$d2" -lt 19 ]
	[ "$d3" -ge 19 ]
	[ "$d3" -lt 39 ]
	# while it waits, the status says why
	wait_for -t 30 waiting_reason_is crash main CrashLoopBackOff
	[[ $(waiting_message crash main) == "back-off "*"restarting failed container=main pod=crash-e2e-node_default("*")" ]]
	# the CRI log of the latest run is where upstream puts it
	[ -f "/var/log/pods/default_crash-e2e-node_$(pod_uid crash)/main/3.log" ]
}

# app.yaml: a pod whose container appends "started-V" to $1/log, and on
# SIGTERM "term-V", then after 4 s "stopped-V" before it exits.
write_logging_app() { # DIR V
	cat >"$MANIFESTS/app.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: app}
	spec:
	  volumes: [{name: data, hostPath: {path: "$1", type: Directory}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    env: [{name: V, value: "$2"}]
	    volumeMounts: [{name: data, mountPath: /data}]
	    command: [sh, -c, 'echo started-\$V >>/data/log; trap "echo term-\$V >>/data/log; sleep 4; echo stopped-\$V >>/data/log; exit 0" TERM; while true; do sleep 1; done']
	YAML
}

@test "a changed manifest replaces the pod once the old one stopped; a removed manifest removes it" {
	data=$BATS_TEST_TMPDIR/data
	mkdir -p "$data"
	write_logging_app "$data" 1
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is app Running
	old_uid=$(pod_uid app)
	old_ctr=$(running_containers_of app)
	write_logging_app "$data" 2
	wait_for -t 60 eval '[[ $(pod_uid app) == *[a-z0-9]* && $(pod_uid app) != *"$old_uid"* ]]'
	wait_for -t 60 phase_is app Running
	new_ctr=$(running_containers_of app)
	[ -n "$new_ctr" ]
	[ "$new_ctr" != "$old_ctr" ]
	run crictl inspect "$new_ctr"
	[ "$(jq -r '.status.labels["io.kubernetes.pod.uid"]' <<<"$output")" = "$(pod_uid app)" ]
	# upstream's order for static pods of one name: the new pod started
	# after the old one stopped, its 4 s of cleanup included
	cat "$data/log"
	[ "$(cat "$data/log")" = "$(printf 'started-1\nterm-1\nstopped-1\nstarted-2')" ]
	# the old pod's containers are gone
	wait_for -t 30 query_empty crictl ps -a -q --label "io.kubernetes.pod.uid=$old_uid"
	rm "$MANIFESTS/app.yaml"
	wait_for -t 60 pod_absent app
	wait_for -t 60 runtime_has_nothing_of app
	[ ! -e "$CKUBELET_ROOT/pods/$old_uid" ]
}

@test "a manifest removed and put back while its pod stops: the pod starts again, restart count 1" {
	data=$BATS_TEST_TMPDIR/data
	mkdir -p "$data"
	write_logging_app "$data" 1
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is app Running
	uid=$(pod_uid app)
	mv "$MANIFESTS/app.yaml" "$BATS_TEST_TMPDIR/app.yaml"
	# the pod is told to stop: the manifest comes back (the same pod, the
	# same UID) before it stopped
	wait_for -t 30 grep -q term-1 "$data/log"
	mv "$BATS_TEST_TMPDIR/app.yaml" "$MANIFESTS/app.yaml"
	wait_for -t 60 eval '[[ $(restart_count app main) == 1 ]] && running_is app main'
	[ "$(pod_uid app)" = "$uid" ]
	[ "$(cat "$data/log")" = "$(printf 'started-1\nterm-1\nstopped-1\nstarted-1')" ]
	# what ran before is the container's last state
	[ "$(pod_field app '.status.containerStatuses[0].lastState.terminated.exitCode')" = 0 ]
}

@test "a bad manifest is reported with its file and field; the good pods run" {
	cat >"$MANIFESTS/good.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: good}
	spec:
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	cat >"$MANIFESTS/noimage.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: noimage}
	spec:
	  containers: [{name: main, command: [sleep, "3600"]}]
	YAML
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: broken\nspec: [\n' >"$MANIFESTS/broken.yaml"
	cat >"$MANIFESTS/dup.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: dup}
	spec:
	  containers:
	  - {name: a, image: localhost/busybox:1.35}
	  - {name: a, image: localhost/busybox:1.35}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is good Running
	wait_for -t 10 grep -q "noimage.yaml.*spec.containers\[0\].image: Required value" "$CKUBELET_LOG"
	grep -q 'broken.yaml.*line' "$CKUBELET_LOG"
	grep -q 'dup.yaml.*spec.containers\[1\].name: Duplicate value' "$CKUBELET_LOG"
	pod_absent noimage
	pod_absent broken
	pod_absent dup
	query_empty sandboxes_of noimage
	# breaking the good file later keeps its pod running
	ctr=$(running_containers_of good)
	[ -n "$ctr" ]
	echo 'this: is: not: yaml' >"$MANIFESTS/good.yaml"
	sleep 5
	[ "$(running_containers_of good)" = "$ctr" ]
	[ "$(pod_phase good)" = Running ]
}

@test "kill -9 of the agent and a restart adopt the running pods" {
	cat >"$MANIFESTS/keep.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: keep}
	spec:
	  containers:
	  - {name: a, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	  - {name: b, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is keep Running
	wait_for -t 30 eval '[[ $(running_containers_of keep | count_lines) -eq 2 ]]'
	sandbox=$(sandboxes_of keep)
	ctrs=$(running_containers_of keep | sort)
	kill_ckubelet KILL
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is keep Running
	sleep 8 # several relists and housekeeping passes
	[ "$(sandboxes_of keep)" = "$sandbox" ]
	[ "$(running_containers_of keep | sort)" = "$ctrs" ]
	[ "$(containers_of keep | count_lines)" -eq 2 ]
	[ "$(restart_count keep a)" -eq 0 ]
	[ "$(restart_count keep b)" -eq 0 ]
}

@test "housekeeping removes what is left of a pod nobody wants: its cgroup, its directory" {
	sleeper_yaml=$'apiVersion: v1\nkind: Pod\nmetadata: {name: live}\nspec:\n  containers:\n  - {name: a, image: localhost/busybox:1.35, command: [sleep, "3600"]}\n'
	printf '%s' "$sleeper_yaml" >"$MANIFESTS/live.yaml"
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is live Running
	live_uid=$(pod_uid live)
	# a pod cgroup in every hierarchy the agent manages (each v1 controller,
	# or the v2 one), and a pod directory, of no pod
	orphan=0badc0de-0000-4000-8000-00000000cafe
	mapfile -t dirs < <(e2e_cgroup_dirs "kubepods/besteffort/pod$orphan")
	[ "${#dirs[@]}" -gt 0 ]
	for d in "${dirs[@]}"; do mkdir "$d"; done
	mkdir -p "$CKUBELET_ROOT/pods/0badc0de-dir-only/volumes"
	all_gone() {
		local d
		for d in "${dirs[@]}"; do [[ ! -e $d ]] || return 1; done
		[[ ! -e $CKUBELET_ROOT/pods/0badc0de-dir-only ]]
	}
	wait_for -t 30 all_gone
	# the running pod keeps its cgroup, its directory and its container
	[ -d "$CKUBELET_ROOT/pods/$live_uid" ]
	for d in $(e2e_cgroup_dirs "kubepods/besteffort/pod$live_uid"); do [ -d "$d" ]; done
	[ "$(running_containers_of live | count_lines)" -eq 1 ]
}

@test "housekeeping: a pod whose manifest went while the agent was stopped is removed at its start" {
	for name in gone kept; do
		cat >"$MANIFESTS/$name.yaml" <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: $name}
		spec:
		  terminationGracePeriodSeconds: 2
		  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
		YAML
	done
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is gone Running
	wait_for -t 60 phase_is kept Running
	gone_uid=$(pod_uid gone)
	[ -d "$CKUBELET_ROOT/pods/$gone_uid" ]
	kept_ctr=$(running_containers_of kept)
	[ -n "$kept_ctr" ]
	stop_ckubelet
	rm "$MANIFESTS/gone.yaml"
	# nobody stops it meanwhile
	[ -n "$(running_containers_of gone)" ]
	start_agent "$MANIFESTS"
	# an orphan now: killed and removed, with its directory; the other pod adopted
	wait_for -t 60 runtime_has_nothing_of gone
	wait_for -t 30 test ! -e "$CKUBELET_ROOT/pods/$gone_uid"
	pod_absent gone
	[ "$(running_containers_of kept)" = "$kept_ctr" ]
	[ "$(restart_count kept main)" -eq 0 ]
}

@test "DNS, hostname and env expansion reach the container" {
	cat >"$MANIFESTS/dns.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: dns, namespace: team}
	spec:
	  hostname: box
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo "$(GREETING) from $(NS)"; exec sleep 3600']
	    env:
	    - {name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
	    - {name: GREETING, value: "hello $(NS)"}
	YAML
	start_agent "$MANIFESTS" --cluster-dns=10.96.0.10 --cluster-domain=cluster.local
	wait_for -t 60 eval '[[ $(pod_field dns .metadata.namespace) == team ]]'
	wait_for -t 60 eval '[[ $(pod_field dns .status.phase) == Running ]]'
	ctr=$(crictl ps -q --label io.kubernetes.pod.name=dns-e2e-node)
	run crictl exec "$ctr" cat /etc/resolv.conf
	[[ $output == *"nameserver 10.96.0.10"* ]]
	[[ $output == *"search team.svc.cluster.local svc.cluster.local cluster.local"* ]]
	[[ $output == *"options ndots:5"* ]]
	run crictl exec "$ctr" hostname
	[ "$output" = box ]
	run crictl logs "$ctr"
	[ "$output" = "hello team from team" ]
}
