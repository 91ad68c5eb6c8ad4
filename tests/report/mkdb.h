/* mkdb.h: report_mkdb's profiles (mkdb_profiles.c), the databases beside
 * the fixture that test_report.sh renders. */
#ifndef TLM_TESTS_REPORT_MKDB_H
#define TLM_TESTS_REPORT_MKDB_H

#include "db/db.h"

/* Writes profile `name` into the open database d (inside the caller's
 * transaction); 0, or non-zero with e filled. */
int mkdb_profile(db *d, const char *name, tlm_err *e);

#endif
