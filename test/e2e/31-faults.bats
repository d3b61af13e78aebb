#!/usr/bin/env bats
# Faults (issue 12, part 5): ckubelet or containerd killed with SIGKILL at
# random moments of a churn of static pods (test/faults/kill-churn: no
# duplicate, no process run twice, no leak, convergence within 10 s), and
# the root directory's filesystem full.  The long runs whose figures are in
# docs/reliability.md are `make faults`; these are short ones.

load helpers
load pods

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	mkdir -p "$MANIFESTS"
}

teardown() {
	cleanup_agent
	if mountpoint -q "$BATS_TEST_TMPDIR/rootfs" 2>/dev/null; then
		umount -l "$BATS_TEST_TMPDIR/rootfs"
	fi
}

@test "kill -9 of the agent during a churn of pods: no duplicate, no re-run, no leak, converged within 10 s" {
	run "$E2E_REPO/test/faults/kill-churn" --fault=agent --kills=5 --pods=16 \
		--workdir="$BATS_TEST_TMPDIR/churn"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"faults=5 "*"violations=0"* ]]
}

@test "kill -9 of containerd during a churn of pods: pods kept, no re-run, no leak, converged within 10 s" {
	run "$E2E_REPO/test/faults/kill-churn" --fault=runtime --kills=3 --pods=16 \
		--workdir="$BATS_TEST_TMPDIR/churn"
	echo "$output"
	runtime_up # whatever happened, the runtime is up for the next tests
	[ "$status" -eq 0 ]
	[[ $output == *"faults=3 "*"violations=0"* ]]
}

# the agent's own writes failing with ENOSPC; eviction is about disk
# signals, not the subject here: only a memory threshold
@test "the root directory's filesystem full: running pods untouched, a new pod waits with a clear error, then starts" {
	local root=$BATS_TEST_TMPDIR/rootfs fill ctr started
	mkdir -p "$root"
	mount -t tmpfs -o size=24m ckubelet-e2e-full "$root"
	cat >"$MANIFESTS/steady.yaml" <<-'YAML'
	apiVersion: v1
	kind: Pod
	metadata: {name: steady}
	spec:
	  containers:
	  - name: main
	    image: localhost/busybox:1.35
	    command: [sleep, "3600"]
	    volumeMounts: [{name: scratch, mountPath: /scratch}]
	  volumes: [{name: scratch, emptyDir: {}}]
	YAML
	start_agent "$MANIFESTS" --root-dir="$root" '--eviction-hard=memory.available<1Mi'
	wait_for -t 60 phase_is steady Running
	ctr=$(running_containers_of steady)

	# fill it: dd stops at ENOSPC
	fill=$root/fill
	dd if=/dev/zero of="$fill" bs=1M >/dev/null 2>&1 || true
	[ "$(df --output=avail -B1 "$root" | tail -n 1)" -lt 65536 ]
	sed 's/steady/late/g' "$MANIFESTS/steady.yaml" >"$MANIFESTS/late.yaml"
	# the error names the pod, the step and the cause
	wait_for -t 60 grep -q 'late-e2e-node.*No space left on device' "$CKUBELET_LOG"
	grep 'late-e2e-node.*No space left on device' "$CKUBELET_LOG" | head -n 3
	sleep 5
	kill -0 "$CKUBELET_PID"
	[ "$(running_containers_of late | count_lines)" -eq 0 ]
	# the running pod untouched
	[ "$(running_containers_of steady)" = "$ctr" ]
	[ "$(restart_count steady main)" -eq 0 ]
	# nothing half-written: no temporary file of an atomic write left
	[ -z "$(find "$root" -name '.*.??????' -print)" ]

	rm -f "$fill"
	started=$SECONDS
	wait_for -t 60 phase_is late Running
	echo "late Running $((SECONDS - started)) s after the space returned"
	[ "$(running_containers_of steady)" = "$ctr" ]
	[ "$(restart_count steady main)" -eq 0 ]
}
