# bench/orchestrator.mk: tlmd overhead and ingestion.
