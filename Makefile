# Makefile: builds libcachet (static and shared), the cachet CLI and the tests.
#   make            library + CLI at build/cachet
#   make check      build and run every test (prints "N passed, M failed")
#   make demo       build and run `cachet demo`
#   make sanitize   the whole suite under ASan + UBSan (in build-asan/)
#   make deps       install missing Debian packages (as root)
#   make python     the Python package into build/python (docs/PYTHON.md); make bench-python
#   make golden     regenerate the golden files of generated code
#   make fuzz [SECONDS=60]   the libFuzzer targets tests/fuzz/fuzz_*.c (clang), SECONDS each
#   make fuzz-plans SECONDS=N [SEED=S] [ENGINES=interp,native,opencl] [FINDINGS=DIR]
#                   the differential fuzzer's long campaign (docs/FUZZ.md)
#   make install PREFIX=/usr/local

BUILD    ?= build
PREFIX   ?= /usr/local
CC       ?= cc
SAN      ?=
VERSION  := 0.1.0
# the shared library's ABI version, CACHET_SOVERSION in include/cachet.h (bumped there on an
# incompatible change of the header; CHANGES.md)
SOVERSION := $(shell sed -n 's/^\#define CACHET_SOVERSION \([0-9][0-9]*\)$$/\1/p' include/cachet.h)
SONAME   := libcachet.so.$(SOVERSION)

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wconversion -Wno-sign-conversion -Wpointer-arith -Wcast-qual \
            -Wwrite-strings -Wundef -Wvla -Werror
OPT      := -O2 -g
ifeq ($(SAN),1)
OPT      := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDSAN    := -fsanitize=address,undefined
endif
CPPFLAGS := -Iinclude -Isrc -I$(BUILD)/gen -D_GNU_SOURCE -DCACHET_VERSION_STR=\"$(VERSION)\"
CFLAGS   := -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP
LDLIBS   := -lm -ldl -lpthread
# isl (libisl-dev): the exact dependence test of schedules (src/ir/deps.c)
EXTRA_LIBS := $(shell pkg-config --libs libxxhash hwloc sqlite3 jansson isl 2>/dev/null || echo -lxxhash -lhwloc -lsqlite3 -ljansson -lisl -lgmp)

LIB_SRC  := $(sort $(wildcard src/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard tools/*.c)))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPS_OK  := $(BUILD)/.deps-ok

.PHONY: all check demo sanitize deps golden install clean fuzz
all: $(BUILD)/libcachet.a $(BUILD)/libcachet.so $(BUILD)/cachet python

$(DEPS_OK): scripts/deps.sh
	@mkdir -p $(BUILD)
	@sh scripts/deps.sh
	@touch $@

deps:
	@sh scripts/deps.sh --force-check

# the runtime of distributed kernels, as text that src/gen/distgen.c copies into generated code
$(BUILD)/gen/dist_text.h: src/ir/distrt.h src/ir/distrt.c src/gen/distmpi.c.in scripts/embed.sh
	@mkdir -p $(dir $@)
	@sh scripts/embed.sh ctd_text_rt src/ir/distrt.h src/ir/distrt.c >$@.tmp
	@sh scripts/embed.sh ctd_text_mpi src/gen/distmpi.c.in >>$@.tmp
	@mv $@.tmp $@
$(BUILD)/obj/src/gen/distgen.o: $(BUILD)/gen/dist_text.h

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/libcachet.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# libcachet.so.$(VERSION) carries the SONAME libcachet.so.$(SOVERSION); libcachet.so.$(SOVERSION) (what
# programs load) and libcachet.so (what -lcachet finds) are symlinks to it, here and installed
$(BUILD)/libcachet.so: $(BUILD)/libcachet.so.$(VERSION)
	ln -sf libcachet.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(BUILD)/libcachet.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared $(OPT) $(LDSAN) -Wl,-soname,$(SONAME) -o $@ $^ $(EXTRA_LIBS) $(LDLIBS)

$(BUILD)/cachet: $(CLI_OBJ) $(BUILD)/libcachet.a
	$(CC) $(OPT) $(LDSAN) -o $@ $(CLI_OBJ) $(BUILD)/libcachet.a $(EXTRA_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/harness.h $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

check: all $(TEST_BIN) $(BUILD)/fuzz/difffuzz $(BUILD)/bench/bench_cuda
	@sh scripts/deps.sh --test
	@SAN=$(SAN) sh tests/run.sh $(BUILD)

demo: all
	./$(BUILD)/cachet demo

sanitize:
	$(MAKE) BUILD=build-asan SAN=1 check

golden: all
	@sh tests/golden/update.sh $(BUILD)

fuzz:
	@sh tests/fuzz/run.sh $(or $(SECONDS),60)

# make bench-codecache: cold compile vs disk hit vs memory hit of the code cache
.PHONY: bench-codecache
bench-codecache: $(BUILD)/bench/bench_codecache
	./$(BUILD)/bench/bench_codecache

$(BUILD)/bench/bench_codecache: bench/codecache/bench_codecache.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make bench-sim [BENCH_ARGS="N TILE"]: accesses per second of the exact cache simulator
.PHONY: bench-sim
bench-sim: $(BUILD)/bench/sim_speed
	./$(BUILD)/bench/sim_speed $(BENCH_ARGS)

$(BUILD)/bench/sim_speed: bench/model/sim_speed.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make bench-model: issue #35's tables: the 188-row model-vs-simulator table (fully associative,
# --quick --no-brute), every example at its own sizes on this machine's caches (--machine: predict
# vs simulate, both times; simulations over 180 s skipped), and the held-in random cases (10,000 of seed 20)
# with their set-associative levels LRU, then tree-PLRU (--plru), predicted by predict.
# make bench-model BENCH_ARGS="...": bench_model with those arguments only ("--quick --no-brute
# --only NAME --strict", "--random N --seed S [--plru] [--model-only]", "--machine --sim-max-s S");
# build/bench/bench_model alone: the full table with the 512^3 case and the brute-force LRU check.
.PHONY: bench-model
bench-model: $(BUILD)/bench/bench_model
ifeq ($(strip $(BENCH_ARGS)),)
	./$(BUILD)/bench/bench_model --quick --no-brute
	./$(BUILD)/bench/bench_model --machine
	./$(BUILD)/bench/bench_model --random 10000 --seed 20
	./$(BUILD)/bench/bench_model --random 10000 --seed 20 --plru
else
	./$(BUILD)/bench/bench_model $(BENCH_ARGS)
endif

# make bench-tiles [BENCH_ARGS=--quick]: the tile search vs an exhaustively simulated grid, its
# speed, and the TCE paper's two-index experiment (issue #5)
.PHONY: bench-tiles
bench-tiles: $(BUILD)/bench/bench_tiles
	./$(BUILD)/bench/bench_tiles $(BENCH_ARGS)

$(BUILD)/bench/bench_tiles: bench/model/bench_tiles.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

$(BUILD)/bench/bench_model: bench/model/bench_model.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/cachet.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libcachet.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcachet.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libcachet.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libcachet.so
	install -m 755 $(BUILD)/cachet $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' cachet.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cachet.pc

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

# make bench-gemm [BENCH_ARGS="--big --threads 1,2"]: cachet's sgemm/dgemm examples vs OpenBLAS on 1 and 2 threads, as a table
.PHONY: bench-gemm bench-deps
bench-gemm: $(BUILD)/bench/bench_gemm
	./$(BUILD)/bench/bench_gemm $(BENCH_ARGS)

bench-deps:
	@sh scripts/bench-deps.sh

$(BUILD)/.bench-deps-ok: scripts/bench-deps.sh
	@mkdir -p $(BUILD)
	@sh scripts/bench-deps.sh
	@touch $@

# LIBXSMM (bench-deps installs it where Debian packages it): compared at sizes <= 128
XSMM_FLAGS = $(if $(wildcard /usr/include/libxsmm.h),-DHAVE_LIBXSMM,)
XSMM_LIBS = $(if $(wildcard /usr/include/libxsmm.h),$(shell pkg-config --libs libxsmm 2>/dev/null || echo -lxsmm),)

# openblas_best: the OpenBLAS kernel set that computes gemm correctly and fastest here, whatever
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE the environment sets; the benches that compare with OpenBLAS
# run it first and re-execute with the winner (bench_util.h). make bench-openblas-pick shows the choice.
$(BUILD)/bench/openblas_best: bench/common/openblas_best.c bench/common/bench_util.h | $(BUILD)/.bench-deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -lopenblas -lm
$(BUILD)/bench/openblas_pick: bench/common/openblas_pick.c bench/common/bench_util.h | $(BUILD)/.bench-deps-ok $(BUILD)/bench/openblas_best
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -lopenblas -lm
.PHONY: bench-openblas-pick
bench-openblas-pick: $(BUILD)/bench/openblas_pick
	./$(BUILD)/bench/openblas_pick $(BENCH_ARGS)
$(BUILD)/bench/bench_gemm: bench/gemm/bench_gemm.c bench/common/bench_util.h bench/common/bench_kernel.h $(BUILD)/libcachet.a | $(BUILD)/.bench-deps-ok $(BUILD)/bench/openblas_best
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(XSMM_FLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(XSMM_LIBS) -lopenblas $(EXTRA_LIBS) $(LDLIBS)

# make bench-blas3 [BENCH_ARGS="--ops trmm --sizes 512,1024 --threads 1"]: trmm, trsm, syrk (and trmm_if,
# trmm as the square nest with an if) vs OpenBLAS (issue #31)
.PHONY: bench-blas3
bench-blas3: $(BUILD)/bench/bench_blas3
	./$(BUILD)/bench/bench_blas3 $(BENCH_ARGS)

$(BUILD)/bench/bench_blas3: bench/blas3/bench_blas3.c bench/common/bench_util.h bench/common/bench_kernel.h $(BUILD)/libcachet.a | $(BUILD)/.bench-deps-ok $(BUILD)/bench/openblas_best
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) -lopenblas $(EXTRA_LIBS) $(LDLIBS)

# make bench-contraction [BENCH_ARGS="--threads 1,2 --sizes 512,1024"]: the two-index transform vs two OpenBLAS dgemm calls
.PHONY: bench-contraction
bench-contraction: $(BUILD)/bench/bench_contraction
	./$(BUILD)/bench/bench_contraction $(BENCH_ARGS)

$(BUILD)/bench/bench_contraction: bench/contraction/bench_contraction.c bench/common/bench_util.h bench/common/bench_kernel.h $(BUILD)/libcachet.a | $(BUILD)/.bench-deps-ok $(BUILD)/bench/openblas_best
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) -lopenblas $(EXTRA_LIBS) $(LDLIBS)

# make bench-poly [BENCH_ARGS="--quick --small --only gemm,atax --threads 1,2 --reps N --budget S"]: the
# PolyBench-style suite (bench/poly/README.md): each kernel's plain nest under gcc -O3 and clang -O3 -mllvm
# -polly, its BLAS formulation (OpenBLAS at its best) and cachet auto, at PolyBench's LARGE sizes, verified
# its Halide peer (gemm, jacobi2d under Halide's autoschedulers), when Debian's libhalide14-0-dev is here
HALIDE_INC = /usr/include/halide14
POLY_HALIDE = $(if $(wildcard $(HALIDE_INC)/Halide.h),$(BUILD)/bench/poly_halide.so,)
.PHONY: bench-poly
bench-poly: $(BUILD)/bench/bench_poly $(BUILD)/cachet $(POLY_HALIDE)
	./$(BUILD)/bench/bench_poly $(BENCH_ARGS)

$(BUILD)/bench/poly_halide.so: bench/poly/halide/poly_halide.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O2 -std=c++17 -Wall -Wextra -Werror -fPIC -shared -isystem $(HALIDE_INC) -o $@ $< -lHalide14

$(BUILD)/bench/bench_poly: bench/poly/bench_poly.c bench/common/bench_util.h $(BUILD)/libcachet.a | $(BUILD)/.bench-deps-ok $(BUILD)/bench/openblas_best
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) -ldl $(EXTRA_LIBS) $(LDLIBS)

# make bench-auto [BENCH_ARGS="--threads 1,2 --cases sgemm,two-index --sizes 1024 --budget 20 --keep DIR"]: issue #30
# item 4: `cachet run --auto` (model only; with --budget also measured) on the plain-nest twins of the examples
# (auto_matmul, auto_dgemm, auto_two_index, auto_stencil5) vs every hand-written plan of the same computation,
# verified, as a table with the ratio to the best hand plan and a verdict (bench/auto/README.md);
# BENCH_ARGS=--quick is the test suite's run (tests/cli/auto_bench.sh)
.PHONY: bench-auto
bench-auto: $(BUILD)/bench/bench_auto
	./$(BUILD)/bench/bench_auto $(BENCH_ARGS)

$(BUILD)/bench/bench_auto: bench/auto/bench_auto.c bench/common/bench_util.h bench/common/bench_kernel.h $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make bench-stencil [BENCH_ARGS="--threads 1,2 --size 4096"]: the 5-point stencil vs the copy bandwidth bound and the plain loop
.PHONY: bench-stencil
bench-stencil: $(BUILD)/bench/bench_stencil
	./$(BUILD)/bench/bench_stencil $(BENCH_ARGS)

$(BUILD)/bench/bench_stencil: bench/stencil/bench_stencil.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make bench-distributed [RANKS="2 4" STENCIL_SIZES="2048 4096" GEMM_SIZES=1024]: issue #32's bench: halo exchange /
# panel broadcast vs compute per call on 2 and 4 ranks, cachet's distributed stencil and SUMMA gemm vs hand-written
# MPI peers (and PETSc's DMDA when installed), verified, as a table (bench/distributed/README.md)
.PHONY: bench-distributed
bench-distributed: $(BUILD)/cachet | $(BUILD)/.bench-deps-ok $(BUILD)/bench/openblas_best
	sh bench/distributed/run.sh $(BUILD)

# make bench-tune [BENCH_ARGS="--size 512 --gemm all|256,2048x32x2048 --budget 90 --skip-exhaustive --skip-pruning --selector"]: model-pruned vs
# exhaustive tuning, tuned vs hand-written sgemm, selector overhead (issue #7)
.PHONY: bench-tune
bench-tune: $(BUILD)/bench/bench_tune
	./$(BUILD)/bench/bench_tune $(BENCH_ARGS)

$(BUILD)/bench/bench_tune: bench/tune/bench_tune.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make bench-stencil-spmd [BENCH_ARGS="--quick --threads T"]: the HammerBlade stencil experiment (issue #8):
# SPMD 5-point stencil, non-cached vs cached with halo, branching vs branch-free, as a table
.PHONY: bench-stencil-spmd
bench-stencil-spmd: $(BUILD)/bench/bench_stencil_spmd
	./$(BUILD)/bench/bench_stencil_spmd $(BENCH_ARGS)

$(BUILD)/bench/bench_stencil_spmd: bench/stencil_spmd/bench_stencil_spmd.c $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make bench-opencl [BENCH_ARGS="--quick --reps N"]: sgemm on the OpenCL device (PoCL), cachet's kernel
# (examples/opencl_sgemm.cachet) vs CLBlast, 256..2048, with cold build vs binary load times. CLBlast runs
# with Xgemm parameters tuned for the device by clblast_tuner_xgemm, kept in $(BUILD)/bench/clblast-tuned/
# (tuned on the first run; BENCH_ARGS=--clblast-untuned: its defaults)
# make bench-opencl-tune-clblast [BENCH_ARGS="--clblast-fraction F"]: re-run CLBlast's tuner, then the bench
.PHONY: bench-opencl bench-opencl-tune-clblast
bench-opencl: $(BUILD)/bench/bench_opencl
	./$(BUILD)/bench/bench_opencl $(BENCH_ARGS)

bench-opencl-tune-clblast: $(BUILD)/bench/bench_opencl
	./$(BUILD)/bench/bench_opencl --clblast-tune $(BENCH_ARGS)

$(BUILD)/bench/bench_opencl: bench/opencl/bench_opencl.c $(BUILD)/libcachet.a | $(BUILD)/.bench-deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) -lclblast -lOpenCL $(EXTRA_LIBS) $(LDLIBS)

# make bench-cuda [BENCH_ARGS="--quick --reps N --sizes 1024,2048 --tune-budget S"]: on an NVIDIA GPU, cachet's
# CUDA sgemm/dgemm vs cuBLAS (1024..8192), the stencil vs the copy bandwidth, the tuned sgemm (docs/CUDA.md,
# "On a GPU"); CUDA and cuBLAS are loaded with dlopen (nothing CUDA at build time); exits 2 without a GPU.
# make check-gpu: the whole GPU suite (scripts/gpu_check.sh run), from gpu_probe/ when it is there, else build/
.PHONY: bench-cuda check-gpu
bench-cuda: $(BUILD)/bench/bench_cuda
	./$(BUILD)/bench/bench_cuda $(BENCH_ARGS)

check-gpu:
	sh scripts/gpu_check.sh run

$(BUILD)/bench/bench_cuda: bench/cuda/bench_cuda.c bench/common/bench_util.h $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make python: the Python package (python/, docs/PYTHON.md) into $(BUILD)/python with the library it was
# built with beside it, for PYTHONPATH=$(BUILD)/python $(PYTHON) -c "import cachet".
# Debian's interpreter: the first python3 on PATH may lack numpy and cffi.
PYTHON   ?= /usr/bin/python3
PY_SRC   := $(sort $(wildcard python/cachet/*.py))
PY_OUT   := $(BUILD)/python/cachet
.PHONY: python bench-python
python: $(PY_OUT)/_cachet_ffi.py $(PY_OUT)/$(SONAME) $(PY_SRC:python/cachet/%=$(PY_OUT)/%)

$(PY_OUT)/%.py: python/cachet/%.py
	@mkdir -p $(dir $@)
	cp $< $@

$(PY_OUT)/_cachet_ffi.py: include/cachet.h python/gen_ffi.py | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(PYTHON) python/gen_ffi.py include/cachet.h $(PY_OUT) >/dev/null

$(PY_OUT)/$(SONAME): $(BUILD)/libcachet.so.$(VERSION)
	@mkdir -p $(dir $@)
	cp $< $@

# make bench-python [BENCH_ARGS="--quick"]: per-call overhead from Python vs a raw C call and numpy, and
# sgemm from Python vs numpy.matmul (OpenBLAS) at 64..4096
bench-python: python $(BUILD)/bench/callraw.so $(BUILD)/bench/openblas_best
	CACHET_BENCH_RAW=$(BUILD)/bench/callraw.so CACHET_BENCH_OPENBLAS_BEST=$(BUILD)/bench/openblas_best PYTHONPATH=$(BUILD)/python $(PYTHON) bench/python/bench_python.py $(BENCH_ARGS)

$(BUILD)/bench/callraw.so: bench/python/callraw.c $(BUILD)/libcachet.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $< -L$(BUILD) -lcachet

# The differential fuzzer of the schedule and plan space (docs/FUZZ.md): tests/fuzz/plangen.c makes
# random kernels, tests/fuzz/difffuzz.c checks them in every engine. ct_run_options.checked is used
# when this tree's cachet.h has it (the bounds-checked native mode).
FUZZ_CHECKED := $(if $(shell grep -s 'int checked' include/cachet.h),-DFUZZ_HAVE_CHECKED,)
$(BUILD)/fuzz/difffuzz: tests/fuzz/difffuzz.c tests/fuzz/plangen.c tests/fuzz/plangen.h $(BUILD)/libcachet.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(FUZZ_CHECKED) $(CFLAGS) -o $@ tests/fuzz/difffuzz.c tests/fuzz/plangen.c $(BUILD)/libcachet.a $(LDSAN) $(EXTRA_LIBS) $(LDLIBS)

# make fuzz-plans SECONDS=N [SEED=S] [ENGINES=interp,native,opencl] [FINDINGS=DIR] [JOBS=J]
# [NATIVE_EVERY=N] (default 10: every 10th accepted kernel also natively / on OpenCL)
# [FAMILIES=classic|legal|all] (default all) [ENTRIES=selector:N,callable:N,package:N,python:N]:
# the long differential campaign; the seed defaults to the clock (make check uses seeds 1..3000 and
# 1000001..1000800); minimized findings go to FINDINGS (default $(BUILD)/fuzz-findings) with an INDEX.md
.PHONY: fuzz-plans
FUZZ_ENGINES := interp,native
fuzz-plans: $(BUILD)/fuzz/difffuzz
	nice -n 10 ./$(BUILD)/fuzz/difffuzz --seconds $(or $(SECONDS),600) --seed $(or $(SEED),$(shell date +%s)) \
		--engines $(or $(ENGINES),$(FUZZ_ENGINES)) --out $(or $(FINDINGS),$(BUILD)/fuzz-findings) \
		--jobs $(or $(JOBS),1) --native-every $(or $(NATIVE_EVERY),10) --families $(or $(FAMILIES),all) \
		$(if $(ENTRIES),--entries $(ENTRIES)) $(FUZZ_ARGS)
