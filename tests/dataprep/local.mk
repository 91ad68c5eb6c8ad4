# tests/dataprep/local.mk: tlm-data.
TESTS += tests/dataprep/test_tlm_data.sh
dist_check_SCRIPTS += tests/dataprep/test_tlm_data.sh
