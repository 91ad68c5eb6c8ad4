/* suites.h: the evaluation suites and their tasks by name, one registry
 * that the config checks eval.suites, eval.commonsense_tasks and
 * eval.niah.tasks against (and takes their defaults from) and that
 * engine/eval dispatches on, so that a suite or task is named once.  The
 * config may not include engine/eval, so the names live here; what a suite
 * or task does is engine/eval's (commonsense.c keeps one row per task of
 * ENG_COMMONSENSE_MAP, checked against its count).
 * Must not: know how a suite scores. */
#ifndef TLM_ENGINE_CONFIG_SUITES_H
#define TLM_ENGINE_CONFIG_SUITES_H

#include <stddef.h>

/* XX(id, name).  val first: it is the trainer's (engine/train/train.h);
 * the others are engine/eval's, in the order they are documented. */
#define ENG_SUITE_MAP(XX)                                                                                        \
    XX(VAL, "val")                                                                                               \
    XX(WIKITEXT, "wikitext")                                                                                     \
    XX(LAMBADA, "lambada")                                                                                       \
    XX(COMMONSENSE, "commonsense")                                                                               \
    XX(NIAH, "niah")                                                                                             \
    XX(ALIGNMENT, "alignment")

/* XX(id, name): the commonsense tasks, in the order they run by default. */
#define ENG_COMMONSENSE_MAP(XX)                                                                                  \
    XX(PIQA, "piqa")                                                                                             \
    XX(HELLASWAG, "hellaswag")                                                                                   \
    XX(WINOGRANDE, "winogrande")                                                                                 \
    XX(ARC_EASY, "arc_easy")                                                                                     \
    XX(ARC_CHALLENGE, "arc_challenge")                                                                           \
    XX(SIQA, "siqa")                                                                                             \
    XX(BOOLQ, "boolq")                                                                                           \
    XX(OPENBOOKQA, "openbookqa")

/* XX(id, name): the S-NIAH tasks; the first needs no haystack file.  A
 * task's place seeds its items (engine/eval/niah.c): never reorder. */
#define ENG_NIAH_MAP(XX)                                                                                         \
    XX(S_NIAH_1, "s_niah_1")                                                                                     \
    XX(S_NIAH_2, "s_niah_2")                                                                                     \
    XX(S_NIAH_3, "s_niah_3")

#define TLM_XX_(id, name) ENG_SUITE_##id,
typedef enum eng_suite { ENG_SUITE_MAP(TLM_XX_) ENG_SUITE_COUNT } eng_suite;
#undef TLM_XX_
#define TLM_XX_(id, name) ENG_CS_##id,
typedef enum eng_cs_task { ENG_COMMONSENSE_MAP(TLM_XX_) ENG_CS_COUNT } eng_cs_task;
#undef TLM_XX_
#define TLM_XX_(id, name) ENG_NIAH_##id,
typedef enum eng_niah_task { ENG_NIAH_MAP(TLM_XX_) ENG_NIAH_COUNT } eng_niah_task;
#undef TLM_XX_

extern const char *const eng_suite_names[ENG_SUITE_COUNT];
extern const char *const eng_commonsense_names[ENG_CS_COUNT];
extern const char *const eng_niah_names[ENG_NIAH_COUNT];

/* The index of `name` among names[0..n), -1 if it is not there. */
int eng_name_find(const char *const *names, int n, const char *name);
/* names[0..n) as "a, b, c" in out (cut with "..." if it does not fit); returns out. */
const char *eng_names_join(const char *const *names, int n, char *out, size_t cap);

#endif
