# engine/local.mk: the training engine, one folder a part (docs/engine.md,
# "The parts", says what each may use):
#   config/  libtlmconfig.a  job configs, presets, tapers, the account
#   format/  libtlmformat.a  token shards, manifests, safetensors
#   tok/     libtlmtok.a     tokenizers
#   model/, cpu/, train/, eval/  libtlmengine.a  the model and its op
#            table, the CPU backend, the trainer, the evaluation suites
#   cuda/    libtlmcuda.a    the CUDA backend (only when configure finds CUDA)
#   comm/    libtlmcomm.a    the communicator of a job of several ranks (MPI, NCCL)
# Programs link the smallest set they need: tlmd the config, tlm-data the
# tokenizers, tlm-worker everything (ENGINE_LIBS).
include engine/config/local.mk
include engine/format/local.mk
include engine/tok/local.mk
include engine/comm/local.mk

noinst_LIBRARIES += engine/libtlmengine.a
engine_libtlmengine_a_CPPFLAGS = $(AM_CPPFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $(BLAS_CFLAGS) $(PCRE2_CFLAGS)
engine_libtlmengine_a_CFLAGS = $(AM_CFLAGS) $(KERNEL_CFLAGS) $(OPENMP_CFLAGS)
engine_libtlmengine_a_SOURCES =
include engine/model/local.mk
include engine/cpu/local.mk
include engine/cuda/local.mk
include engine/train/local.mk
include engine/eval/local.mk

ENGINE_LIBS = $(CUDA_ENGINE_A) engine/libtlmengine.a engine/libtlmcomm.a $(TOK_LIBS) $(CONFIG_LIBS) $(JANSSON_LIBS) \
	$(BLAS_LIBS) $(OPENMP_CFLAGS) $(MPI_LIBS) $(CUDA_LIBS)
