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

# The CRI calls an agent made so far: the sum of its
# kubelet_runtime_operations_total (the same family in both agents) from
# the read-only port's /metrics; empty if it does not answer.
cri_ops() { # PORT
	curl -sf --max-time 10 "http://127.0.0.1:$1/metrics" |
		awk '/^kubelet_runtime_operations_total[{ ]/ { s += $NF; n++ } END { if (n) printf "%d\n", s }'
}
