#!/usr/bin/env bats
# Container log rotation on the real containerd (upstream's
# containerLogManager): a static pod writes 500000 numbered lines (about
# 50 MB) in bursts, the agent rotates its log at 1 MiB, keeping 3 files, every
# 3 s; a follower on the secure port's /containerLogs (as `kubectl logs -f`)
# must see every line once, in order.

load helpers
load pods

# the writer: BURSTS bursts of LINES_PER_BURST lines, PAUSE seconds apart
# (the environment may change them, e.g. to stress the follower)
LINES_PER_BURST=${CK_E2E_LOGROT_LINES:-20000}
BURSTS=${CK_E2E_LOGROT_BURSTS:-25}
PAUSE=${CK_E2E_LOGROT_PAUSE:-1}
# 90 characters: a line is "line <n> <pad>\n", about 100 bytes
PAD=abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl
MAX_FILES=3

setup() {
	runtime_up
	MANIFESTS=$BATS_TEST_TMPDIR/manifests
	PODLOGS=$BATS_TEST_TMPDIR/pods
	GO_DIR=$BATS_TEST_TMPDIR/go
	mkdir -p "$MANIFESTS" "$PODLOGS" "$GO_DIR"
}

teardown() {
	[[ -n ${FOLLOW_PID:-} ]] && kill "$FOLLOW_PID" 2>/dev/null
	cleanup_agent
}

# log_dir: the writer container's log directory (empty until it exists)
log_dir() {
	local d
	for d in "$PODLOGS"/default_rotlog-"$E2E_NODE"_*/writer; do
		[[ -d $d ]] && echo "$d"
	done
}

# in_use_logs DIR: the container's log files as upstream's GetAllLogs
# counts them: not the temp files, not an original whose .gz is written.
in_use_logs() {
	local f
	for f in "$1"/0.log "$1"/0.log.*; do
		[[ -f $f ]] || continue
		[[ $f == *.tmp ]] && continue
		[[ $f != *.gz && -f $f.gz ]] && continue
		echo "${f##*/}"
	done
}

# listing_stable DIR: the directory does not change for two intervals (6 s)
listing_stable() {
	local before
	before=$(ls -l --time-style=+%s.%N "$1")
	sleep 6.5
	[[ $(ls -l --time-style=+%s.%N "$1") == "$before" ]]
}

follow_has_done() { grep -qsx 'done' "$BATS_TEST_TMPDIR/follow.out"; }
follow_connected() { [[ -s $BATS_TEST_TMPDIR/follow.headers ]]; }

# ts_near_now NAME: the rotation suffix of NAME (0.log.YYYYMMDD-hhmmss[.gz])
# is a local time within 10 minutes of now.
ts_near_now() {
	local ts=${1#0.log.} at
	ts=${ts%.gz}
	at=$(date -d "${ts:0:4}-${ts:4:2}-${ts:6:2} ${ts:9:2}:${ts:11:2}:${ts:13:2}" +%s) || return 1
	(($(date +%s) - at < 600 && at - $(date +%s) < 600))
}

@test "a fast writer's log is rotated at 1Mi, 3 files kept, older ones gzipped; -f loses no line" {
	cat >"$BATS_TEST_TMPDIR/config.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	podLogsDir: $PODLOGS
	containerLogMonitorInterval: 3s
	authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}
	authorization: {mode: AlwaysAllow}
	YAML
	# the writer starts once the follower is connected (/go/start)
	cat >"$MANIFESTS/rotlog.yaml" <<-YAML
	apiVersion: v1
	kind: Pod
	metadata: {name: rotlog}
	spec:
	  restartPolicy: Never
	  volumes: [{name: go, hostPath: {path: $GO_DIR}}]
	  containers:
	  - name: writer
	    image: localhost/busybox:1.35
	    command:
	    - sh
	    - -c
	    - |
	      until [ -e /go/start ]; do sleep 0.1; done
	      i=1; b=0
	      while [ \$b -lt $BURSTS ]; do
	        n=0
	        while [ \$n -lt $LINES_PER_BURST ]; do
	          echo "line \$i $PAD"
	          i=\$((i+1)); n=\$((n+1))
	        done
	        b=\$((b+1))
	        sleep $PAUSE
	      done
	      echo done
	      exec sleep 3600
	    volumeMounts: [{name: go, mountPath: /go}]
	YAML
	start_agent "$MANIFESTS" --config="$BATS_TEST_TMPDIR/config.yaml" \
		--container-log-max-size=1Mi --container-log-max-files=$MAX_FILES
	wait_for -t 60 phase_is rotlog Running
	wait_for -t 30 test -n "$(log_dir)"
	dir=$(log_dir)

	# the follower, before the first line is written
	curl -sk -N --max-time 600 -D "$BATS_TEST_TMPDIR/follow.headers" \
		-o "$BATS_TEST_TMPDIR/follow.out" \
		"https://127.0.0.1:10250/containerLogs/default/rotlog-$E2E_NODE/writer?follow=true" &
	FOLLOW_PID=$!
	wait_for -t 20 follow_connected
	grep -q '^HTTP/1.1 200' "$BATS_TEST_TMPDIR/follow.headers"
	touch "$GO_DIR/start"

	# while it writes: never more than MAX_FILES files in use; collect the
	# rotated names seen
	local deadline=$((SECONDS + 240)) most=0 n names
	declare -A seen=()
	until follow_has_done; do
		((SECONDS < deadline)) || {
			echo "no 'done' from the follower after 240 s" >&2
			tail -c 300 "$BATS_TEST_TMPDIR/follow.out" >&2
			return 1
		}
		names=$(in_use_logs "$dir")
		n=$(count_lines <<<"$names")
		((n > most)) && most=$n
		((n <= MAX_FILES)) || {
			echo "$n files in use (> $MAX_FILES): $names" >&2
			return 1
		}
		for f in $names; do
			[[ $f == 0.log ]] || seen[${f%.gz}]=1
		done
		sleep 0.2
	done
	kill "$FOLLOW_PID" 2>/dev/null || true
	wait "$FOLLOW_PID" 2>/dev/null || true
	unset FOLLOW_PID
	echo "most files in use: $most; rotations seen: ${!seen[*]}"

	# rotated more than twice, with upstream's names, in local time
	((${#seen[@]} >= 3))
	for f in "${!seen[@]}"; do
		[[ $f =~ ^0\.log\.[0-9]{8}-[0-9]{6}$ ]]
		ts_near_now "$f"
	done

	# at the end (no rotation in two intervals): the current log, the newest
	# rotated one as is, the older one gzipped
	wait_for -t 60 -i 0.1 listing_stable "$dir"
	run in_use_logs "$dir"
	echo "$output"
	[ "${#lines[@]}" -eq $MAX_FILES ]
	[ "${lines[0]}" = 0.log ]
	[[ ${lines[1]} =~ ^0\.log\.[0-9]{8}-[0-9]{6}\.gz$ ]]
	[[ ${lines[2]} =~ ^0\.log\.[0-9]{8}-[0-9]{6}$ ]]
	[[ ${lines[1]%.gz} < ${lines[2]} ]]
	gzip -t "$dir/${lines[1]}"
	[ -z "$(find "$dir" -name '*.tmp')" ]

	# on disk, the files kept hold the end of the output without a gap
	# (oldest first: gzipped, rotated, current)
	{ zcat "$dir/${lines[1]}"; cat "$dir/${lines[2]}" "$dir/0.log"; } |
		awk -v want=$((BURSTS * LINES_PER_BURST)) '
			$4 == "line" { if (n && $5 != n + 1) { print "gap after " n ": " $5; bad = 1; exit } n = $5 }
			END { if (bad) exit 1; if (n != want) { print "ends at " n; exit 1 } }'

	# the follower saw every line once, in order, across every rotation
	awk -v want=$((BURSTS * LINES_PER_BURST)) '
		$1 == "line" { if ($2 != n + 1) { print "after line " n " came " $2; bad = 1; exit } n = $2; next }
		$0 == "done" { next }
		{ print "unexpected line: " substr($0, 1, 80); bad = 1; exit }
		END { if (bad) exit 1; if (n != want) { print "got " n " lines of " want; exit 1 } }' \
		"$BATS_TEST_TMPDIR/follow.out"
}
