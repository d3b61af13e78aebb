# ckubelet: the entry point.  `make` builds, `make run` starts a local
# runtime and the agent on examples/manifests, `make test` runs every test.
# Plain GNU make: every src/<module>/*.c is part of libckubelet.

VERSION     := 0.1.0
BUILD       ?= build
CC          ?= gcc
PKGS        := libnghttp2 libprotobuf-c jansson yaml-0.1 libssl libcrypto zlib
# libsystemd: headers only; the agent loads it when the systemd cgroup driver
# is used (src/util/sdbus.c)
PKG_CFLAGS   = $(shell pkg-config --cflags $(PKGS) libsystemd 2>/dev/null)
PKG_LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN        := -Wall -Wextra -Werror -Wno-format-zero-length -Wno-missing-field-initializers
BASE_CFLAGS := -std=c17 -D_GNU_SOURCE -Isrc -I$(BUILD)/gen $(WARN) -DCK_VERSION=\"$(VERSION)\"
CFLAGS      ?= -O2 -g
LIBS         = $(PKG_LIBS) -lpthread -lm -ldl
# The unit tests of the kubelet's HTTP server use libcurl as its client (a
# client that is not the project's own), the fake systemd sd-bus's server
# side; the agent links neither.
TEST_LIBS    = $(shell pkg-config --libs libcurl libsystemd 2>/dev/null) -lcmocka

# The protobuf code (CRI, device plugins) is generated from the project's
# own proto/*.proto.
PROTOS      := $(wildcard proto/*.proto)
GEN_SRCS    := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
GEN_HDR     := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.h,$(PROTOS))
LIB_SRCS    := $(filter-out src/cmd/%,$(wildcard src/*/*.c))
LIB_OBJS    := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_SRCS))
ASAN_OBJS   := $(patsubst src/%.c,$(BUILD)/asan/obj/%.o,$(LIB_SRCS)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/asan/obj/gen/%.o,$(GEN_SRCS))
UNIT_SRCS   := $(wildcard test/unit/test_*.c)
UNIT_BINS   := $(patsubst test/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
ASAN_BINS   := $(patsubst test/unit/%.c,$(BUILD)/asan/unit/%,$(UNIT_SRCS))
FUZZ_SRCS   := $(wildcard test/fuzz/fuzz_*.c)
FUZZ_BINS   := $(patsubst test/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
SAN         := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

.PHONY: all deps run run-docker test unit asan fuzz fuzz-long e2e e2e-docker critest fmt fmt-check bench bench-compare bench-dockershim faults test-vm conformance images clean
all: $(BUILD)/ckubelet $(BUILD)/ckubelet-dockershim $(BUILD)/pause images

deps:
	@hack/install-deps

# generated once per proto, never removed as intermediate files
.SECONDARY: $(GEN_SRCS) $(GEN_HDR)
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=proto --c_out=$(BUILD)/gen $<

# Every object depends on the generated header, so it exists before use.
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) -Wno-unused-parameter -c $< -o $@
$(BUILD)/obj/%.o: src/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/libckubelet.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/ckubelet: src/cmd/main.c $(BUILD)/libckubelet.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) $< -o $@ $(BUILD)/libckubelet.a $(LIBS)
# The CRI-to-Docker Engine shim: a second main over the same library.
$(BUILD)/ckubelet-dockershim: src/cmd/dockershim.c $(BUILD)/libckubelet.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) $< -o $@ $(BUILD)/libckubelet.a $(LIBS)

# The pause binary: static, no libc surprises inside the sandbox image.
$(BUILD)/pause: images/pause/pause.c
	@mkdir -p $(BUILD)
	$(CC) -std=c17 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -o $@ $<

images: $(BUILD)/pause
	@images/build-images $(BUILD)

# Unit tests: each file its own binary (its own process), cmocka runner.
$(BUILD)/unit/%: test/unit/%.c $(BUILD)/libckubelet.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) -Itest/unit -MMD -MP $< -o $@ $(BUILD)/libckubelet.a $(LIBS) $(TEST_LIBS)

$(BUILD)/asan/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) $(PKG_CFLAGS) -Wno-unused-parameter -c $< -o $@
$(BUILD)/asan/obj/%.o: src/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) $(PKG_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/asan/libckubelet.a: $(ASAN_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/asan/unit/%: test/unit/%.c $(BUILD)/asan/libckubelet.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) $(PKG_CFLAGS) -Itest/unit -MMD -MP $< -o $@ $(BUILD)/asan/libckubelet.a $(LIBS) $(TEST_LIBS)

# Fuzz targets: clang + libFuzzer; the library is built once, instrumented.
FUZZ_CFLAGS := $(BASE_CFLAGS) -Wno-unused-command-line-argument -O1 -g $(PKG_CFLAGS)
FUZZ_OBJS   := $(patsubst src/%.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRCS)) $(patsubst $(BUILD)/gen/%.c,$(BUILD)/fuzz/obj/gen/%.o,$(GEN_SRCS))
$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -Wno-unused-parameter -c $< -o $@
$(BUILD)/fuzz/obj/%.o: src/%.c $(GEN_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
$(BUILD)/fuzz/libckubelet.a: $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/fuzz/%: test/fuzz/%.c $(BUILD)/fuzz/libckubelet.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -MMD -MP $< -o $@ $(BUILD)/fuzz/libckubelet.a $(LIBS)

# Measurements that are not tests (bench/README.md).
$(BUILD)/bench/prober_cpu: bench/prober_cpu.c $(BUILD)/libckubelet.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) -Itest/unit $< -o $@ $(BUILD)/libckubelet.a $(LIBS) -lcmocka

$(BUILD)/bench/pod_memory: bench/pod_memory.c $(BUILD)/libckubelet.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) $< -o $@ $(BUILD)/libckubelet.a $(LIBS)

unit: $(UNIT_BINS)
	@test/run-unit $(BUILD)/unit $(UNIT_BINS)
asan: $(ASAN_BINS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 test/run-unit $(BUILD)/asan/unit $(ASAN_BINS)
fuzz: $(FUZZ_BINS)
	@test/run-fuzz $(BUILD)/fuzz $(FUZZ_BINS)
# Every fuzz target for FUZZ_SECONDS (default 600) each, growing the cached
# corpus (test/run-fuzz says where); not part of `make test`.
fuzz-long: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(or $(FUZZ_SECONDS),600) test/run-fuzz $(BUILD)/fuzz $(FUZZ_BINS)
e2e: all
	@test/run-e2e $(BUILD)

# ckubelet's standalone and cluster-node suites through ckubelet-dockershim
# on Docker Engine instead of containerd (docs/dockershim.md: what differs).
E2E_DOCKER_SUITES ?= test/e2e/10-static-pods.bats test/e2e/20-pod-features.bats \
	test/e2e/40-lifecycle.bats test/e2e/55-cluster-workloads.bats \
	test/e2e/56-cluster-logs.bats test/e2e/57-cluster-exec.bats
e2e-docker: all
	@CK_E2E_RUNTIME=docker test/run-e2e $(BUILD) $(E2E_DOCKER_SUITES)

# critest, the upstream CRI validation suite, against containerd and against
# ckubelet-dockershim on Docker Engine (test/critest; docs/dockershim.md).
critest: deps all
	@test/tools/build test/tools/bin critest nnp
	@test/critest $(BUILD)

FMT_FILES = $(shell git ls-files 'src/*.c' 'src/*.h' 'test/*.c' 'test/*.h' 'images/*.c' 'bench/*.c' 2>/dev/null)
fmt:
	clang-format -i $(FMT_FILES)
fmt-check:
	@test/check-format $(FMT_FILES)

# The whole suite, as CI runs it (.ci/run calls exactly this).
test: deps
	@test/run-all

run: deps all
	@hack/run-local $(BUILD)

# The same pods through ckubelet-dockershim on a private Docker Engine.
run-docker: deps all
	@hack/run-local $(BUILD) docker

bench: deps all
	@bench/run $(BUILD)
# ckubelet and the upstream kubelet side by side (bench/compare; builds the
# upstream kubelet into the tools cache first).
bench-compare: deps all
	@bench/compare $(BUILD)
# ckubelet on containerd and through ckubelet-dockershim on Docker Engine
# (bench/dockershim).
bench-dockershim: deps all
	@bench/dockershim $(BUILD)

# kill -9 of the agent, then of containerd, at 50 random moments of a churn of
# 100 static pods: the figures of docs/reliability.md (test/faults/run).
faults: deps all
	@test/faults/run $(BUILD)

# The standalone e2e suites on cgroup v2 with systemd as init, with both
# cgroup drivers, in a Debian 12 guest under QEMU (test/vm/run; docs/vm.md).
test-vm: deps all
	@test/vm/run $(BUILD)

# The upstream e2e suite's node conformance specs against ckubelet and the
# upstream kubelet as a node of hack/local-cluster; writes docs/conformance.md
# (hack/conformance; builds e2e.test, the kubelet and the test images first).
conformance: deps all
	@hack/conformance

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(ASAN_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(UNIT_BINS:=.d) $(ASAN_BINS:=.d) \
	$(FUZZ_BINS:=.d)
