# engine/train.mk: trainer, data loader, checkpoints.
