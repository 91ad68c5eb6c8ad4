# tests/data.mk: tests of tokenizers, shards, tlm-data, evaluation.
