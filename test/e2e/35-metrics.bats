#!/usr/bin/env bats
# The node's Prometheus endpoints on the read-only port, as a Prometheus
# server scrapes them: /metrics (the kubelet's series, the rest client's,
# the process') and /metrics/probes, parsed by the Prometheus project's own
# parser (python3-prometheus-client, test/e2e/tools/metrics-sample), and
# each exposition checked by Debian's promtool (`promtool check metrics`:
# it parses, and no lint problem).

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

METRICS_SAMPLE=$BATS_TEST_DIRNAME/tools/metrics-sample

scrape() { # PATH: the body, or a failure
	curl -sf --max-time 5 "http://127.0.0.1:$CKUBELET_READ_ONLY_PORT$1"
}

sample() { # PATH NAME [LABEL=VALUE...]: one sample's value
	local path=$1
	shift
	scrape "$path" | "$METRICS_SAMPLE" "$@"
}

# promtool exits 3 for lint problems alone (the exposition parsed); the
# ones named here are upstream's own series names, kept as upstream has
# them: any other problem, or a parse error, fails.
promtool_accepts() { # PATH [LINT-LINE...]
	local path=$1 body out rc=0 line allowed
	shift
	body=$(scrape "$path") || {
		echo "scrape $path failed"
		return 1
	}
	[ -n "$body" ]
	out=$(promtool check metrics <<<"$body" 2>&1) || rc=$?
	((rc == 0)) && return 0
	if ((rc != 3)); then
		echo "promtool check metrics $path: exit $rc: $out"
		return 1
	fi
	local bad=0
	while IFS= read -r line; do
		for allowed in "$@"; do
			[ "$line" = "$allowed" ] && continue 2
		done
		echo "promtool check metrics $path: $line"
		bad=1
	done <<<"$out"
	((bad == 0))
}

sample_label() { # PATH NAME LABEL [LABEL=VALUE...]: a label of one sample
	local path=$1 name=$2 label=$3
	shift 3
	scrape "$path" | "$METRICS_SAMPLE" --label "$label" "$name" "$@"
}

running_pods_is() { [ "$(sample /metrics kubelet_running_pods)" = "$1" ]; }

@test "/metrics: running pods and containers, runtime operations, the node name, the process" {
	cat >"$MANIFESTS/two.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: two}
	spec:
	  containers:
	  - {name: a, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	  - {name: b, image: localhost/busybox:1.35, command: [sleep, "3600"]}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is two Running
	# what the PLEG saw at its last relist
	wait_for -t 20 running_pods_is 1
	[ "$(sample /metrics kubelet_running_containers container_state=running)" = 2 ]
	# the whole exposition parses and every family has HELP and TYPE
	run sample /metrics -
	[ "$status" -eq 0 ]
	[[ $output == *kubelet_pod_worker_duration_seconds* ]]
	promtool_accepts /metrics
	(($(sample /metrics kubelet_runtime_operations_total operation_type=list_podsandbox) > 0))
	(($(sample /metrics kubelet_runtime_operations_total operation_type=run_podsandbox) >= 1))
	(($(sample /metrics kubelet_runtime_operations_duration_seconds_count operation_type=create_container) >= 2))
	(($(sample /metrics kubelet_pleg_relist_duration_seconds_count) > 0))
	(($(sample /metrics kubelet_pod_worker_duration_seconds_count operation_type=sync) > 0))
	# the pod's first sync, as upstream's SyncPodCreate
	[ "$(sample /metrics kubelet_pod_worker_duration_seconds_count operation_type=create)" = 1 ]
	# seen -> running: upstream observes at the first sync (no status yet)
	# and when the phase goes Pending -> Running: twice for one pod
	[ "$(sample /metrics kubelet_pod_start_duration_seconds_count)" = 2 ]
	[ "$(sample /metrics kubelet_node_name node=e2e-node)" = 1 ]
	# the process collector: the agent's own RSS as /proc reports it
	local rss
	rss=$(sample /metrics process_resident_memory_bytes)
	((rss > 1000000))
	(($(sample /metrics process_open_fds) > 3))
	# upstream's content type and HELP stability markers
	run curl -sf -D - -o /dev/null "http://127.0.0.1:$CKUBELET_READ_ONLY_PORT/metrics"
	[[ $output == *"Content-Type: text/plain; version=0.0.4; charset=utf-8"* ]]
	scrape /metrics | grep -qx '# HELP kubelet_running_pods \[ALPHA\] Number of pods that have a running pod sandbox'
	# the pod goes: the gauge follows
	rm "$MANIFESTS/two.yaml"
	wait_for -t 60 running_pods_is 0
}

@test "/metrics/probes: prober_probe_total by result for a readiness probe" {
	cat >"$MANIFESTS/probed.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: probed}
	spec:
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'touch /tmp/ready; exec sleep 3600']
	    readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 1}
	  - name: never
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    readinessProbe: {exec: {command: ["false"]}, periodSeconds: 1}
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is probed Running
	local uid
	uid=$(pod_uid probed)
	ok() { (($(sample /metrics/probes prober_probe_total probe_type=Readiness result=successful container=main pod=probed-e2e-node namespace=default pod_uid="$uid") >= 2)); }
	failed() { (($(sample /metrics/probes prober_probe_total probe_type=Readiness result=failed container=never pod=probed-e2e-node namespace=default pod_uid="$uid") >= 2)); }
	wait_for -t 30 ok
	wait_for -t 30 failed
	# no success was ever counted for the failing one
	run sample /metrics/probes prober_probe_total result=successful container=never
	[ "$status" -eq 1 ]
	scrape /metrics/probes | grep -qx '# TYPE prober_probe_total counter'
	promtool_accepts /metrics/probes
	scrape /metrics/probes | grep -qx '# HELP prober_probe_total \[BETA\] Cumulative number of a liveness, readiness or startup probe for a container by result.'
}

# The pod cgroup's memory working set as cAdvisor and upstream count it:
# usage - total_inactive_file (cgroup v1).
cgroup_working_set() { # UID
	local d=/sys/fs/cgroup/memory/ckubelet-e2e/kubepods/besteffort/pod$1
	awk -v u="$(cat "$d/memory.usage_in_bytes")" '$1 == "total_inactive_file" { print u - $2 }' "$d/memory.stat"
}

within_10pct() { # A B
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.1 * b) }'
}

@test "/stats/summary, /metrics/resource and /metrics/cadvisor: the node, the pod and its container, as the cgroups count them" {
	cat >"$MANIFESTS/held.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: held}
	spec:
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    # 32 MiB held by the shell in a variable (the shell stays: no exec)
	    command: [sh, -c, 'trap "exit 0" TERM; x=$(head -c 33554432 /dev/zero | tr "\0" a); echo ${#x}; while :; do sleep 1; done']
	YAML
	start_agent "$MANIFESTS"
	wait_for -t 60 phase_is held Running
	local uid summary
	uid=$(pod_uid held)
	# the pod shows up once the runtime has stats for it and its container
	# holds the 32 MiB (a snapshot lives 10 s)
	has_pod() { scrape /stats/summary | jq -e --arg uid "$uid" '.pods[] | select(.podRef.uid == $uid) | .containers[0].memory.workingSetBytes > 33554432' >/dev/null; }
	wait_for -t 60 has_pod
	summary=$(scrape /stats/summary)
	jq -e '.node.nodeName == "e2e-node" and .node.cpu.usageCoreNanoSeconds > 0 and .node.memory.workingSetBytes > 0 and .node.fs.capacityBytes > 0' <<<"$summary"
	jq -e --arg uid "$uid" '.pods[] | select(.podRef.uid == $uid) | .podRef.name == "held-e2e-node" and .podRef.namespace == "default" and .containers[0].name == "main" and .cpu.usageCoreNanoSeconds > 0' <<<"$summary"
	# the pod's working set agrees with its cgroup's once a snapshot is
	# taken after the shell stopped growing (a snapshot lives 10 s)
	summary_agrees() {
		local ws cg
		ws=$(scrape /stats/summary | jq -r --arg uid "$uid" '.pods[] | select(.podRef.uid == $uid) | .memory.workingSetBytes')
		cg=$(cgroup_working_set "$uid")
		echo "summary pod working set $ws, cgroup $cg"
		within_10pct "$ws" "$cg"
	}
	wait_for -t 40 -i 2 summary_agrees
	# only_cpu_and_memory: no fs, no network
	run scrape '/stats/summary?only_cpu_and_memory=true'
	[ "$status" -eq 0 ]
	jq -e '.node.fs == null and .node.memory.workingSetBytes > 0' <<<"$output"
	# /metrics/resource: what metrics-server scrapes, parsed by Prometheus' parser
	local v cg
	cg=$(cgroup_working_set "$uid")
	v=$(sample /metrics/resource container_memory_working_set_bytes container=main pod=held-e2e-node namespace=default)
	echo "resource container working set $v, pod cgroup $cg"
	within_10pct "$v" "$cg"
	(($(sample /metrics/resource node_cpu_usage_seconds_total | cut -d. -f1) >= 0))
	v=$(sample /metrics/resource pod_memory_working_set_bytes pod=held-e2e-node namespace=default)
	within_10pct "$v" "$cg"
	scrape /metrics/resource | grep -q '^container_cpu_usage_seconds_total{container="main",namespace="default",pod="held-e2e-node"} [0-9.e+-]* [0-9]\{13\}$'
	# /metrics/cadvisor: cAdvisor's container_* series (the pod's cgroup
	# with container=""), machine_* from the machine itself
	v=$(sample /metrics/cadvisor container_memory_working_set_bytes container= pod=held-e2e-node namespace=default)
	echo "cadvisor pod working set $v, cgroup $cg"
	within_10pct "$v" "$cg"
	v=$(sample /metrics/cadvisor container_memory_working_set_bytes container=main pod=held-e2e-node namespace=default)
	((v > 33554432))
	(($(sample /metrics/cadvisor container_cpu_usage_seconds_total container=main pod=held-e2e-node cpu=total | cut -d. -f1) >= 0))
	[ "$(sample /metrics/cadvisor machine_cpu_cores)" = "$(nproc)" ]
	# the QoS class's cgroup, a raw container of cAdvisor's: it holds the pod
	v=$(sample /metrics/cadvisor container_memory_working_set_bytes id="$E2E_CGROUP_ROOT/kubepods/besteffort" pod=)
	echo "cadvisor besteffort working set $v, pod cgroup $cg"
	awk -v a="$v" -v b="$cg" 'BEGIN { exit !(a >= 0.9 * b) }'
	# the shell's open files (stdin, stdout, stderr at least), no socket;
	# the soft RLIMIT_NOFILE of its processes
	(($(sample /metrics/cadvisor container_file_descriptors container=main pod=held-e2e-node) >= 3))
	[ "$(sample /metrics/cadvisor container_sockets container=main pod=held-e2e-node)" = 0 ]
	local nofile pid
	pid=$(head -n1 "/sys/fs/cgroup/pids$(sample_label /metrics/cadvisor container_sockets id container=main pod=held-e2e-node)/cgroup.procs")
	nofile=$(awk '/^Max open files/ { print ($4 == "unlimited" ? -1 : $4) }' "/proc/$pid/limits")
	[ "$(sample /metrics/cadvisor container_ulimits_soft container=main ulimit=max_open_files)" = "$nofile" ]
	# the root container's filesystems (cAdvisor's fsInfo): one of them is
	# the one of /, its size as statfs gives it
	local limit
	limit=$(stat -f -c '%b %S' / | awk '{ printf "%.0f", $1 * $2 }')
	scrape /metrics/cadvisor | awk -v want="$limit" '
		/^container_fs_limit_bytes\{container="",device="[^"]*",id="\/",/ && $2 + 0 == want + 0 { found = 1 }
		END { exit !found }'
	scrape /metrics/cadvisor | grep -q '^container_fs_usage_bytes{container="",device="[^"]*",id="/",'
	promtool_accepts /metrics/resource
	# cAdvisor's names, which promtool's linter does not like
	promtool_accepts /metrics/cadvisor \
		'container_cpu_load_d_average_10s metric names should not contain abbreviated units' \
		'container_memory_failcnt counter metrics should have "_total" suffix' \
		'container_fs_inodes_total non-counter metrics should not have "_total" suffix'
}
