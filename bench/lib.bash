# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers the benchmarks share (sourced by bench/run, bench/cluster and
# bench/compare). They read the caller's globals: CRICTL and ENDPOINT (cri),
# METRICS (metric, get_metric).

# Wall clock in nanoseconds, without a fork.
now_ns() {
	local t=$EPOCHREALTIME
	echo "${t/./}000"
}

# utime+stime of PID in clock ticks.
cpu_ticks() { # PID
	local stat rest f
	stat=$(<"/proc/$1/stat")
	rest=${stat##*) }
	read -ra f <<<"$rest"
	echo $((f[11] + f[12]))
}

# A "kB" field of /proc/PID/status (VmRSS, VmHWM, Threads: a count).
status_kb() { # PID FIELD
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"
}

# PSS of PID in kB (/proc/PID/smaps_rollup: shared pages counted as a share).
pss_kb() { # PID
	awk '$1 == "Pss:" { print $2 }' "/proc/$1/smaps_rollup"
}

cri() {
	"$CRICTL" --config /dev/null --runtime-endpoint "$ENDPOINT" --image-endpoint "$ENDPOINT" \
		--timeout 30s "$@"
}

metric() { # KEY VALUE
	printf '%s=%s\n' "$1" "$2" >>"$METRICS"
}

get_metric() { # KEY
	sed -n "s/^$1=//p" "$METRICS" | tail -n 1
}

# The upstream kubelet wants its cgroupRoot in every hierarchy before it
# starts (ckubelet makes it): made for both, cpuset's CPUs and memory nodes
# copied from the parent as a new v1 cpuset starts with none.
make_cgroup_root() { # CGROUP_ROOT
	local d
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		mkdir -p "/sys/fs/cgroup$1"
		return
	fi
	for d in /sys/fs/cgroup/*/; do
		[[ -L ${d%/} ]] && continue
		mkdir -p "$d${1#/}"
		if [[ -f $d/cpuset.cpus ]]; then
			cat "$d/cpuset.cpus" >"$d${1#/}/cpuset.cpus"
			cat "$d/cpuset.mems" >"$d${1#/}/cpuset.mems"
		fi
	done
}

# The runtime's own count of CRI calls: containerd's gRPC server metrics
# (grpc_server_handled_total, runtime.v1 Runtime and Image services) at
# RUNTIME_METRICS, which hack/local-runtime configures from
# CK_RUNTIME_METRICS.  Counted at the runtime, every caller the same way:
# the agents' own kubelet_runtime_operations_total are not comparable (the
# upstream kubelet counts only its runtime manager's calls, not those of its
# log manager, stats provider or streaming server).
RUNTIME_METRICS=${CK_RUNTIME_METRICS:=127.0.0.1:10263}
export CK_RUNTIME_METRICS

# cri_calls_by_method FILE: the calls so far, "Method count" lines sorted,
# into FILE; fails (FILE empty) when the runtime serves no metrics.
cri_calls_by_method() {
	curl -sf --max-time 10 "http://$RUNTIME_METRICS/v1/metrics" | awk '
		/^grpc_server_handled_total\{/ && /grpc_service="runtime\.v1\.(Runtime|Image)Service"/ {
			if (match($0, /grpc_method="[^"]*"/)) n[substr($0, RSTART + 13, RLENGTH - 14)] += $NF
			seen = 1
		}
		END { for (m in n) print m, n[m]; exit !seen }' | sort >"$1"
	[[ -s $1 ]]
}

# cri_calls_delta BEFORE AFTER: the methods that grew, by how much, most
# first.
cri_calls_delta() {
	awk 'NR == FNR { before[$1] = $2; next }
		$2 - before[$1] > 0 { print $1, $2 - before[$1] }' "$1" "$2" | sort -k2,2nr -k1,1
}

# cri_calls_sum FILE: the total of a cri_calls_by_method or delta file.
cri_calls_sum() {
	awk '{ s += $2 } END { printf "%d\n", s }' "$1"
}
