# bench/local.mk: benchmark programs (not tests): speed beside a peer.
include bench/engine.mk
include bench/orchestrator.mk
include bench/data.mk
include bench/report.mk
include bench/dash.mk
include bench/arch.mk
include bench/parallel.mk
