# tensorweave build. `make` builds the shared library and the Python
# extension; `make test` and `make demo` install missing dependencies first.

PYTHON   ?= python3
CXX      ?= g++
CC       ?= cc
BUILD    ?= build
GEN      := $(BUILD)/gen
OBJ      := $(BUILD)/obj
LIB      := $(BUILD)/lib/libtensorweave.so
JOBS     ?= $(shell nproc)

# OPTIMIZE and SANITIZE let the sanitizer builds (make asan / make tsan) reuse
# every rule below with their own flags in their own BUILD directory.
OPTIMIZE ?= -O2 -g1
SANITIZE ?=
CXXFLAGS ?= $(OPTIMIZE)
CXXFLAGS += $(SANITIZE) -std=c++17 -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
            -I. -I$(GEN) -I/usr/include/eigen3 -DEIGEN_USE_THREADS -MMD -MP
# gRPC C++ (Debian's libgrpc++-dev) carries the distributed runtime's RPCs.
GRPC_CFLAGS := $(shell pkg-config --cflags grpc++)
GRPC_LIBS   := $(shell pkg-config --libs grpc++)
GRPC_PLUGIN := $(shell command -v grpc_cpp_plugin)
CXXFLAGS += $(GRPC_CFLAGS)
# Image codecs: libjpeg-turbo (Debian libjpeg62-turbo-dev) and libpng (libpng-dev).
LDLIBS   := -lprotobuf $(GRPC_LIBS) -ldnnl -ljpeg -lpng -lpthread
# zlib (zlib1g-dev): compressed record files (runtime/util/zlib_stream.cc).
LDLIBS   += -lz
# RE2 (libre2-dev) for the regex ops (runtime/kernels/regex_ops.cc), TensorFlow's regex syntax.
LDLIBS   += -lre2

PROTOS     := $(wildcard runtime/proto/*.proto)
PROTO_CC   := $(patsubst runtime/proto/%.proto,$(GEN)/tensorweave/proto/%.pb.cc,$(PROTOS))
PROTO_H    := $(PROTO_CC:.cc=.h)
# Only the files declaring services get gRPC stubs (<name>.grpc.pb.cc/.h).
GRPC_PROTOS := runtime/proto/tensorflow_services.proto
GRPC_CC     := $(patsubst runtime/proto/%.proto,$(GEN)/tensorweave/proto/%.grpc.pb.cc,$(GRPC_PROTOS))
GRPC_H      := $(GRPC_CC:.cc=.h)
LIB_SRCS   := $(shell find runtime c_api -name '*.cc' ! -name '*_test.cc' | sort)
LIB_OBJS   := $(patsubst %.cc,$(OBJ)/%.o,$(LIB_SRCS)) \
              $(patsubst $(GEN)/%.cc,$(OBJ)/gen/%.o,$(PROTO_CC) $(GRPC_CC))

RUNTIME_TEST_SRCS := $(wildcard tests/runtime/*.cc)
RUNTIME_TEST_OBJS := $(patsubst %.cc,$(OBJ)/%.o,$(RUNTIME_TEST_SRCS))
RUNTIME_TEST_BIN  := $(BUILD)/tests/runtime_tests
C_TEST_SRCS       := $(wildcard tests/c/*.c)
C_TEST_BINS       := $(patsubst tests/c/%.c,$(BUILD)/tests/c/%,$(C_TEST_SRCS))
C_EXAMPLE_BINS    := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

FUZZ_COMMON_SRCS := tools/fuzz/fuzz_harness.cc tools/fuzz/fuzz_values.cc tools/fuzz/op_node_builder.cc
FUZZ_BINS        := $(BUILD)/tools/fuzz/graph_fuzzer $(BUILD)/tools/fuzz/op_sweep

# Sanitizer builds live in their own BUILD directories and never touch build/.
SAN_OPTIMIZE  := -O1 -g -fno-omit-frame-pointer
ASAN_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN_SANITIZE := -fsanitize=thread
ASAN_BUILD    ?= build/asan
TSAN_BUILD    ?= build/tsan
ASAN_MAKE      = BUILD=$(ASAN_BUILD) OPTIMIZE="$(SAN_OPTIMIZE)" SANITIZE="$(ASAN_SANITIZE)"
TSAN_MAKE      = BUILD=$(TSAN_BUILD) OPTIMIZE="$(SAN_OPTIMIZE)" SANITIZE="$(TSAN_SANITIZE)"
# Python is not instrumented, so the ASan runtime is preloaded and leak
# checking is off (the interpreter's own allocations would swamp it).
# Allocations beyond 4 GiB fail as malloc would instead of aborting.
ASAN_OPTIONS_VALUE := detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=4096:\
	abort_on_error=0:print_summary=1
ASAN_ENV       = ASAN_OPTIONS=$(ASAN_OPTIONS_VALUE) UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TSAN_ENV       = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:history_size=4
LIBASAN        = $(shell $(CC) -print-file-name=libasan.so)
# The suites make tsan runs: session, executor, rendezvous (in executor_test).
SESSION_TEST_SRCS := tests/runtime/direct_session_test.cc tests/runtime/executor_test.cc \
                     tests/runtime/control_flow_executor_test.cc \
                     tests/runtime/session_test_util.cc tests/runtime/graph_test_util.cc
SESSION_TEST_OBJS := $(patsubst %.cc,$(OBJ)/%.o,$(SESSION_TEST_SRCS))
SESSION_TEST_BIN  := $(BUILD)/tests/session_tests

# Fuzzers: `make test` runs each briefly with a fixed seed; `make fuzz` runs
# them (against the ASan build) for FUZZ_SECONDS with FUZZ_SEED. Failures
# fail test-fuzz unless FUZZ_ENFORCE=0 (for looking at the counts only).
# The make-test run is the same cases every time (a seed and a case count;
# the seconds only cap a slow machine), so CI sees no case untried here.
FUZZ_TEST_SEED    ?= 1
FUZZ_TEST_CASES   ?= 4000
FUZZ_TEST_SECONDS ?= 60
# A case is a hang past 15 s: legal cases that fill gigabytes (BroadcastTo to
# [2^31-1] int8, seed 1 case 733, 3.6 s alone) must not fail on a busy machine.
FUZZ_TEST_TIMEOUT ?= 15
FUZZ_ENFORCE      ?= 1
FUZZ_SEED         ?= $(shell date +%s)
FUZZ_SECONDS      ?= 600
FUZZ_TIMEOUT      ?= 20
FUZZ_FINDINGS     ?=
FUZZ_CORPUS       := --corpus tests/fixtures/tf_graphs --corpus tests/fixtures/tf_control_flow \
                     --corpus tests/fixtures/tf_tensor_list \
                     --corpus tests/fixtures/tf_logging \
                     --corpus tests/fixtures/tf_functions \
                     --corpus tests/fixtures/tf_batch_norm \
                     --corpus tests/fixtures/tf_depthwise \
                     --corpus tests/fixtures/tf_math_special
FUZZ_FLAGS         = $(if $(FUZZ_FINDINGS),--findings $(FUZZ_FINDINGS))

.PHONY: all deps lib python lint test test-runtime test-c test-python test-fuzz test-interop fuzz \
        asan tsan asan-suite asan-python tsan-suite demo bench clean
.DEFAULT_GOAL := all

all: lib python

deps:
	bash tools/install_deps.sh

lib: $(LIB)

# Protobuf sources are generated under a virtual "tensorweave/proto" path so
# C++ includes and Python imports both read tensorweave/proto/<name>.
# One protoc run per file (a pattern rule's two targets come from one run),
# so adding or changing one .proto regenerates only its own sources.
$(GEN)/tensorweave/proto/%.pb.cc $(GEN)/tensorweave/proto/%.pb.h: runtime/proto/%.proto
	@mkdir -p $(GEN)
	protoc -Itensorweave/proto=runtime/proto --cpp_out=$(GEN) $<

# Generated sources stay after the build (make would delete them as
# intermediate files, then regenerate them and rebuild all their users).
.SECONDARY: $(PROTO_CC) $(PROTO_H) $(GRPC_CC) $(GRPC_H)

$(GEN)/tensorweave/proto/%.grpc.pb.cc $(GEN)/tensorweave/proto/%.grpc.pb.h: runtime/proto/%.proto
	@mkdir -p $(GEN)
	@test -n "$(GRPC_PLUGIN)" || { echo "grpc_cpp_plugin not found: run make deps"; exit 1; }
	protoc -Itensorweave/proto=runtime/proto --grpc_out=$(GEN) \
	    --plugin=protoc-gen-grpc=$(GRPC_PLUGIN) $<

$(OBJ)/gen/%.o: $(GEN)/%.cc | $(PROTO_H) $(GRPC_H)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(OBJ)/%.o: %.cc | $(PROTO_H) $(GRPC_H)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# The hot float kernels are compiled once per instruction set from one
# source (runtime/kernels/float_kernels_body.h); cpu_dispatch.cc picks a
# build at run time. -ffp-contract=off keeps exact arithmetic bitwise the
# same on every ISA. Each object must export only its own ISA's symbols.
ISA_FLAGS_baseline :=
# (Eigen's AVX code has an unused variable, and GCC 12 warns falsely about
# _mm512_undefined_ps inside its own AVX-512 intrinsics.)
ISA_FLAGS_avx2     := -mavx2 -mfma -Wno-unused-variable
ISA_FLAGS_avx512   := -mavx2 -mfma -mavx512f -mavx512dq -mavx512bw -mavx512vl \
                      -Wno-unused-variable -Wno-maybe-uninitialized
$(OBJ)/runtime/kernels/float_kernels_%.o: runtime/kernels/float_kernels_%.cc | $(PROTO_H) $(GRPC_H)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(ISA_FLAGS_$*) -ffp-contract=off -c $< -o $@
	bash tools/check_isa_symbols.sh $@ $*

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(SANITIZE) -shared -o $@ $^ -Wl,-soname,libtensorweave.so $(LDLIBS)

# The SWIG extension, the generated protobuf modules and a copy of the
# shared library land inside python/tensorweave (all git-ignored).
python: $(LIB)
	$(PYTHON) setup.py -q build_ext --inplace

# Test sources compile one object each (through the $(OBJ)/%.o rule), so a
# change rebuilds one file and -j compiles them side by side.
$(RUNTIME_TEST_BIN): $(RUNTIME_TEST_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(SANITIZE) $(RUNTIME_TEST_OBJS) -o $@ -L$(BUILD)/lib -ltensorweave \
	    -Wl,-rpath,$(abspath $(BUILD)/lib) -lgtest -lgtest_main $(LDLIBS)

$(BUILD)/tests/c/%: tests/c/%.c $(wildcard tests/c/*.h) $(wildcard c_api/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SANITIZE) -std=c99 -Wall -Werror -I. -I$(BUILD)/include $< -o $@ -L$(BUILD)/lib \
	    -ltensorweave -Wl,-rpath,$(abspath $(BUILD)/lib)

$(BUILD)/tools/fuzz/%: tools/fuzz/%.cc $(FUZZ_COMMON_SRCS) $(wildcard tools/fuzz/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< $(FUZZ_COMMON_SRCS) -o $@ -L$(BUILD)/lib -ltensorweave \
	    -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)

# C++ benchmarks (bench/*.cc), one binary each.
$(BUILD)/bench/%: bench/%.cc $(LIB) | $(PROTO_H) $(GRPC_H)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< -o $@ -L$(BUILD)/lib -ltensorweave \
	    -Wl,-rpath,$(abspath $(BUILD)/lib) $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(wildcard c_api/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -Wall -Werror -I. $< -o $@ -L$(BUILD)/lib -ltensorweave \
	    -Wl,-rpath,$(abspath $(BUILD)/lib)

# ---- C API headers, pkg-config and install (issue 11 part 6, CAPI) ----
# TensorFlow programs include <tensorflow/c/c_api.h> (and tf_tensor.h,
# tf_status.h, ...): the build lays the headers out that way in
# $(BUILD)/include, and `make install PREFIX=...` installs
#   lib/libtensorweave.so, lib/libtensorflow.so -> libtensorweave.so
#     (TensorFlow programs link with -ltensorflow; the symlink lets their
#     build lines stay as they are),
#   include/tensorflow/c/*.h,
#   lib/pkgconfig/tensorweave.pc and tensorflow.pc (relocatable: both find
#     the prefix from their own place through ${pcfiledir}).
# tf_tstring.h comes from c_api/tf_tstring.h (the TF_TString part) when it
# exists. docs/c_api_install.md says more.
PREFIX               ?= /usr/local
C_API_HEADER_NAMES   := c_api.h c_api_macros.h tf_datatype.h tf_status.h tf_buffer.h tf_tensor.h \
                        tf_tstring.h
C_API_BUILD_HEADERS  := $(addprefix $(BUILD)/include/tensorflow/c/,$(C_API_HEADER_NAMES))
C_API_PKGCONFIG      := $(BUILD)/lib/pkgconfig/tensorweave.pc $(BUILD)/lib/pkgconfig/tensorflow.pc

.PHONY: headers install
headers: $(C_API_BUILD_HEADERS) $(C_API_PKGCONFIG)
lib: headers
# The C test programs include <tensorflow/c/c_api.h> from $(BUILD)/include.
$(C_TEST_BINS): $(C_API_BUILD_HEADERS)

$(BUILD)/include/tensorflow/c/%.h: c_api/%.h
	@mkdir -p $(dir $@)
	cp $< $@

# The .pc files sit in <prefix>/lib/pkgconfig; the library in <prefix>/lib.
$(BUILD)/lib/pkgconfig/%.pc: c_api/pkgconfig.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@NAME@|$*|' -e 's|@LIBRARY@|$(if $(filter tensorflow,$*),tensorflow,tensorweave)|' \
	    -e 's|@PREFIX@|$${pcfiledir}/../..|' -e 's|@LIBDIR@|$${prefix}/lib|' $< > $@

install: $(LIB) headers
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/tensorflow/c
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libtensorweave.so
	ln -sf libtensorweave.so $(DESTDIR)$(PREFIX)/lib/libtensorflow.so
	install -m 644 $(C_API_BUILD_HEADERS) $(DESTDIR)$(PREFIX)/include/tensorflow/c/
	install -m 644 $(C_API_PKGCONFIG) $(DESTDIR)$(PREFIX)/lib/pkgconfig/
# ---- end of the C API install block ----

# The formatters' configs are the repo's .clang-format and ruff.toml; the
# versions are pinned by tools/install_deps.sh so every machine agrees;
# make test runs it first.
CLANG_FORMAT ?= clang-format-14
FORMATTED_C  := $(shell find c_api runtime swig tests tools examples bench \
                  \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) ! -name '*_wrap.cc' | sort)

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(CLANG_FORMAT) --dry-run -Werror $(FORMATTED_C)

test-runtime: $(RUNTIME_TEST_BIN)
	$(RUNTIME_TEST_BIN)

# Each C program runs twice: plainly, then under valgrind, which must see no
# leak and no invalid access (tests/c/valgrind.supp lists the leaks of
# libraries we use, each with its reason).
test-c: $(C_TEST_BINS)
	@for t in $(C_TEST_BINS); do \
	  echo "== $$t"; (cd tests/c && ../../$$t) || exit 1; \
	  (cd tests/c && valgrind -q --error-exitcode=9 --leak-check=full --suppressions=valgrind.supp \
	      --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
	      ../../$$t > /dev/null) || exit 1; \
	done

test-python: python $(FUZZ_BINS)
	$(PYTHON) -m pytest -q tests/c_api tests/python

test-fuzz: $(FUZZ_BINS)
	@failed=0; \
	$(BUILD)/tools/fuzz/graph_fuzzer --brief --seed $(FUZZ_TEST_SEED) --seconds $(FUZZ_TEST_SECONDS) \
	    --max-cases $(FUZZ_TEST_CASES) --timeout $(FUZZ_TEST_TIMEOUT) $(FUZZ_CORPUS) $(FUZZ_FLAGS) || failed=1; \
	$(BUILD)/tools/fuzz/op_sweep --brief --seed $(FUZZ_TEST_SEED) --seconds $(FUZZ_TEST_SECONDS) \
	    --max-cases $(FUZZ_TEST_CASES) --timeout $(FUZZ_TEST_TIMEOUT) $(FUZZ_FLAGS) || failed=1; \
	if [ $$failed = 1 ]; then \
	  if [ "$(FUZZ_ENFORCE)" = 1 ]; then echo "test-fuzz: cases failed"; exit 1; fi; \
	  echo "test-fuzz: cases failed (not enforced: FUZZ_ENFORCE=0)"; \
	fi

# Interop with real TensorFlow (tests/interop): TensorFlow runs only in its own
# virtualenv, INTEROP_VENV (made once by tools/interop_venv.sh; an existing one
# with tensorflow is used as it is, e.g. INTEROP_VENV=/work/tfvenv), as server
# and client subprocesses of the tests, which run in our Python.
INTEROP_VENV ?= $(BUILD)/interop-venv
INTEROP_TF   ?= tensorflow-cpu==2.21.0

test-interop: python
	PYTHON=$(PYTHON) bash tools/interop_venv.sh $(INTEROP_VENV) $(INTEROP_TF)
	INTEROP_PYTHON=$(abspath $(INTEROP_VENV))/bin/python INTEROP_REQUIRED=1 \
	    $(PYTHON) -m pytest -q tests/interop

test: deps
	$(MAKE) lint
	$(MAKE) -j$(JOBS) lib
	$(MAKE) -j$(JOBS) python $(RUNTIME_TEST_BIN) $(C_TEST_BINS) $(FUZZ_BINS)
	$(MAKE) test-runtime test-c test-python test-fuzz

# Long fuzzing, both fuzzers at once, each for FUZZ_SECONDS, on the ASan
# build: make fuzz FUZZ_SECONDS=3600 FUZZ_SEED=42 FUZZ_FINDINGS=findings.md
fuzz:
	$(MAKE) -j$(JOBS) $(ASAN_MAKE) lib
	$(MAKE) $(ASAN_MAKE) $(patsubst $(BUILD)/%,$(ASAN_BUILD)/%,$(FUZZ_BINS))
	@echo "fuzzing with seed $(FUZZ_SEED) for $(FUZZ_SECONDS) s; logs in $(ASAN_BUILD)/fuzz-*.log"
	@$(ASAN_ENV) $(ASAN_BUILD)/tools/fuzz/graph_fuzzer --seed $(FUZZ_SEED) --seconds $(FUZZ_SECONDS) \
	    --timeout $(FUZZ_TIMEOUT) $(FUZZ_CORPUS) $(FUZZ_FLAGS) > $(ASAN_BUILD)/fuzz-graph.log 2>&1 & g=$$!; \
	$(ASAN_ENV) $(ASAN_BUILD)/tools/fuzz/op_sweep --seed $(FUZZ_SEED) --seconds $(FUZZ_SECONDS) \
	    --timeout $(FUZZ_TIMEOUT) $(FUZZ_FLAGS) > $(ASAN_BUILD)/fuzz-sweep.log 2>&1 & s=$$!; \
	wait $$g; gs=$$?; wait $$s; ss=$$?; \
	grep -h -E '^(FAIL|  report|  reproduce)' $(ASAN_BUILD)/fuzz-graph.log $(ASAN_BUILD)/fuzz-sweep.log | head -n 60; \
	tail -n 2 $(ASAN_BUILD)/fuzz-graph.log $(ASAN_BUILD)/fuzz-sweep.log; \
	test $$gs = 0 && test $$ss = 0

# ASan+UBSan: the library, the extension, the gtests, the C programs, the
# pytest suites and the fuzzers' test run, all instrumented.
asan:
	$(MAKE) python
	$(MAKE) -j$(JOBS) $(ASAN_MAKE) lib
	$(MAKE) -j$(JOBS) $(ASAN_MAKE) asan-suite

# Run inside the ASan make (BUILD=$(ASAN_BUILD)).
asan-suite: $(RUNTIME_TEST_BIN) $(C_TEST_BINS) $(FUZZ_BINS) asan-python
	$(ASAN_ENV) $(RUNTIME_TEST_BIN)
	@for t in $(C_TEST_BINS); do \
	  echo "== $$t"; (cd tests/c && $(ASAN_ENV) ../../$$t) || exit 1; \
	done
	cd $(BUILD)/shadow && $(ASAN_ENV) LD_PRELOAD=$(LIBASAN) $(PYTHON) -m pytest -q -p no:cacheprovider \
	    tests/c_api tests/python
	$(MAKE) $(ASAN_MAKE) test-fuzz FUZZ_TEST_SECONDS=$(FUZZ_TEST_SECONDS) FUZZ_ENFORCE=$(FUZZ_ENFORCE) \
	    FUZZ_FINDINGS=$(FUZZ_FINDINGS) ASAN_OPTIONS=$(ASAN_OPTIONS_VALUE)

# The tests load REPO/build/lib/libtensorweave.so and REPO/python, so the
# instrumented library and extension get a shadow repository: copies of
# tests/ and python/ (the .py files), links to the sources, and its
# build/lib pointing at $(BUILD)/lib. The extension is compiled here from
# the wrapper `make python` generated.
PY_EXT_SUFFIX = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
PY_INCLUDES   = $(shell $(PYTHON) -c 'import sysconfig, numpy; \
                print("-I" + sysconfig.get_paths()["include"], "-I" + numpy.get_include())')
PY_EXTENSION  := $(BUILD)/python/_pywrap_tensorweave.so
# Every helper source in swig/ beside the generated wrapper, as setup.py
# compiles them.
SWIG_HELPER_SRCS := $(filter-out swig/tf_session_wrap.cc,$(wildcard swig/*.cc))
$(PY_EXTENSION): swig/tf_session_wrap.cc $(SWIG_HELPER_SRCS) \
                 $(wildcard swig/*.h) c_api/c_api.h $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(OPTIMIZE) $(SANITIZE) -std=c++17 -fPIC -shared -Wno-unused-parameter -I. $(PY_INCLUDES) \
	    $(filter %.cc,$^) -o $@ -L$(BUILD)/lib -ltensorweave -Wl,-rpath,'$$ORIGIN'

asan-python: $(PY_EXTENSION)
	rm -rf $(BUILD)/shadow && mkdir -p $(BUILD)/shadow/build/lib
	cp -r tests python pyproject.toml setup.py $(BUILD)/shadow/
	find $(BUILD)/shadow -name __pycache__ -prune -exec rm -rf {} +
	cd $(BUILD)/shadow && rm -f python/tensorweave/_pywrap_tensorweave*.so python/tensorweave/libtensorweave.so
	for d in c_api runtime examples swig; do ln -s $(abspath $$d) $(BUILD)/shadow/$$d; done
	ln -s $(abspath $(LIB)) $(BUILD)/shadow/build/lib/libtensorweave.so
	ln -s $(abspath $(BUILD)/tools) $(BUILD)/shadow/build/tools
	ln -s ../../build/lib/libtensorweave.so $(BUILD)/shadow/python/tensorweave/libtensorweave.so
	cp $(PY_EXTENSION) $(BUILD)/shadow/python/tensorweave/_pywrap_tensorweave$(PY_EXT_SUFFIX)

$(SESSION_TEST_BIN): $(SESSION_TEST_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(SANITIZE) $(SESSION_TEST_OBJS) -o $@ -L$(BUILD)/lib -ltensorweave \
	    -Wl,-rpath,$(abspath $(BUILD)/lib) -lgtest -lgtest_main $(LDLIBS)

# ThreadSanitizer over the session, executor and rendezvous tests.
tsan:
	$(MAKE) -j$(JOBS) $(TSAN_MAKE) lib
	$(MAKE) $(TSAN_MAKE) tsan-suite

tsan-suite: $(SESSION_TEST_BIN)
	$(TSAN_ENV) $(SESSION_TEST_BIN)

demo: deps
	$(MAKE) -j$(JOBS) lib
	$(MAKE) python $(C_EXAMPLE_BINS)
	PYTHONPATH=python $(PYTHON) examples/quickstart.py
	PYTHONPATH=python $(PYTHON) examples/train_digits.py
	for e in $(C_EXAMPLE_BINS); do (cd examples && ../$$e) || exit 1; done

bench: lib python $(BUILD)/bench/grpc_floor
	PYTHONPATH=python $(PYTHON) bench/session_overhead.py
	PYTHONPATH=python $(PYTHON) bench/train_step.py
	PYTHONPATH=python $(PYTHON) bench/conv_net.py
	PYTHONPATH=python $(PYTHON) bench/graph_optimizer.py
	PYTHONPATH=python $(PYTHON) bench/matmul_shapes.py
	$(BUILD)/bench/grpc_floor

clean:
	rm -rf $(BUILD) python/tensorweave/_pywrap_tensorweave*.so python/tensorweave/pywrap_tensorweave.py \
	    python/tensorweave/libtensorweave.so python/tensorweave/proto/*_pb2.py swig/*_wrap.cc

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
