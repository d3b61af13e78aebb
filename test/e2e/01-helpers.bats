#!/usr/bin/env bats
# The e2e helpers themselves, against a stand-in for the agent (a shell
# script serving /healthz and /pods on the read-only port with busybox
# httpd): stopping the agent fails when it crashed, ended with a status
# other than 0 or hung at SIGTERM; an absence check fails when its query
# does.  Without these, every suite could pass over a crashing agent.

load helpers
load pods

setup() {
	# the stand-in takes the agent's port: nothing may hold it
	if [[ -n $(ss -Hltn 'sport = :10255') ]]; then
		echo "setup: something listens on port 10255 already: $(ss -Hltnp 'sport = :10255')" >&2
		return 1
	fi
	FAKE_BUILD=$BATS_TEST_TMPDIR/build
	FAKE_WWW=$BATS_TEST_TMPDIR/www
	FAKE_HTTPD_PIDFILE=$BATS_TEST_TMPDIR/httpd.pid
	FAKE_CRASH_FLAG=$BATS_TEST_TMPDIR/crash
	mkdir -p "$FAKE_BUILD" "$FAKE_WWW"
	echo ok >"$FAKE_WWW/healthz"
	echo '{"kind":"PodList","items":[]}' >"$FAKE_WWW/pods"
	# FAKE_ON_TERM: exitN (exit N on SIGTERM) or ignore; FAKE_CRASH_FLAG:
	# once that file exists, it kills itself with SIGSEGV
	cat >"$FAKE_BUILD/ckubelet" <<-'SH'
	#!/bin/sh
	busybox httpd -f -p 127.0.0.1:10255 -h "$FAKE_WWW" &
	httpd=$!
	echo "$httpd" >"$FAKE_HTTPD_PIDFILE"
	echo "fake ckubelet: serving /healthz, on SIGTERM: $FAKE_ON_TERM"
	case $FAKE_ON_TERM in
	exit*) trap 'echo "fake ckubelet: SIGTERM"; kill $httpd; exit ${FAKE_ON_TERM#exit}' TERM ;;
	ignore) trap '' TERM ;;
	esac
	while :; do
		if [ -e "$FAKE_CRASH_FLAG" ]; then
			echo "fake ckubelet: crashing"
			kill $httpd
			kill -SEGV $$
		fi
		sleep 0.1
	done
	SH
	chmod +x "$FAKE_BUILD/ckubelet"
	export FAKE_WWW FAKE_HTTPD_PIDFILE FAKE_CRASH_FLAG
	# start_ckubelet wants an endpoint; the stand-in ignores it
	export CONTAINER_RUNTIME_ENDPOINT=unix:///nonexistent.sock
}

# stop_httpd: what a stand-in killed with SIGKILL leaves behind: its httpd.
stop_httpd() {
	if [[ -f $FAKE_HTTPD_PIDFILE ]]; then
		kill "$(<"$FAKE_HTTPD_PIDFILE")" 2>/dev/null || true
	fi
	wait_for -t 10 eval '[[ -z $(ss -Hltn "sport = :10255") ]]'
}

teardown() {
	if [[ -n ${CKUBELET_PID:-} ]]; then
		kill -KILL "$CKUBELET_PID" 2>/dev/null || true
	fi
	stop_httpd
}

start_fake() { # ON_TERM
	FAKE_ON_TERM=$1 BUILD=$FAKE_BUILD start_ckubelet ""
}

@test "helpers: an agent that exits 0 at SIGTERM stops cleanly" {
	start_fake exit0
	run stop_ckubelet
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ ! -e "$CKUBELET_PIDFILE" ]
	# once stopped, there is nothing left to stop
	unset CKUBELET_PID
	stop_ckubelet
}

@test "helpers: an agent that ends with another status at SIGTERM fails the stop" {
	start_fake exit3
	run stop_ckubelet
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"ended at SIGTERM with exit status 3, not exit status 0"* ]]
	# with the tail of its log
	[[ $output == *"fake ckubelet: SIGTERM"* ]]
}

@test "helpers: an agent that crashed before the stop fails it, naming the signal" {
	start_fake exit0
	touch "$FAKE_CRASH_FLAG"
	wait_for -t 10 process_gone "$CKUBELET_PID"
	run stop_ckubelet
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"had died before it was stopped: SIGSEGV (status 139)"* ]]
	[[ $output == *"fake ckubelet: crashing"* ]]
}

@test "helpers: an agent that hangs at SIGTERM is killed and fails the stop" {
	start_fake ignore
	pid=$CKUBELET_PID
	CKUBELET_STOP_TIMEOUT=2 run stop_ckubelet
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"was still running 2s after SIGTERM (hung); killed with SIGKILL"* ]]
	process_gone "$pid"
}

@test "helpers: kill_ckubelet checks the signal that ended the agent" {
	start_fake ignore
	kill_ckubelet KILL
	[ ! -e "$CKUBELET_PIDFILE" ]
	stop_httpd
	start_fake ignore
	touch "$FAKE_CRASH_FLAG"
	wait_for -t 10 process_gone "$CKUBELET_PID"
	run kill_ckubelet KILL
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"ended with SIGSEGV (status 139), not SIGKILL"* ]]
}

@test "helpers: an absence check fails when its query fails" {
	run query_empty true
	[ "$status" -eq 0 ]
	run query_empty echo something
	[ "$status" -eq 1 ]
	run query_empty false
	[ "$status" -eq 2 ]
	[[ $output == *"query failed (status 1): false"* ]]

	# nothing answers on the read-only port: not an absence
	run pod_absent web
	echo "$output"
	[ "$status" -ne 0 ]
	start_fake exit0
	pod_absent web
	echo '{"kind":"PodList","items":[{"metadata":{"name":"web-e2e-node"}}]}' >"$FAKE_WWW/pods"
	run pod_absent web
	[ "$status" -ne 0 ]
	stop_ckubelet

	# crictl that fails: not an empty runtime
	CRICTL=false run runtime_has_nothing_of web
	echo "$output"
	[ "$status" -ne 0 ]
	CRICTL=true runtime_has_nothing_of web
}
