# tests/orchestrator.mk: tests of tlmd, sweeps, results.db.
