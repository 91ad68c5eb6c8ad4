# db/local.mk: libtlmdb.a, the results.db API (included by Makefile.am).
# It uses common/ only, never the engine.
noinst_LIBRARIES += db/libtlmdb.a
db_libtlmdb_a_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
db_libtlmdb_a_SOURCES = \
	db/db.c db/db.h db/internal.h \
	db/rows.c \
	db/query.c \
	db/migrations.c \
	db/backup.c \
	db/checkpoint.c
nodist_db_libtlmdb_a_SOURCES = db/schema_sql.c
EXTRA_DIST += db/schema.sql db/embed.awk db/history
CLEANFILES += db/schema_sql.c

# The schema is compiled in from schema.sql, its one source.
db/schema_sql.c: $(srcdir)/db/schema.sql $(srcdir)/db/embed.awk
	$(AM_V_GEN)$(MKDIR_P) db && $(AWK) -f $(srcdir)/db/embed.awk $(srcdir)/db/schema.sql >$@-t && mv $@-t $@

DB_LIBS = db/libtlmdb.a $(SQLITE_LIBS) $(COMMON_LIBS)
