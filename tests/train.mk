# tests/train.mk: tests of trainer, worker, checkpoints, determinism.
