/* all.h: --all (all.c) and --list (list.c): whole-database views. */
#ifndef TLM_REPORTS_ALL_H
#define TLM_REPORTS_ALL_H

#include "reports/rpt.h"

/* Writes DIR/report.md and the folders DIR/tables and DIR/figures (see all.c). */
int rpt_write_all(rpt_ctx *c, const char *dir, tlm_err *e);
/* Prints the tables and figures the database can fill, with their cells. */
int rpt_list(rpt_ctx *c, FILE *f, tlm_err *e);

#endif
