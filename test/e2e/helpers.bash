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

# e2e_tmpdir: this test's temp dir, or the file's when called from setup_file.
e2e_tmpdir() {
	echo "${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-${BATS_TMPDIR:-/tmp}}}"
}

# runtime_up: start the local runtime (idempotent) and export its endpoints.
runtime_up() {
	local endpoint
	endpoint=$(CK_BUILD_DIR=$BUILD "$E2E_REPO/hack/local-runtime" up | tail -n 1)
	[[ $endpoint == unix://* ]] || {
		echo "runtime_up: hack/local-runtime up printed '$endpoint', not an endpoint" >&2
		return 1
	}
	export CONTAINER_RUNTIME_ENDPOINT=$endpoint
	export IMAGE_SERVICE_ENDPOINT=$endpoint
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
# Sets CKUBELET_PID, CKUBELET_LOG, CKUBELET_ROOT; waits until its read-only
# port answers /healthz (CKUBELET_READY_TIMEOUT seconds, default 30).
start_ckubelet() {
	local manifests=$1 tmp
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
	mkdir -p "$CKUBELET_ROOT"
	# 3>&-: bats waits for fd 3 to close before it finishes a test.
	"$BUILD/ckubelet" \
		--container-runtime-endpoint="$CONTAINER_RUNTIME_ENDPOINT" \
		${manifests:+--pod-manifest-path="$manifests"} \
		--root-dir="$CKUBELET_ROOT" \
		--hostname-override=e2e-node \
		--read-only-port="$CKUBELET_READ_ONLY_PORT" \
		--address=127.0.0.1 --cert-dir="$tmp/pki" \
		-v=4 "$@" </dev/null >"$CKUBELET_LOG" 2>&1 3>&- &
	CKUBELET_PID=$!
	echo "$CKUBELET_PID" >"$CKUBELET_PIDFILE"
	export CKUBELET_PID CKUBELET_LOG CKUBELET_ROOT CKUBELET_PIDFILE CKUBELET_READ_ONLY_PORT

	local deadline=$((SECONDS + ${CKUBELET_READY_TIMEOUT:-30})) why=""
	until ckubelet_ready; do
		if ! kill -0 "$CKUBELET_PID" 2>/dev/null; then
			wait "$CKUBELET_PID" && why="exited with status 0" || why="exited with status $?"
		elif ((SECONDS >= deadline)); then
			why="no /healthz on port $CKUBELET_READ_ONLY_PORT after ${CKUBELET_READY_TIMEOUT:-30}s"
		fi
		if [[ -n $why ]]; then
			echo "start_ckubelet: $why; last lines of $CKUBELET_LOG:" >&2
			tail -n 30 "$CKUBELET_LOG" >&2 || true
			stop_ckubelet
			return 1
		fi
		sleep 0.2
	done
}

# ckubelet_ready: the agent's read-only port answers /healthz.
ckubelet_ready() {
	curl -sf --max-time 2 "http://127.0.0.1:${CKUBELET_READ_ONLY_PORT:-10255}/healthz" >/dev/null
}

# process_gone PID: true when PID no longer exists.
process_gone() {
	! kill -0 "$1" 2>/dev/null
}

# stop_ckubelet: SIGTERM the agent, SIGKILL after 10 s. Idempotent.
stop_ckubelet() {
	local pid=${CKUBELET_PID:-}
	[[ -z $pid && -f ${CKUBELET_PIDFILE:-/nonexistent} ]] && pid=$(<"$CKUBELET_PIDFILE")
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		if ! wait_for -t 10 -i 0.1 process_gone "$pid" 2>/dev/null; then
			echo "stop_ckubelet: pid $pid ignored SIGTERM; killing" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	unset CKUBELET_PID
	rm -f "${CKUBELET_PIDFILE:-}"
}

# remove_all_pods: stop and remove every pod sandbox in the runtime.
remove_all_pods() {
	local id
	for id in $(crictl pods -q); do
		crictl stopp "$id" >/dev/null || true
		crictl rmp -f "$id" >/dev/null || true
	done
}
