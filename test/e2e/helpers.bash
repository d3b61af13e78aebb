# Helpers for the end-to-end bats suites: `load helpers` in a .bats file.
#
# They drive the real runtime (hack/local-runtime: containerd + runc + CNI)
# through crictl, and run the ckubelet agent under test.
#
# Environment (test/run-e2e sets them; defaults suit a run from the repo):
#   BUILD      build directory holding ckubelet, pause and images/ (default <repo>/build)
#   CRICTL     crictl binary (default test/tools/bin/crictl, else crictl on PATH)
#   CK_RUNTIME_DIR  state directory of the local runtime (see hack/local-runtime)

E2E_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$E2E_REPO/build}
export BUILD

if [[ -z ${CRICTL:-} ]]; then
	if [[ -x $E2E_REPO/test/tools/bin/crictl ]]; then
		CRICTL=$E2E_REPO/test/tools/bin/crictl
	else
		CRICTL=$(command -v crictl || echo crictl)
	fi
fi
export CRICTL

# Used by the .bats files. The pause image's name is whatever
# images/build-images gave it.
# shellcheck disable=SC2034
PAUSE_IMAGE=$(tar -xOf "$BUILD/images/pause.tar" index.json 2>/dev/null |
	jq -r '.manifests[0].annotations["io.containerd.image.name"]' 2>/dev/null || true)
[[ -n $PAUSE_IMAGE && $PAUSE_IMAGE != null ]] || PAUSE_IMAGE=localhost/pause:3.10
# shellcheck disable=SC2034
BUSYBOX_IMAGE=localhost/busybox:1.35

# The pods' network of the runtime under test: hack/local-runtime's bridge
# (10.88.0.0/16), or with CK_E2E_RUNTIME=docker hack/local-docker's
# (10.89.0.0/16); the host is .0.1 on it.
# shellcheck disable=SC2034
if [[ ${CK_E2E_RUNTIME:-containerd} == docker ]]; then
	E2E_POD_NET=10.89
else
	E2E_POD_NET=10.88
fi

# Upstream's failCgroupV1 (true by default) refuses a cgroup v1 host, and
# these machines are v1 (a hybrid layout): every agent the suites start there
# says --fail-cgroupv1=false; on a v2 host (the VM of test/vm) the default
# stands.
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
	E2E_CGROUP_V1_FLAGS=()
else
	E2E_CGROUP_V1_FLAGS=(--fail-cgroupv1=false)
fi

# e2e_tmpdir: this test's temp dir, or the file's when called from setup_file.
e2e_tmpdir() {
	echo "${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-${BATS_TMPDIR:-/tmp}}}"
}

# runtime_up: start the local runtime (idempotent) and export its endpoints:
# containerd (hack/local-runtime), or with CK_E2E_RUNTIME=docker (test/run-e2e)
# ckubelet-dockershim on a private dockerd (hack/local-docker).
runtime_up() {
	local endpoint up=local-runtime
	[[ ${CK_E2E_RUNTIME:-containerd} == docker ]] && up=local-docker
	endpoint=$(CK_BUILD_DIR=$BUILD "$E2E_REPO/hack/$up" up 3>&- | tail -n 1)
	[[ $endpoint == unix://* ]] || {
		echo "runtime_up: hack/$up up printed '$endpoint', not an endpoint" >&2
		return 1
	}
	export CONTAINER_RUNTIME_ENDPOINT=$endpoint
	export IMAGE_SERVICE_ENDPOINT=$endpoint
}

# registry_up: start the local registry (hack/local-registry, idempotent)
# and export what its `up` prints: REGISTRY, REGISTRY_USER,
# REGISTRY_PASSWORD and REGISTRY_IMAGE (the private image).
registry_up() {
	local out line
	out=$(CK_BUILD_DIR=$BUILD "$E2E_REPO/hack/local-registry" up 3>&-) || {
		echo "registry_up: hack/local-registry up failed" >&2
		return 1
	}
	while IFS= read -r line; do
		case $line in
		REGISTRY=* | REGISTRY_USER=* | REGISTRY_PASSWORD=* | REGISTRY_IMAGE=*)
			export "${line?}"
			;;
		esac
	done <<<"$out"
	[[ -n ${REGISTRY_IMAGE:-} ]] || {
		echo "registry_up: no REGISTRY_IMAGE in the output of hack/local-registry up" >&2
		return 1
	}
}

# crictl ARGS...: crictl against the local runtime (--config /dev/null: no
# /etc/crictl.yaml, and no warning about its absence).
crictl() {
	[[ -n ${CONTAINER_RUNTIME_ENDPOINT:-} ]] || {
		echo "crictl: CONTAINER_RUNTIME_ENDPOINT unset: call runtime_up first" >&2
		return 1
	}
	"$CRICTL" --config /dev/null --runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
		--image-endpoint "${IMAGE_SERVICE_ENDPOINT:-$CONTAINER_RUNTIME_ENDPOINT}" \
		--timeout 30s "$@"
}

# wait_for [-t SECONDS] [-i INTERVAL] CMD...: run CMD until it succeeds.
# Fails (and says what it waited for) after SECONDS (default 30).
wait_for() {
	local timeout=30 interval=0.2 deadline
	while [[ ${1:-} == -* ]]; do
		case $1 in
		-t) timeout=$2 && shift 2 ;;
		-i) interval=$2 && shift 2 ;;
		--) shift && break ;;
		*) echo "wait_for: unknown option $1" >&2 && return 2 ;;
		esac
	done
	deadline=$((SECONDS + timeout))
	until "$@"; do
		if ((SECONDS >= deadline)); then
			echo "wait_for: timed out after ${timeout}s waiting for: $*" >&2
			return 1
		fi
		sleep "$interval"
	done
}

# start_ckubelet MANIFEST_DIR [FLAGS...]: run the agent in the background
# (MANIFEST_DIR "": no --pod-manifest-path, e.g. when --config sets it).
# Sets CKUBELET_PID, CKUBELET_LOG, CKUBELET_ROOT, CKUBELET_PIDFILE; waits
# until its read-only port answers /healthz (CKUBELET_READY_TIMEOUT seconds,
# default 30).  The agent runs under a subshell that waits for it and writes
# its exit status (128+N: killed by signal N) next to the pid file
# (ckubelet_status_file): whoever stops it later (another test, or
# teardown_file, in other processes than its parent) learns how it ended.
start_ckubelet() {
	local manifests=$1 tmp statusfile
	shift
	[[ -x $BUILD/ckubelet ]] || {
		echo "start_ckubelet: $BUILD/ckubelet not built (make)" >&2
		return 1
	}
	[[ -n ${CONTAINER_RUNTIME_ENDPOINT:-} ]] || runtime_up
	tmp=$(e2e_tmpdir)
	CKUBELET_ROOT=$tmp/root
	CKUBELET_LOG=$tmp/ckubelet.log
	CKUBELET_PIDFILE=$tmp/ckubelet.pid
	CKUBELET_READ_ONLY_PORT=10255
	statusfile=$(ckubelet_status_file)
	mkdir -p "$CKUBELET_ROOT"
	rm -f "$CKUBELET_PIDFILE" "$statusfile"
	# 3>&-: bats waits for fd 3 to close before it finishes a test.  The
	# subshell drops the traps and errexit of bats (a failing wait must not
	# end it before it writes the status).
	(
		trap - ERR DEBUG RETURN
		set +eET
		"$BUILD/ckubelet" \
			--container-runtime-endpoint="$CONTAINER_RUNTIME_ENDPOINT" \
			${manifests:+--pod-manifest-path="$manifests"} \
			--root-dir="$CKUBELET_ROOT" \
			--hostname-override=e2e-node \
			--read-only-port="$CKUBELET_READ_ONLY_PORT" \
			--address=127.0.0.1 --cert-dir="$tmp/pki" \
			"${E2E_CGROUP_V1_FLAGS[@]}" -v=4 "$@" </dev/null &
		pid=$!
		echo "$pid" >"$CKUBELET_PIDFILE.new" && mv "$CKUBELET_PIDFILE.new" "$CKUBELET_PIDFILE"
		wait "$pid"
		echo $? >"$statusfile.new" && mv "$statusfile.new" "$statusfile"
	) </dev/null >"$CKUBELET_LOG" 2>&1 3>&- &
	local deadline=$((SECONDS + ${CKUBELET_READY_TIMEOUT:-30})) why="" status
	until [[ -s $CKUBELET_PIDFILE ]]; do
		if ((SECONDS >= deadline)); then
			echo "start_ckubelet: no pid in $CKUBELET_PIDFILE after ${CKUBELET_READY_TIMEOUT:-30}s" >&2
			return 1
		fi
		sleep 0.05
	done
	CKUBELET_PID=$(<"$CKUBELET_PIDFILE")
	export CKUBELET_PID CKUBELET_LOG CKUBELET_ROOT CKUBELET_PIDFILE CKUBELET_READ_ONLY_PORT

	until ckubelet_ready; do
		if process_gone "$CKUBELET_PID"; then
			status=$(ckubelet_exit_status) || status="unknown"
			why="ended at start with $(describe_exit_status "$status")"
		elif ((SECONDS >= deadline)); then
			why="no /healthz on port $CKUBELET_READ_ONLY_PORT after ${CKUBELET_READY_TIMEOUT:-30}s"
		fi
		if [[ -n $why ]]; then
			echo "start_ckubelet: ckubelet (pid $CKUBELET_PID) $why; last lines of $CKUBELET_LOG:" >&2
			tail -n 30 "$CKUBELET_LOG" >&2 || true
			if process_gone "$CKUBELET_PID"; then
				forget_ckubelet
			else
				stop_ckubelet || true
			fi
			return 1
		fi
		sleep 0.2
	done
}

# ckubelet_log_lines REGEX: the last 40 lines of the agent's log that match
# REGEX (grep -E), on stderr: what a failed test shows of the agent's
# decisions.  Nothing when there is no log.
ckubelet_log_lines() {
	[[ -f ${CKUBELET_LOG:-} ]] || return 0
	echo "last lines of $CKUBELET_LOG matching '$1':" >&2
	grep -E -- "$1" "$CKUBELET_LOG" | tail -n 40 >&2 || true
}

# ckubelet_status_file: where start_ckubelet's subshell writes the exit
# status of the agent of CKUBELET_PIDFILE.
ckubelet_status_file() {
	echo "${CKUBELET_PIDFILE%.pid}.status"
}

# ckubelet_exit_status: the exit status of the agent of CKUBELET_PIDFILE,
# once it is gone (waits up to 10 s for its subshell to write it).
ckubelet_exit_status() {
	local file
	file=$(ckubelet_status_file)
	wait_for -t 10 -i 0.05 test -s "$file" 2>/dev/null || {
		echo "ckubelet_exit_status: no exit status in $file" >&2
		return 1
	}
	cat "$file"
}

# describe_exit_status STATUS: "exit status 1", "SIGSEGV (status 139)".
describe_exit_status() {
	local s=$1 name
	if [[ $s =~ ^[0-9]+$ ]] && ((s > 128)) && name=$(kill -l $((s - 128)) 2>/dev/null); then
		echo "SIG$name (status $s)"
	else
		echo "exit status $s"
	fi
}

# forget_ckubelet: the agent of CKUBELET_PIDFILE is gone: drop its records.
forget_ckubelet() {
	rm -f "${CKUBELET_PIDFILE:-/nonexistent}" "$(ckubelet_status_file)"
	unset CKUBELET_PID
}

# ckubelet_ready: the agent's read-only port answers /healthz.
ckubelet_ready() {
	curl -sf --max-time 2 "http://127.0.0.1:${CKUBELET_READ_ONLY_PORT:-10255}/healthz" >/dev/null
}

# process_gone PID: true when PID no longer exists.
process_gone() {
	! kill -0 "$1" 2>/dev/null
}

# stop_ckubelet: stop the agent as a service manager does: SIGTERM, then
# SIGKILL if it is still there after CKUBELET_STOP_TIMEOUT seconds (default
# 30).  Idempotent (nothing to do once stopped).  Succeeds only when the
# agent was running and exited with status 0 (src/cmd/main.c: the sync loop
# returns after SIGTERM and main returns 0); otherwise fails, naming what
# happened (it had died before the stop, a signal or another status, a hang
# at SIGTERM), with the tail of its log.
stop_ckubelet() {
	local pid=${CKUBELET_PID:-} timeout=${CKUBELET_STOP_TIMEOUT:-30} why="" status
	[[ -z $pid && -f ${CKUBELET_PIDFILE:-/nonexistent} ]] && pid=$(<"$CKUBELET_PIDFILE")
	[[ -n $pid ]] || return 0
	if process_gone "$pid"; then
		status=$(ckubelet_exit_status) || status=unknown
		why="had died before it was stopped: $(describe_exit_status "$status")"
	else
		kill -TERM "$pid" 2>/dev/null || true
		if wait_for -t "$timeout" -i 0.1 process_gone "$pid" 2>/dev/null; then
			status=$(ckubelet_exit_status) || status=unknown
			[[ $status == 0 ]] || why="ended at SIGTERM with $(describe_exit_status "$status"), not exit status 0"
		else
			kill -KILL "$pid" 2>/dev/null || true
			wait_for -t 10 -i 0.1 process_gone "$pid" 2>/dev/null || true
			why="was still running ${timeout}s after SIGTERM (hung); killed with SIGKILL"
		fi
	fi
	forget_ckubelet
	[[ -z $why ]] && return 0
	echo "stop_ckubelet: ckubelet (pid $pid) $why; last lines of ${CKUBELET_LOG:-its log}:" >&2
	tail -n 30 "${CKUBELET_LOG:-/dev/null}" >&2 || true
	return 1
}

# kill_ckubelet SIGNAL: end the agent on purpose with SIGNAL (KILL: a crash,
# no cleanup), wait until it is gone and check that SIGNAL is what ended it;
# then forget it (stop_ckubelet has nothing left to do).
kill_ckubelet() {
	local sig=$1 pid=${CKUBELET_PID:-} status want
	[[ -n $pid ]] || pid=$(<"$CKUBELET_PIDFILE")
	kill -"$sig" "$pid" || true # already gone: the status says how
	wait_for -t 30 -i 0.1 process_gone "$pid" || return 1
	status=$(ckubelet_exit_status) || return 1
	forget_ckubelet
	want=$((128 + $(kill -l "$sig")))
	[[ $status == "$want" ]] || {
		echo "kill_ckubelet: ckubelet (pid $pid) ended with $(describe_exit_status "$status")," \
			"not SIG${sig#SIG}; last lines of $CKUBELET_LOG:" >&2
		tail -n 30 "$CKUBELET_LOG" >&2 || true
		return 1
	}
}

# query_empty CMD...: CMD (a query: crictl, kubectl, curl...) succeeds and
# prints nothing.  A query that fails is a failure, not an absence.
query_empty() {
	local out rc=0
	out=$("$@") || rc=$?
	if ((rc != 0)); then
		echo "query_empty: query failed (status $rc): $*" >&2
		return 2
	fi
	[[ -z $out ]]
}

# remove_all_pods: stop and remove every pod sandbox in the runtime.
remove_all_pods() {
	local id
	for id in $(crictl pods -q); do
		crictl stopp "$id" >/dev/null || true
		crictl rmp -f "$id" >/dev/null || true
	done
}
