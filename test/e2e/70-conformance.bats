#!/usr/bin/env bats
# A fixed subset of the upstream e2e suite's node conformance specs
# (test/conformance/quick.txt: one or more per area ckubelet implements)
# against ckubelet as a node of the local cluster, through hack/conformance:
# upstream's own e2e.test and ginkgo, the real apiserver, the offline test
# images. The whole set, with the upstream kubelet beside it, is
# `make conformance` (docs/conformance.md).

load helpers
load cluster

setup_file() {
	wait_runtime_free
}

@test "upstream conformance: every spec of the quick subset passes on ckubelet" {
	local out=$BATS_FILE_TMPDIR/conformance want passed
	want=$(grep -cv -e '^#' -e '^$' "$E2E_REPO/test/conformance/quick.txt")
	CK_BUILD_DIR=$BUILD CK_CONFORMANCE_DIR=$out run "$E2E_REPO/hack/conformance" \
		--set quick --agents ckubelet
	echo "$output" | tail -n 30
	# every line of the summary: a spec that failed says why
	cat "$out/ckubelet/summary.tsv"
	[ "$status" -eq 0 ]
	passed=$(grep -c '^passed' "$out/ckubelet/summary.tsv")
	[ "$passed" -eq "$want" ]
}
