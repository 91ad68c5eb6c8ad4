# tests/db/local.mk: results.db: the API, migrations.
# The test programs (test_x.c, built with AM_CPPFLAGS, linked with $(ENGINE_LIBS)
# unless a line below says otherwise: tests/local.mk):
C_TESTS += tests/db/test_db \
	tests/db/test_migrate
tests_db_test_db_LDADD = $(DB_LIBS)
tests_db_test_migrate_LDADD = $(DB_LIBS)
