# engine/nn.mk: the model, the op interface and its CPU backend, the optimizer step.
