#!/usr/bin/env bats
# Pod spec features a user relies on, checked on the real runtime: admission,
# host namespaces, volumes, ports, resources, security context.

load helpers
load pods

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	mkdir -p "$MANIFESTS"
}

teardown() {
	cleanup_agent
}

sleeper() { # NAME [EXTRA-SPEC-YAML]
	cat >"$MANIFESTS/$1.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: $1}
	spec:
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	$2
	YAML
}

# A static pod is critical (upstream IsCriticalPod): one that does not fit
# has the pods it may preempt (lower priority) preempted for it; with none
# it is refused as upstream refuses it, UnexpectedAdmissionError and the
# preemption's words naming what it lacks (a pod from the apiserver gets
# OutOfpods, OutOfcpu...: test_admission, 50-cluster-node).
PREEMPT_NONE="Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: "

@test "admission: a static pod over --max-pods, with none to preempt, is Failed with UnexpectedAdmissionError; the others run" {
	sleeper a
	start_agent "$MANIFESTS" --max-pods=1
	wait_for -t 60 phase_is a Running
	sleeper b
	wait_for -t 30 phase_is b Failed
	[ "$(pod_field b .status.reason)" = UnexpectedAdmissionError ]
	[ "$(pod_field b .status.message)" = "${PREEMPT_NONE}[(res: pods, q: 1), ]" ]
	query_empty sandboxes_of b
	[ "$(pod_phase a)" = Running ]
}

@test "admission: a static pod requesting more cpu than allocatable is Failed with UnexpectedAdmissionError" {
	cat >"$MANIFESTS/big.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: big}
	spec:
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"], resources: {requests: {cpu: "64"}}}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 30 phase_is big Failed
	[ "$(pod_field big .status.reason)" = UnexpectedAdmissionError ]
	[[ $(pod_field big .status.message) == "${PREEMPT_NONE}[(res: cpu, q: "* ]]
	query_empty sandboxes_of big
}

@test "admission: static pods asking for more ephemeral-storage or huge pages than the node has are Failed, the shortfall named" {
	# one page more than the node has of 2Mi (none on most hosts)
	nr=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null || echo 0)
	cat >"$MANIFESTS/huge.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: huge}
	spec:
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"], resources: {limits: {hugepages-2Mi: $(((nr + 1) * 2))Mi, memory: 64Mi}}}
	YAML
	cat >"$MANIFESTS/small.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: small}
	spec:
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"], resources: {requests: {ephemeral-storage: 1Mi}}}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is small Running
	# after small (critical too: never preempted for it)
	cat >"$MANIFESTS/disk.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: disk}
	spec:
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"], resources: {requests: {ephemeral-storage: 100Ti}}}
	YAML
	wait_for -t 30 phase_is disk Failed
	[ "$(pod_field disk .status.reason)" = UnexpectedAdmissionError ]
	[[ $(pod_field disk .status.message) == "${PREEMPT_NONE}[(res: ephemeral-storage, q: "* ]]
	wait_for -t 30 phase_is huge Failed
	[ "$(pod_field huge .status.reason)" = UnexpectedAdmissionError ]
	[ "$(pod_field huge .status.message)" = "${PREEMPT_NONE}[(res: hugepages-2Mi, q: 2097152), ]" ]
	query_empty sandboxes_of disk
	query_empty sandboxes_of huge
}

@test "spec.overhead: the pod cgroup holds the containers' limits and the overhead; the sandbox is given the overhead" {
	cat >"$MANIFESTS/ovh.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: ovh}
	spec:
	  overhead: {cpu: 100m, memory: 32Mi}
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    resources:
	      limits: {cpu: 250m, memory: 64Mi}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is ovh Running
	uid=$(pod_uid ovh)
	pod_cg=$(e2e_cgroup_path "kubepods/pod$uid" memory)
	if e2e_cgroup_v2; then
		[ "$(cat "$pod_cg/memory.max")" -eq $((96 * 1024 * 1024)) ]
		[ "$(cat "$pod_cg/cpu.max")" = "35000 100000" ]
	else
		[ "$(cat "$pod_cg/memory.limit_in_bytes")" -eq $((96 * 1024 * 1024)) ]
		[ "$(cat "$(e2e_cgroup_path "kubepods/pod$uid" cpu)/cpu.cfs_quota_us")" -eq 35000 ]
	fi
	# the container keeps its own limits
	ctr=$(running_containers_of ovh)
	if [[ ${CK_E2E_RUNTIME:-containerd} == docker ]]; then
		[ "$(docker inspect -f '{{.HostConfig.Memory}}' "$ctr")" -eq $((64 * 1024 * 1024)) ]
		return 0
	fi
	run crictl inspect "$ctr"
	[ "$(jq -r '.info.runtimeSpec.linux.resources.memory.limit' <<<"$output")" -eq $((64 * 1024 * 1024)) ]
	# containerd keeps the sandbox's config: its overhead as sent
	run crictl inspectp "$(sandboxes_of ovh)"
	echo "$output" | jq '.info.config.linux.overhead' >&2
	[ "$(jq -r '.info.config.linux.overhead.memory_limit_in_bytes' <<<"$output")" -eq $((32 * 1024 * 1024)) ]
	[ "$(jq -r '.info.config.linux.overhead.cpu_quota' <<<"$output")" -eq 10000 ]
}

@test "admission: a critical pod over --max-pods preempts a lower-priority pod: Failed with Preempting and a DisruptionTarget; it runs" {
	for name in low-a low-b; do
		cat >"$MANIFESTS/$name.yaml" <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: $name}
		spec:
		  priority: 0
		  terminationGracePeriodSeconds: 1
		  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
		YAML
	done
	start_agent "$MANIFESTS" --max-pods=2
	wait_for -t 60 phase_is low-a Running
	wait_for -t 60 phase_is low-b Running
	# a static pod is critical (upstream IsCriticalPod); its priority is
	# above theirs, so they may be preempted for it
	cat >"$MANIFESTS/high.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: high}
	spec:
	  priority: 1000
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	wait_for -t 60 phase_is high Running
	preempted=""
	for name in low-a low-b; do
		[[ $(pod_phase "$name") == Failed ]] && preempted="$preempted $name"
	done
	echo "preempted:$preempted"
	[ "$(wc -w <<<"$preempted")" -eq 1 ]
	victim=${preempted# }
	[ "$(pod_field "$victim" .status.reason)" = Preempting ]
	[ "$(pod_field "$victim" .status.message)" = "Preempted in order to admit critical pod" ]
	[ "$(pod_field "$victim" '.status.conditions[] | select(.type == "DisruptionTarget") | "\(.status) \(.reason) \(.message)"')" = "True TerminationByKubelet Pod was preempted by Kubelet to accommodate a critical pod." ]
	wait_for -t 30 query_empty running_containers_of "$victim"
	run curl -sf "http://127.0.0.1:$CKUBELET_READ_ONLY_PORT/metrics"
	[ "$status" -eq 0 ]
	grep -qx 'kubelet_preemptions{preemption_signal="pods"} 1' <<<"$output"
}

@test "admission: a static pod whose nodeSelector the node's labels lack is Failed with NodeAffinity; one that matches runs" {
	cat >"$MANIFESTS/picky.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: picky}
	spec:
	  nodeSelector: {e2e-disk: ssd}
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	cat >"$MANIFESTS/fits.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: fits}
	spec:
	  nodeSelector: {kubernetes.io/hostname: e2e-node, kubernetes.io/os: linux, e2e-disk: hdd}
	  containers: [{name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}]
	YAML
	# standalone: the labels the agent would give its Node (defaults and --node-labels)
	start_agent "$MANIFESTS" --node-labels=e2e-disk=hdd
	wait_for -t 60 phase_is picky Failed
	[ "$(pod_field picky .status.reason)" = NodeAffinity ]
	[ "$(pod_field picky .status.message)" = "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" ]
	query_empty sandboxes_of picky
	wait_for -t 60 phase_is fits Running
}

@test "hostNetwork pod sees the host's interfaces; hostPath and memory emptyDir mount" {
	hostdir=$BATS_TEST_TMPDIR/hostdata
	mkdir -p "$hostdir"
	echo from-host >"$hostdir/in"
	cat >"$MANIFESTS/hostnet.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: hostnet}
	spec:
	  hostNetwork: true
	  volumes:
	  - {name: h, hostPath: {path: $hostdir, type: Directory}}
	  - {name: m, emptyDir: {medium: Memory}}
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'cat /h/in > /h/out; grep " /m " /proc/mounts > /h/mounts; exec sleep 3600']
	    volumeMounts: [{name: h, mountPath: /h}, {name: m, mountPath: /m}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is hostnet Running
	wait_for -t 20 test -s "$hostdir/mounts"
	[ "$(cat "$hostdir/out")" = from-host ]
	[[ $(cat "$hostdir/mounts") == tmpfs* ]]
	ctr=$(running_containers_of hostnet)
	# the host's interfaces, by name: the host's network namespace
	run crictl exec "$ctr" cat /proc/net/dev
	[ "$status" -eq 0 ]
	[ "$(awk -F: 'NR > 2 { print $1 }' <<<"$output" | sort | xargs)" = \
		"$(awk -F: 'NR > 2 { print $1 }' /proc/net/dev | sort | xargs)" ]
	# /etc/hosts: the node's file under the kubelet's header (upstream
	# nodeHostsFileContent), not a directory the runtime made
	run crictl exec "$ctr" cat /etc/hosts
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '# Kubernetes-managed hosts file (host network).\n%s' "$(cat /etc/hosts)")" ]
}

@test "/etc/hosts is the kubelet-managed file: pod IP, hostname and FQDN, hostAliases, across restarts" {
	cat >"$MANIFESTS/hosts.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: hosts}
	spec:
	  hostname: web-0
	  subdomain: front
	  hostAliases:
	  - {ip: 10.1.2.3, hostnames: [db.local, cache.local]}
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	start_agent "$MANIFESTS" --cluster-domain=cluster.local
	wait_for -t 60 running_is hosts main
	ip=$(pod_ip hosts)
	[ -n "$ip" ]
	want=$(printf '%s\n' "# Kubernetes-managed hosts file." "127.0.0.1	localhost" \
		"::1	localhost ip6-localhost ip6-loopback" "fe00::0	ip6-localnet" \
		"fe00::0	ip6-mcastprefix" "fe00::1	ip6-allnodes" "fe00::2	ip6-allrouters" \
		"$ip	web-0.front.default.svc.cluster.local	web-0" "" \
		"# Entries added by HostAliases." "10.1.2.3	db.local	cache.local")
	ctr=$(running_containers_of hosts)
	run crictl exec "$ctr" cat /etc/hosts
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
	# what a program in the pod resolves through it
	run crictl exec "$ctr" ping -c 1 -W 2 web-0.front.default.svc.cluster.local
	[ "$status" -eq 0 ]
	[[ $output == *"($ip)"* ]]

	# the next container instance sees the same file
	crictl stop "$ctr" >/dev/null
	wait_for -t 60 restarts_at_least hosts main 1
	wait_for -t 30 running_is hosts main
	ctr2=$(running_containers_of hosts)
	[ -n "$ctr2" ]
	[ "$ctr2" != "$ctr" ]
	run crictl exec "$ctr2" cat /etc/hosts
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
}

@test "a hostPath of type Directory that does not exist fails the pod's sync with a clear error" {
	cat >"$MANIFESTS/nodir.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: nodir}
	spec:
	  volumes: [{name: h, hostPath: {path: /nonexistent/ckubelet-e2e, type: Directory}}]
	  containers:
	  - {name: main, image: localhost/busybox:1.35, volumeMounts: [{name: h, mountPath: /h}]}
	YAML
	sleeper fine
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is fine Running
	wait_for -t 30 grep -q 'Error syncing pod.*nonexistent/ckubelet-e2e' "$CKUBELET_LOG"
	[ "$(pod_phase nodir)" = Pending ]
	query_empty running_containers_of nodir
}

@test "hostPort maps to the pod's container port" {
	cat >"$MANIFESTS/port.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: port}
	spec:
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'echo port-ok > /tmp/index.html; exec httpd -f -p 8080 -h /tmp']
	    ports: [{containerPort: 8080, hostPort: 18080}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is port Running
	# the sandbox's mapping, as containerd reports it (the shim answers no
	# verbose info: the mapping is what the request below goes through)
	if [[ ${CK_E2E_RUNTIME:-containerd} != docker ]]; then
		run crictl inspectp "$(sandboxes_of port)"
		[ "$(jq -r '.info.config.port_mappings[0].host_port // .info.config.portMappings[0].hostPort' <<<"$output")" = 18080 ]
	fi
	# through the host port on the host's bridge address (portmap's DNAT)
	wait_for -t 20 curl -sf --max-time 2 "http://$E2E_POD_NET.0.1:18080/index.html"
	run curl -sf --max-time 2 "http://$E2E_POD_NET.0.1:18080/index.html"
	[ "$output" = port-ok ]
}

@test "requests and limits reach the container's cgroup; Guaranteed pod cgroup" {
	cat >"$MANIFESTS/res.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: res}
	spec:
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    resources:
	      limits: {cpu: 250m, memory: 64Mi}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is res Running
	[ "$(pod_field res .status.qosClass)" = Guaranteed ]
	uid=$(pod_uid res)
	pod_cg=$(e2e_cgroup_path "kubepods/pod$uid" memory)
	[ -d "$pod_cg" ]
	if e2e_cgroup_v2; then
		[ "$(cat "$pod_cg/memory.max")" -eq $((64 * 1024 * 1024)) ]
		[ "$(cat "$pod_cg/cpu.max")" = "25000 100000" ]
	else
		[ "$(cat "$pod_cg/memory.limit_in_bytes")" -eq $((64 * 1024 * 1024)) ]
		[ "$(cat "$(e2e_cgroup_path "kubepods/pod$uid" cpu)/cpu.cfs_quota_us")" -eq 25000 ]
	fi
	ctr=$(running_containers_of res)
	if [[ ${CK_E2E_RUNTIME:-containerd} == docker ]]; then
		# the engine's view (the shim answers no runtime spec)
		[ "$(docker inspect -f '{{.HostConfig.Memory}}' "$ctr")" -eq $((64 * 1024 * 1024)) ]
		[ "$(docker inspect -f '{{.HostConfig.CpuShares}}' "$ctr")" -eq 256 ]
		[ "$(docker inspect -f '{{.HostConfig.CpuQuota}}' "$ctr")" -eq 25000 ]
		[[ $(docker inspect -f '{{.HostConfig.CgroupParent}}' "$ctr") == */ckubelet-e2e/kubepods/pod$uid ]]
		return 0
	fi
	run crictl inspect "$ctr"
	[ "$(jq -r '.info.runtimeSpec.linux.resources.memory.limit' <<<"$output")" -eq $((64 * 1024 * 1024)) ]
	[ "$(jq -r '.info.runtimeSpec.linux.resources.cpu.shares' <<<"$output")" -eq 256 ]
	[ "$(jq -r '.info.runtimeSpec.linux.resources.cpu.quota' <<<"$output")" -eq 25000 ]
	# the pod cgroup is the container's parent: a path for cgroupfs,
	# "<slice>:cri-containerd:<id>" for systemd (containerd's form)
	cgroups_path=$(jq -r '.info.runtimeSpec.linux.cgroupsPath' <<<"$output")
	echo "cgroupsPath $cgroups_path"
	if [[ $E2E_CGROUP_DRIVER == systemd ]]; then
		[[ $cgroups_path == "ckubelet_e2e-kubepods-pod$uid.slice:cri-containerd:$ctr" ]]
	else
		[[ $cgroups_path == */ckubelet-e2e/kubepods/pod$uid/* ]]
	fi
}

@test "securityContext: runAsUser/Group, readOnlyRootFilesystem, dropped capabilities" {
	cat >"$MANIFESTS/sec.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: sec}
	spec:
	  securityContext: {runAsUser: 1234, runAsGroup: 5678}
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    securityContext:
	      readOnlyRootFilesystem: true
	      capabilities: {drop: [ALL]}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is sec Running
	ctr=$(running_containers_of sec)
	run crictl exec "$ctr" id
	[[ $output == "uid=1234 gid=5678"* ]]
	run crictl exec "$ctr" touch /newfile
	[ "$status" -ne 0 ]
	run crictl exec "$ctr" grep CapEff /proc/self/status
	[[ $output == *0000000000000000* ]]
}

@test "seLinuxOptions reach the runtime: the pod's for the sandbox, a container's own over them" {
	cat >"$MANIFESTS/se.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: se}
	spec:
	  securityContext: {seLinuxOptions: {type: spc_t, level: "s0:c1,c2"}}
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	  - name: own
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    securityContext: {seLinuxOptions: {user: system_u, role: system_r, type: container_t}}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is se Running
	if [[ ${CK_E2E_RUNTIME:-containerd} == docker ]]; then
		# the shim turns them into the engine's label options
		[[ $(docker inspect -f '{{.HostConfig.SecurityOpt}}' "$(containers_of se own)") == *"label=type:container_t"* ]]
		return 0
	fi
	# containerd keeps the configs it was given (it applies them on an
	# SELinux host only, as upstream's kubelet expects)
	run crictl inspectp "$(sandboxes_of se)"
	[ "$(jq -r '.info.config.linux.security_context.selinux_options | "\(.type) \(.level)"' <<<"$output")" = "spc_t s0:c1,c2" ]
	run crictl inspect "$(containers_of se main)"
	[ "$(jq -r '.info.config.linux.security_context.selinux_options.type' <<<"$output")" = spc_t ]
	run crictl inspect "$(containers_of se own)"
	[ "$(jq -r '.info.config.linux.security_context.selinux_options | "\(.user) \(.role) \(.type) \(.level)"' <<<"$output")" = "system_u system_r container_t null" ]
}

@test "fsGroup: an emptyDir is the group's at its setup; a restarted agent leaves what a container changed, whatever fsGroupChangePolicy says" {
	for policy in Always OnRootMismatch; do
		name=fsg-$(tr A-Z a-z <<<"$policy")
		cat >"$MANIFESTS/$name.yaml" <<-YAML
		apiVersion: v1
		kind: Pod
		metadata: {name: $name}
		spec:
		  securityContext: {fsGroup: 4321, fsGroupChangePolicy: $policy}
		  containers:
		  - name: main
		    image: localhost/busybox:1.35
		    command: [sh, -c, "mkdir /d/sub && echo x >/d/sub/f && chgrp -R 5 /d/sub && sleep 3600"]
		    volumeMounts: [{name: d, mountPath: /d}]
		  volumes: [{name: d, emptyDir: {}}]
		YAML
	done
	start_agent "$MANIFESTS"
	for name in fsg-always fsg-onrootmismatch; do
		wait_for -t 60 phase_is "$name" Running
		ctr=$(running_containers_of "$name")
		wait_for -t 20 crictl exec "$ctr" test -f /d/sub/f
		run crictl exec "$ctr" stat -c '%g %a' /d /d/sub/f
		echo "$name before: $output"
		[[ $output == "4321 2777"*"5 "* ]]
	done
	stop_ckubelet
	start_agent "$MANIFESTS"
	# upstream's readiness file: the volume is set up already, its
	# ownership is not applied again (emptyDirs get no change policy)
	for name in fsg-always fsg-onrootmismatch; do
		uid=$(pod_uid "$name")
		[ -f "$CKUBELET_ROOT/pods/$uid/plugins/kubernetes.io~empty-dir/d/ready" ]
		# a sync of it (its volumes set up) by the new agent
		wait_for -t 60 grep -q "Pod sync finished.*podUID=\"$uid\" .*ok=true" "$CKUBELET_LOG"
		run crictl exec "$(running_containers_of "$name")" stat -c '%g' /d/sub/f
		[ "$output" = 5 ]
	done
}

@test "an image that is not present with pullPolicy Never waits with ErrImageNeverPull" {
	cat >"$MANIFESTS/never.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: neverpull}
	spec:
	  containers:
	  - {name: main, image: localhost/absent:1.0, imagePullPolicy: Never}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 waiting_reason_is neverpull main ErrImageNeverPull
	[ "$(pod_phase neverpull)" = Pending ]
}

@test "env from a file (fileKeyRef): an init container's env file in an emptyDir gives the app container its keys; a missing key is CreateContainerConfigError" {
	cat >"$MANIFESTS/envfile.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: envfile}
	spec:
	  volumes: [{name: config, emptyDir: {}}]
	  initContainers:
	  - name: setup
	    image: localhost/busybox:1.35
	    command: [sh, -c, "printf \"# written by setup\\nCONFIG_1='value1'\\nCONFIG_2='two\\nlines'\\n\" >/data/config.env"]
	    volumeMounts: [{name: config, mountPath: /data}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    env:
	    - {name: CONFIG_1, valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: CONFIG_1}}}
	    - {name: CONFIG_2, valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: CONFIG_2}}}
	    - {name: ABSENT, valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: NOPE, optional: true}}}
	YAML
	cat >"$MANIFESTS/envfile-missing.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: envfile-missing}
	spec:
	  volumes: [{name: config, emptyDir: {}}]
	  initContainers:
	  - name: setup
	    image: localhost/busybox:1.35
	    command: [sh, -c, "echo \"A='a'\" >/data/config.env"]
	    volumeMounts: [{name: config, mountPath: /data}]
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    env: [{name: B, valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: B}}}]
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 running_is envfile main
	ctr=$(running_containers_of envfile main)
	[ "$(crictl exec "$ctr" sh -c 'echo "$CONFIG_1"')" = value1 ]
	[ "$(crictl exec "$ctr" sh -c 'echo "$CONFIG_2"')" = "$(printf 'two\nlines')" ]
	[ "$(crictl exec "$ctr" sh -c 'echo "${ABSENT-unset}"')" = unset ]

	wait_for -t 60 waiting_reason_is envfile-missing main CreateContainerConfigError
	msg=$(waiting_message envfile-missing main)
	echo "$msg"
	[[ $msg == 'environment variable key "B" not found in file "'*'/volumes/kubernetes.io~empty-dir/config/config.env"' ]]
	query_empty running_containers_of envfile-missing main
}

@test "hostUsers: false is refused with upstream's words (no user namespaces in this runtime); hostUsers: true runs" {
	cat >"$MANIFESTS/userns.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: userns}
	spec:
	  hostUsers: false
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	cat >"$MANIFESTS/hostusers.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: hostusers}
	spec:
	  hostUsers: true
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 running_is hostusers main
	# the sync's error names the pod and the step (the FailedCreatePodSandBox
	# event says the same, to the apiserver in cluster mode)
	local why="can't set \`spec.hostUsers: false\`, runtime does not support user namespaces"
	wait_for -t 60 grep -qF "$why" "$CKUBELET_LOG"
	grep -F "$why" "$CKUBELET_LOG" | grep -q 'userns-e2e-node'
	[ "$(pod_phase userns)" = Pending ]
	[ "$(waiting_reason userns main)" = ContainerCreating ]
	runtime_has_nothing_of userns
}

@test "runAsNonRoot: a root image without runAsUser is CreateContainerConfigError; with runAsUser 1000 it runs as 1000" {
	cat >"$MANIFESTS/nonroot.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: nonroot}
	spec:
	  securityContext: {runAsNonRoot: true}
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	cat >"$MANIFESTS/nonroot-uid.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: nonroot-uid}
	spec:
	  securityContext: {runAsNonRoot: true, runAsUser: 1000}
	  containers:
	  - {name: main, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 running_is nonroot-uid main
	ctr=$(running_containers_of nonroot-uid main)
	[ "$(crictl exec "$ctr" id -u)" = 1000 ]
	wait_for -t 60 waiting_reason_is nonroot main CreateContainerConfigError
	msg=$(waiting_message nonroot main)
	echo "$msg"
	[[ $msg == 'container has runAsNonRoot and image will run as root (pod: "nonroot-e2e-node_default('*')", container: main)' ]]
	query_empty running_containers_of nonroot main
}
