#!/usr/bin/env bats
# The container lifecycle on the real runtime: probes, hooks, termination,
# init and sidecar containers, active deadlines.  What a user sees: /pods
# (the API status), crictl, and files the containers write to a hostPath.

load helpers
load pods

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	HOSTDIR=$BATS_TEST_TMPDIR/host
	mkdir -p "$MANIFESTS" "$HOSTDIR"
	chmod 0777 "$HOSTDIR"
}

teardown() {
	cleanup_agent
}

ready_is() { # POD CONTAINER true|false
	[[ $(pod_field "$1" ".status.containerStatuses[] | select(.name == \"$2\") | .ready") == "$3" ]]
}
condition_is() { # POD TYPE STATUS
	[[ $(pod_field "$1" ".status.conditions[] | select(.type == \"$2\") | .status") == "$3" ]]
}
started_is() { # POD CONTAINER true|false
	[[ $(pod_field "$1" ".status.containerStatuses[] | select(.name == \"$2\") | .started") == "$3" ]]
}

@test "a readiness probe flips Ready when the file it checks appears" {
	cat >"$MANIFESTS/ready.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: ready}
	spec:
	  containers:
	  - name: web
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'mkdir -p /www && exec httpd -f -p 8080 -h /www']
	    readinessProbe:
	      httpGet: {path: /ready.html, port: http}
	      periodSeconds: 1
	      failureThreshold: 1
	    ports: [{name: http, containerPort: 8080}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is ready Running
	sleep 3
	ready_is ready web false
	condition_is ready Ready False
	condition_is ready ContainersReady False
	ctr=$(running_containers_of ready)
	crictl exec "$ctr" sh -c 'echo ok > /www/ready.html'
	wait_for -t 20 ready_is ready web true
	condition_is ready Ready True
	condition_is ready ContainersReady True
	crictl exec "$ctr" rm /www/ready.html
	wait_for -t 20 ready_is ready web false
	condition_is ready Ready False
	[ "$(restart_count ready web)" -eq 0 ]
}

@test "a failing liveness probe restarts the container with growing delays" {
	cat >"$MANIFESTS/live.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: live}
	spec:
	  terminationGracePeriodSeconds: 2 # sleep as PID 1 ignores SIGTERM
	  volumes: [{name: h, hostPath: {path: $HOSTDIR}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'date +%s >> /h/starts; exec sleep 3600']
	    volumeMounts: [{name: h, mountPath: /h}]
	    livenessProbe:
	      exec: {command: [cat, /tmp/healthy]}
	      periodSeconds: 1
	      failureThreshold: 1
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 150 restarts_at_least live main 4
	wait_for -t 10 eval '[[ $(count_lines <"$HOSTDIR/starts") -ge 5 ]]'
	mapfile -t t <"$HOSTDIR/starts"
	d1=$((t[1] - t[0])) d2=$((t[2] - t[1])) d3=$((t[3] - t[2])) d4=$((t[4] - t[3]))
	echo "starts: ${t[*]} delays: $d1 $d2 $d3 $d4"
	# Each run lives a probe period plus the 2 s grace.  As upstream's
	# doBackOff, a kill and its restart share one sync, so the backoff only
	# starts once an exited instance exists: 0, 0, then 10 s, then 20 s.
	[ "$d2" -le 8 ]
	[ "$d3" -ge $((d2 + 6)) ]
	[ "$d4" -ge $((d3 + 6)) ]
	[ "$(pod_field live '.status.containerStatuses[0].lastState.terminated.exitCode')" -eq 137 ]
}

@test "a startup probe holds back the liveness probe until it succeeds" {
	cat >"$MANIFESTS/slow.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: slow}
	spec:
	  terminationGracePeriodSeconds: 2
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    startupProbe:
	      exec: {command: [test, -f, /tmp/started]}
	      periodSeconds: 1
	      failureThreshold: 60
	    livenessProbe:
	      exec: {command: ["false"]}
	      periodSeconds: 1
	      failureThreshold: 1
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is slow Running
	sleep 6
	# liveness would have failed five times by now: it did not run
	[ "$(restart_count slow main)" -eq 0 ]
	started_is slow main false
	ready_is slow main false
	crictl exec "$(running_containers_of slow)" touch /tmp/started
	# startup succeeds, then the (always failing) liveness probe restarts it
	wait_for -t 30 restarts_at_least slow main 1
}

@test "preStop runs before the main process sees SIGTERM" {
	cat >"$MANIFESTS/stop.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: stop}
	spec:
	  terminationGracePeriodSeconds: 20
	  volumes: [{name: h, hostPath: {path: $HOSTDIR}}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "echo sigterm >> /h/log; exit 0" TERM; echo started >> /h/log; while true; do sleep 0.2; done']
	    volumeMounts: [{name: h, mountPath: /h}]
	    lifecycle:
	      preStop:
	        exec: {command: [sh, -c, 'echo prestop >> /h/log; sleep 1; echo prestop-done >> /h/log']}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is stop Running
	wait_for -t 10 grep -q started "$HOSTDIR/log"
	rm "$MANIFESTS/stop.yaml"
	wait_for -t 60 runtime_has_nothing_of stop
	run cat "$HOSTDIR/log"
	[ "$output" = "$(printf 'started\nprestop\nprestop-done\nsigterm')" ]
}

@test "a process that ignores SIGTERM is killed after the grace period" {
	# Both record each SIGTERM in a hostPath file.  polite exits on it, with a
	# grace period of 30 s that the kill must not wait out; stubborn carries on
	# (it writes a heartbeat every 0.2 s) until the SIGKILL at the end of its
	# grace period of 4 s.
	for name in stubborn polite; do
		grace=4 on_term="echo term >> /h/$name"
		[ $name = polite ] && grace=30 on_term="echo term >> /h/$name; exit 0"
		cat >"$MANIFESTS/$name.yaml" <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: $name}
		spec:
		  terminationGracePeriodSeconds: $grace
		  volumes: [{name: h, hostPath: {path: $HOSTDIR}}]
		  containers:
		  - name: main
		    image: localhost/busybox:1.35
		    command: [sh, -c, 'trap "$on_term" TERM; while true; do date +%s >> /h/$name.beat; sleep 0.2; done']
		    volumeMounts: [{name: h, mountPath: /h}]
		YAML
	done
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is stubborn Running
	wait_for -t 60 phase_is polite Running
	wait_for -t 10 test -s "$HOSTDIR/stubborn.beat"
	wait_for -t 10 test -s "$HOSTDIR/polite.beat"

	start=$SECONDS
	rm "$MANIFESTS/polite.yaml"
	wait_for -t 60 query_empty running_containers_of polite
	polite_s=$((SECONDS - start))
	start=$SECONDS
	stubborn_term=$(date +%s)
	rm "$MANIFESTS/stubborn.yaml"
	wait_for -t 60 query_empty running_containers_of stubborn
	stubborn_s=$((SECONDS - start))
	echo "polite: ${polite_s}s stubborn: ${stubborn_s}s; last stubborn beat $(tail -n 1 "$HOSTDIR/stubborn.beat"), removed at $stubborn_term"
	# polite got SIGTERM and exited on it, long before its 30 s grace was out
	[ "$(cat "$HOSTDIR/polite")" = term ]
	[ "$polite_s" -lt 25 ]
	# stubborn got SIGTERM, lived on through its grace period, then was killed
	[ "$(cat "$HOSTDIR/stubborn")" = term ]
	[ "$stubborn_s" -ge 4 ]
	[ $(($(tail -n 1 "$HOSTDIR/stubborn.beat") - stubborn_term)) -ge 3 ]
}

@test "init containers run in order, a failing one is retried, then the app starts" {
	cat >"$MANIFESTS/init.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: init}
	spec:
	  volumes: [{name: d, emptyDir: {}}]
	  initContainers:
	  - name: first
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo first >> /d/order']
	    volumeMounts: [{name: d, mountPath: /d}]
	  - name: flaky
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo flaky >> /d/order; n=$(grep -c flaky /d/order); [ "$n" -ge 2 ]']
	    volumeMounts: [{name: d, mountPath: /d}]
	  containers:
	  - name: app
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo app >> /d/order; cat /d/order; exec sleep 3600']
	    volumeMounts: [{name: d, mountPath: /d}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 90 phase_is init Running
	wait_for -t 20 running_is init app
	condition_is init Initialized True
	run crictl logs "$(running_containers_of init)"
	[ "$output" = "$(printf 'first\nflaky\nflaky\napp')" ]
	[ "$(pod_field init '.status.initContainerStatuses[0].name')" = first ]
	[ "$(pod_field init '.status.initContainerStatuses[0].state.terminated.reason')" = Completed ]
	[ "$(pod_field init '.status.initContainerStatuses[1].restartCount')" -eq 1 ]
	[ "$(pod_field init '.status.initContainerStatuses[1].state.terminated.exitCode')" -eq 0 ]
}

@test "a failing init container under restartPolicy Never fails the pod" {
	cat >"$MANIFESTS/initfail.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: initfail}
	spec:
	  restartPolicy: Never
	  initContainers: [{name: init, image: localhost/busybox:1.35, command: [sh, -c, "exit 7"]}]
	  containers: [{name: app, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is initfail Failed
	condition_is initfail Initialized False
	[ "$(pod_field initfail '.status.initContainerStatuses[0].state.terminated.exitCode')" -eq 7 ]
	query_empty containers_of initfail app
}

@test "a sidecar runs alongside the app, the Job-style pod completes, the sidecar stops after it" {
	cat >"$MANIFESTS/job.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: job}
	spec:
	  restartPolicy: Never
	  volumes: [{name: h, hostPath: {path: $HOSTDIR}}]
	  initContainers:
	  - name: side
	    image: localhost/busybox:1.35
	    restartPolicy: Always
	    command: [sh, -c, 'trap "echo side-term >> /h/log; exit 0" TERM; echo side-up >> /h/log; while true; do sleep 0.2; done']
	    volumeMounts: [{name: h, mountPath: /h}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'grep -q side-up /h/log && echo main-saw-side >> /h/log; sleep 3; echo main-done >> /h/log']
	    volumeMounts: [{name: h, mountPath: /h}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 90 phase_is job Succeeded
	wait_for -t 30 grep -q side-term "$HOSTDIR/log"
	run cat "$HOSTDIR/log"
	[ "$output" = "$(printf 'side-up\nmain-saw-side\nmain-done\nside-term')" ]
	[ "$(pod_field job '.status.containerStatuses[0].state.terminated.reason')" = Completed ]
}

@test "at deletion, the sidecar is stopped after the app container" {
	cat >"$MANIFESTS/svc.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: svc}
	spec:
	  volumes: [{name: h, hostPath: {path: $HOSTDIR}}]
	  initContainers:
	  - name: side
	    image: localhost/busybox:1.35
	    restartPolicy: Always
	    command: [sh, -c, 'trap "echo side-term >> /h/log; exit 0" TERM; while true; do sleep 0.2; done']
	    volumeMounts: [{name: h, mountPath: /h}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'trap "sleep 1; echo main-term >> /h/log; exit 0" TERM; while true; do sleep 0.2; done']
	    volumeMounts: [{name: h, mountPath: /h}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is svc Running
	wait_for -t 30 eval '[[ $(running_containers_of svc | count_lines) -eq 2 ]]'
	rm "$MANIFESTS/svc.yaml"
	wait_for -t 60 runtime_has_nothing_of svc
	run cat "$HOSTDIR/log"
	[ "$output" = "$(printf 'main-term\nside-term')" ]
}

@test "terminationMessagePath and FallbackToLogsOnError fill the terminated message" {
	cat >"$MANIFESTS/msg.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: msg}
	spec:
	  restartPolicy: Never
	  containers:
	  - name: file
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo -n "goodbye from file" > /dev/termination-log; exit 3']
	  - name: custom
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo -n custom-path > /tmp/why; exit 0']
	    terminationMessagePath: /tmp/why
	  - name: logs
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo "last words in the log"; exit 2']
	    terminationMessagePolicy: FallbackToLogsOnError
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is msg Failed
	terminated() { pod_field msg ".status.containerStatuses[] | select(.name == \"$1\") | .state.terminated.$2"; }
	[ "$(terminated file message)" = "goodbye from file" ]
	[ "$(terminated file exitCode)" -eq 3 ]
	[ "$(terminated file reason)" = Error ]
	[ "$(terminated custom message)" = custom-path ]
	[ "$(terminated custom reason)" = Completed ]
	[ "$(terminated logs message)" = "last words in the log" ]
	[[ $(terminated file finishedAt) == 20*Z ]]
	[[ $(terminated file startedAt) == 20*Z ]]
}

@test "a container over its memory limit is OOMKilled" {
	cat >"$MANIFESTS/oom.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: oom}
	spec:
	  restartPolicy: Never
	  containers:
	  - name: hog
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo ${#x}']
	    resources: {limits: {memory: 20Mi}}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is oom Failed
	[ "$(pod_field oom '.status.containerStatuses[0].state.terminated.reason')" = OOMKilled ]
	[ "$(pod_field oom '.status.containerStatuses[0].state.terminated.exitCode')" -eq 137 ]
}

@test "activeDeadlineSeconds fails the pod with DeadlineExceeded and stops it" {
	cat >"$MANIFESTS/deadline.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: deadline}
	spec:
	  activeDeadlineSeconds: 20
	  terminationGracePeriodSeconds: 2
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	start_agent "$MANIFESTS"
	# 20 s: long enough to be seen Running first, also in the VM suite's
	# emulated guest (5 s passed there before the pod started)
	wait_for -t 60 phase_is deadline Running
	wait_for -t 40 phase_is deadline Failed
	[ "$(pod_field deadline .status.reason)" = DeadlineExceeded ]
	[ "$(pod_field deadline .status.message)" = "Pod was active on the node longer than the specified deadline" ]
	wait_for -t 30 query_empty running_containers_of deadline
	sleep 3
	query_empty running_containers_of deadline
}

@test "postStart runs right after start; a failing postStart kills the container" {
	cat >"$MANIFESTS/hooks.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: hooks}
	spec:
	  volumes: [{name: h, hostPath: {path: $HOSTDIR}}]
	  containers:
	  - name: good
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    volumeMounts: [{name: h, mountPath: /h}]
	    lifecycle:
	      postStart: {exec: {command: [sh, -c, 'echo poststart > /h/poststart']}}
	  - name: bad
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    lifecycle:
	      postStart: {exec: {command: [sh, -c, 'exit 1']}}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 running_is hooks good
	[ "$(cat "$HOSTDIR/poststart")" = poststart ]
	wait_for -t 60 restarts_at_least hooks bad 1
	[ "$(restart_count hooks good)" -eq 0 ]
}

# ContainerRestartRules (beta, on by default in 1.35): a container's own
# restartPolicy and restartPolicyRules over the pod's
@test "a container's own restartPolicy and restartPolicyRules decide its restarts" {
	cat >"$MANIFESTS/rules.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: rules}
	spec:
	  restartPolicy: Never
	  volumes: [{name: host, hostPath: {path: $HOSTDIR}}]
	  containers:
	  - name: retry # Never, but exit code 42 restarts it
	    image: localhost/busybox:1.35
	    command: [sh, -c, "if [ -e /host/retry ]; then exit 0; fi; touch /host/retry; exit 42"]
	    restartPolicy: Never
	    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]
	    volumeMounts: [{name: host, mountPath: /host}]
	  - name: flaky # OnFailure in a Never pod
	    image: localhost/busybox:1.35
	    command: [sh, -c, "if [ -e /host/flaky ]; then exit 0; fi; touch /host/flaky; exit 3"]
	    restartPolicy: OnFailure
	    volumeMounts: [{name: host, mountPath: /host}]
	YAML
	cat >"$MANIFESTS/once.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: once}
	spec:
	  restartPolicy: Always
	  containers:
	  - name: once # Never in an Always pod
	    image: localhost/busybox:1.35
	    command: [sh, -c, "exit 5"]
	    restartPolicy: Never
	YAML
	start_agent "$MANIFESTS"
	# the first restarts wait out the crash-loop back-off (10 s)
	wait_for -t 90 phase_is rules Succeeded
	[ "$(restart_count rules retry)" -eq 1 ]
	[ "$(restart_count rules flaky)" -eq 1 ]
	# (the first runs' exit codes, 42 and 3, are not asserted: the dead
	# instance before the last is pruned at once, and lastState with it)
	[ "$(pod_field rules '.status.containerStatuses[] | select(.name == "retry") | .state.terminated.exitCode')" -eq 0 ]
	[ "$(pod_field rules '.status.containerStatuses[] | select(.name == "flaky") | .state.terminated.exitCode')" -eq 0 ]
	wait_for -t 60 phase_is once Failed
	sleep 12 # longer than the back-off: a restart would have happened
	[ "$(restart_count once once)" -eq 0 ]
	[ "$(containers_of once once | count_lines)" -eq 1 ]
	[ "$(pod_field once '.status.containerStatuses[0].state.terminated.exitCode')" -eq 5 ]
}
