#!/usr/bin/env bats
# kubectl top through upstream metrics-server (hack/local-cluster
# metrics-server: a host process behind the apiserver's aggregation layer).
# metrics-server scrapes the node's /metrics/resource on the secure port
# with its service account's token, which the node authenticates
# (TokenReview) and authorizes (SubjectAccessReview: nodes/metrics, granted
# by upstream's system:metrics-server ClusterRole); what kubectl top prints
# must agree with the pod's own cgroup counters within 10 %.  One ckubelet
# for the whole file, set up as a kubeadm node (client CA, webhook
# authentication and authorization).

load helpers
load cluster

# The burner: a shell spinning on a CPU, held to BURN_MILLICORES by its CFS
# quota, after writing FILL_MIB MiB to its /dev/shm (tmpfs: memory charged
# to its cgroup that is never inactive file cache, so in the working set).
BURN_MILLICORES=200
FILL_MIB=48
# How far apart kubectl top and the cgroup may be, in percent.
TOLERANCE=10

setup_file() {
	# before any timed wait: a cold build takes minutes (progress on the TAP stream)
	build_metrics_server
	cluster_file_setup e2e-top
	start_cluster_node "" --client-ca-file="$CK_CLUSTER_DIR/pki/ca.crt" \
		--anonymous-auth=false --authentication-token-webhook --authorization-mode=Webhook
	wait_for -t 60 -i 0.5 node_ready
	# limits only: requests = limits, a Guaranteed pod, whose cgroup is
	# <cgroup root>/kubepods/pod<uid>
	kubectl apply -f - <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: burner, namespace: $TEST_NS}
	spec:
	  nodeName: $CLUSTER_NODE_NAME
	  terminationGracePeriodSeconds: 2
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sh, -c, 'dd if=/dev/zero of=/dev/shm/fill bs=1048576 count=$FILL_MIB && trap "exit 0" TERM && while :; do :; done']
	    resources:
	      limits: {cpu: ${BURN_MILLICORES}m, memory: 128Mi}
	YAML
	wait_for -t 60 -i 0.5 kpod_phase_is "$TEST_NS" burner Running
	BURNER_UID=$(kpod_uid "$TEST_NS" burner)
	export BURNER_UID
	[ -d "$(pod_cgroup cpuacct)" ]
	[ -d "$(pod_cgroup memory)" ]
	# the fill is written
	wait_for -t 30 -i 0.5 fill_written
	# the pod's CPU time, sampled every half second for the whole file:
	# the window metrics-server measured is then looked up afterwards
	(
		trap - ERR DEBUG RETURN
		set +eET
		while :; do
			echo "$(date +%s.%N) $(<"$(pod_cgroup cpuacct)/cpuacct.usage")"
			sleep 0.5
		done
	) >"$BATS_FILE_TMPDIR/cpu-samples" 2>/dev/null </dev/null 3>&- &
	echo $! >"$BATS_FILE_TMPDIR/sampler.pid"
	# the bridge of the runtime has its address now: metrics-server listens there
	metrics_server_up
}

teardown_file() {
	if [[ -f $BATS_FILE_TMPDIR/sampler.pid ]]; then
		kill "$(<"$BATS_FILE_TMPDIR/sampler.pid")" 2>/dev/null || true
	fi
	# before the node goes: it would scrape a node that is gone
	metrics_server_down || true
	cleanup_node "$TEST_NS"
}

# pod_cgroup CONTROLLER: the burner's pod cgroup in that v1 hierarchy.
pod_cgroup() {
	echo "/sys/fs/cgroup/$1$CLUSTER_CGROUP_ROOT/kubepods/pod$BURNER_UID"
}

# cgroup_working_set: the pod's working set as cAdvisor (and kubectl top)
# defines it: memory.usage_in_bytes - total_inactive_file, at least 0.
cgroup_working_set() {
	local dir usage inactive
	dir=$(pod_cgroup memory)
	usage=$(<"$dir/memory.usage_in_bytes")
	inactive=$(awk '$1 == "total_inactive_file" { print $2 }' "$dir/memory.stat")
	echo $((usage > inactive ? usage - inactive : 0))
}

fill_written() { (($(cgroup_working_set) >= FILL_MIB * 1048576)); }

# cgroup_millicores FROM TO: the pod's CPU rate (millicores) between two
# times (seconds since the epoch, fractions allowed), interpolated between
# the sampler's readings of cpuacct.usage.
cgroup_millicores() {
	awk -v from="$1" -v to="$2" '
		{ t[NR] = $1; u[NR] = $2 }
		function at(x, i) {
			for (i = 2; i <= NR; i++)
				if (t[i] >= x && t[i - 1] <= x)
					return u[i - 1] + (u[i] - u[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])
			exit 1
		}
		END { printf "%d\n", (at(to) - at(from)) / (to - from) / 1e6 }
	' "$BATS_FILE_TMPDIR/cpu-samples"
}

# within A B: A and B differ by at most TOLERANCE % of B.
within() {
	local a=$1 b=$2 d
	d=$((a > b ? a - b : b - a))
	echo "within: $a vs $b (difference $d, at most $((b * TOLERANCE / 100)))"
	((d * 100 <= b * TOLERANCE))
}

# to_mib QUANTITY: a kubectl top memory figure (Mi, Ki, Gi) in MiB.
to_mib() {
	case $1 in
	*Gi) echo $((${1%Gi} * 1024)) ;;
	*Mi) echo "${1%Mi}" ;;
	*Ki) echo $((${1%Ki} / 1024)) ;;
	*) echo $(($1 / 1048576)) ;;
	esac
}

# burner_metrics: the burner's PodMetrics (metrics.k8s.io) as JSON.
burner_metrics() {
	kubectl get --raw "/apis/metrics.k8s.io/v1beta1/namespaces/$TEST_NS/pods/burner"
}

top_shows_burner() {
	kubectl top pod -n "$TEST_NS" burner --no-headers 2>/dev/null | grep -q '^burner '
}

# https_status URL [CURL ARGS...]: the status code; the body in $BATS_TEST_TMPDIR/body
https_status() {
	local url=$1
	shift
	curl -sk -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' --max-time 10 "$@" "$url"
}

@test "metrics-server is registered: APIService v1beta1.metrics.k8s.io Available, served through the aggregator" {
	run kubectl get apiservice v1beta1.metrics.k8s.io \
		-o jsonpath='{.status.conditions[?(@.type=="Available")].status}'
	[ "$output" = True ]
	run kubectl get --raw /apis/metrics.k8s.io/v1beta1
	[ "$status" -eq 0 ]
	jq -e '.kind == "APIResourceList" and ([.resources[].name] | index("nodes") and index("pods"))' <<<"$output"
	# the route is the hand-made EndpointSlice on the runtime's bridge, not a ClusterIP
	run kubectl get endpointslice -n kube-system -l kubernetes.io/service-name=metrics-server \
		-o jsonpath='{.items[*].endpoints[*].addresses[0]}:{.items[*].ports[0].port}'
	[ "https://$output" = "$METRICS_SERVER" ]
}

resource_series_of_burner() { # URL TOKEN
	[ "$(https_status "$1" -H "Authorization: Bearer $2")" = 200 ] || return 1
	awk -v ns="$TEST_NS" '
		$1 ~ /^container_cpu_usage_seconds_total\{/ && index($1, "container=\"main\"") &&
			index($1, "namespace=\"" ns "\"") && index($1, "pod=\"burner\"") && $2 > 0 { c = 1 }
		$1 ~ /^container_memory_working_set_bytes\{/ && index($1, "pod=\"burner\"") && $2 > 0 { m = 1 }
		$1 == "node_cpu_usage_seconds_total" && $2 > 0 { n = 1 }
		$1 == "node_memory_working_set_bytes" && $2 > 0 { nm = 1 }
		END { exit !(c && m && n && nm) }
	' "$BATS_TEST_TMPDIR/body"
}

@test "the node serves /metrics/resource to metrics-server's service account, and to no other" {
	local url=https://127.0.0.1:10250/metrics/resource token
	token=$(metrics_server_token)
	run https_status "$url" -H "Authorization: Bearer $token"
	[ "$output" = 200 ]
	# the series metrics-server reads, for the node and the burner's container
	# (the stats are a snapshot of at most one housekeeping interval, 10 s:
	# one taken before the burner ran has none of it yet)
	wait_for -t 30 -i 1 resource_series_of_burner "$url" "$token"
	# a service account without upstream's system:metrics-server role
	kubectl create serviceaccount nobody -n "$TEST_NS"
	token=$(kubectl create token nobody -n "$TEST_NS")
	run https_status "$url" -H "Authorization: Bearer $token"
	[ "$output" = 403 ]
	grep -q "user=system:serviceaccount:$TEST_NS:nobody, verb=get, resource=nodes, subresource(s)=\[metrics\]" \
		"$BATS_TEST_TMPDIR/body"
}

@test "kubectl top pod: the burner's CPU and memory agree with its pod cgroup within 10 %" {
	# two scrapes (--metric-resolution=10s) of a node that serves /metrics/resource
	wait_for -t 180 -i 2 top_shows_burner
	local before top after ts window end
	for _ in 1 2 3 4 5; do
		# kubectl top between two reads of the same scrape (same timestamp):
		# then its figures are those of that scrape's window
		before=$(burner_metrics)
		top=$(kubectl top pod -n "$TEST_NS" burner --no-headers)
		after=$(burner_metrics)
		[[ $(jq -r .timestamp <<<"$before") != "$(jq -r .timestamp <<<"$after")" ]] || break
	done
	[ "$(jq -r .timestamp <<<"$before")" = "$(jq -r .timestamp <<<"$after")" ]
	echo "kubectl top pod: $top"
	echo "metrics.k8s.io: $after"
	local cpu mem
	read -r _ cpu mem <<<"$top"
	[[ $cpu =~ ^[0-9]+m$ && $mem =~ ^[0-9]+(Ki|Mi|Gi)$ ]]
	cpu=${cpu%m}
	mem=$(to_mib "$mem")

	# CPU: the cgroup's rate over the window metrics-server measured (it
	# ends at .timestamp, which JSON truncates to the second: its middle)
	ts=$(date -d "$(jq -r .timestamp <<<"$after")" +%s)
	window=$(jq -r '.window | capture("^((?<m>[0-9]+)m)?(?<s>[0-9.]+)s$") | ((.m // "0" | tonumber) * 60 + (.s | tonumber))' <<<"$after")
	end=$(awk -v t="$ts" 'BEGIN { printf "%.3f", t + 0.5 }')
	# the sampler's reading after the window's end
	wait_for -t 10 -i 0.5 eval "awk -v e=$end 'END { exit !(\$1 > e + 0.5) }' '$BATS_FILE_TMPDIR/cpu-samples'"
	local cg_cpu
	cg_cpu=$(cgroup_millicores "$(awk -v e="$end" -v w="$window" 'BEGIN { printf "%.3f", e - w }')" "$end")
	echo "cgroup: ${cg_cpu}m over ${window}s ending at $end; kubectl top: ${cpu}m"
	within "$cpu" "$cg_cpu"
	# and the quota holds the burner to its limit (a busy machine may give it less)
	((cg_cpu <= BURN_MILLICORES * (100 + TOLERANCE) / 100))
	((cg_cpu >= BURN_MILLICORES / 2))

	# memory: the working set changes little (the fill is written)
	local cg_mem
	cg_mem=$(($(cgroup_working_set) / 1048576))
	echo "cgroup working set: ${cg_mem}Mi; kubectl top: ${mem}Mi"
	within "$mem" "$cg_mem"
	((cg_mem >= FILL_MIB))

	# the container's row is the pod's (its only container)
	run kubectl top pod -n "$TEST_NS" burner --containers --no-headers
	[ "$status" -eq 0 ]
	[[ $output =~ ^burner[[:space:]]+main[[:space:]]+[0-9]+m[[:space:]]+[0-9]+Mi ]]
}

@test "kubectl top node: the node, with non-zero CPU and memory, no less than its pod" {
	wait_for -t 180 -i 2 eval "kubectl top node '$CLUSTER_NODE_NAME' --no-headers >/dev/null 2>&1"
	wait_for -t 180 -i 2 top_shows_burner
	local top name cpu cpu_pct mem mem_pct pod pod_cpu pod_mem
	top=$(kubectl top node "$CLUSTER_NODE_NAME" --no-headers)
	echo "kubectl top node: $top"
	read -r name cpu cpu_pct mem mem_pct <<<"$top"
	[ "$name" = "$CLUSTER_NODE_NAME" ]
	[[ $cpu =~ ^[0-9]+m$ && $cpu_pct =~ ^[0-9]+%$ && $mem =~ ^[0-9]+(Ki|Mi|Gi)$ && $mem_pct =~ ^[0-9]+%$ ]]
	cpu=${cpu%m}
	mem=$(to_mib "$mem")
	((cpu > 0 && mem > 0))
	# the node's figures take in the burner's
	pod=$(kubectl top pod -n "$TEST_NS" burner --no-headers)
	echo "kubectl top pod: $pod"
	read -r _ pod_cpu pod_mem <<<"$pod"
	pod_cpu=${pod_cpu%m}
	pod_mem=$(to_mib "$pod_mem")
	((cpu * 100 >= pod_cpu * (100 - TOLERANCE)))
	((mem >= pod_mem))
	# and the node's capacity is what the percentages are of
	run kubectl get --raw "/apis/metrics.k8s.io/v1beta1/nodes/$CLUSTER_NODE_NAME"
	[ "$status" -eq 0 ]
	jq -e '.kind == "NodeMetrics" and (.usage.cpu | length > 0) and (.usage.memory | length > 0)' <<<"$output"
}
