# bench/engine.mk: engine throughput against PyTorch.
