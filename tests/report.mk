# tests/report.mk: tests of tlm-report.
