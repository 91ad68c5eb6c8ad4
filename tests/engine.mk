# tests/engine.mk: tests of ops, model, gradients, parity.
