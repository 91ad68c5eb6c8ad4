# bench/engine.mk: engine throughput against PyTorch.
# Run: make bench/bench_engine && ./bench/bench_engine [--threads 2] [--steps 5]
noinst_PROGRAMS += bench/bench_engine
bench_bench_engine_SOURCES = bench/bench_engine.c bench/bench_model.h
bench_bench_engine_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $(BLAS_CFLAGS) \
	-DTLM_TORCH_PYTHON='"$(TORCH_PYTHON)"' -DTLM_BENCH_TORCH_SCRIPT='"$(abs_top_srcdir)/bench/bench_engine_torch.py"'
bench_bench_engine_LDADD = $(ENGINE_LIBS)
EXTRA_DIST += bench/bench_engine_torch.py

# The CUDA backend's throughput on a preset (scripts/device-check.sh runs it
# with bench/bench_cuda_torch.py on the GPU machine).
noinst_PROGRAMS += bench/bench_cuda
bench_bench_cuda_SOURCES = bench/bench_cuda.c
bench_bench_cuda_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
bench_bench_cuda_LDADD = $(ENGINE_LIBS)
EXTRA_DIST += bench/bench_cuda_torch.py
# Whether a sweep's result depends on the BLAS kernel (issue 14's criterion; hours of training):
# from the repository root of an in-tree build, sh bench/kernel_sensitivity.sh (docs/recipe-cpu.md)
EXTRA_DIST += bench/kernel_sensitivity.sh
# the recipe candidates it was run on (docs/recipe-cpu.md, "The candidates")
EXTRA_DIST += bench/recipe
# Whether every __syncthreads and warp shuffle of engine/cuda/ is needed and
# caught by the emulated tests (about half a minute a mutant on 2 cores):
# from the repository root of a configured in-tree build,
#   sh bench/cuda_mutants.sh [--out FILE]   (docs/engine.md, "The emulated CUDA build")
EXTRA_DIST += bench/cuda_mutants.sh
# How many of engine/cuda/'s __global__ functions make check's emulated
# tests execute (the emulator's TLM_CUDA_EMU_KERNEL_LOG against a grep):
#   sh bench/cuda_kernels_run.sh   (docs/engine.md, "The emulated CUDA build")
EXTRA_DIST += bench/cuda_kernels_run.sh
