/* tokenizer.h: TLM's tokenizers (text <-> token ids) and the check that ties
 * token shards to a job's tokenizer.
 *
 * Three kinds, one API (docs/tokenizers.md has the details):
 *   bytes    256 ids, id = byte value; no special tokens.
 *   llama3   byte-level BPE from a tiktoken rank file of 128,000 ranks
 *            (llama3.tiktoken) + 256 special tokens at 128000..128255
 *            (<|begin_of_text|>, <|end_of_text|>, ..., Llama 3.1 names).
 *   bpeN     a byte-level BPE of N ids trained by `tlm-data train-bpe`:
 *            bpeN.tiktoken holds ranks 0..N-2 (0..255 are the bytes) and id
 *            N-1 is <|endoftext|>.
 *   llama2   SentencePiece BPE as Llama 2 uses it: 32,000 pieces with
 *            scores, <unk> <s> </s> at 0, 1, 2, byte fallback <0x00>..<0xFF>,
 *            from llama2.model (SentencePiece's tokenizer.model protobuf) or
 *            llama2.vocab (TLM's plain form of it, eng_tok_write_vocab).
 *   A path to any other tiktoken rank file: its ranks, no special tokens,
 *   named after the file (base name without extension); a path to a
 *   *.model or vocabulary file: that SentencePiece model.
 * Every byte-level BPE pre-tokenises with the Llama 3 / cl100k pattern
 * (PCRE2, Unicode properties) and merges byte pairs by rank; SentencePiece
 * puts a space in front of the text ("dummy prefix") and joins characters
 * by piece score, with no pre-tokenisation.
 *
 * Invalid UTF-8 (bytes that are not well-formed UTF-8): by default each
 * maximal invalid subpart is replaced by U+FFFD before pre-tokenisation,
 * exactly as the WHATWG decoder (TextDecoder, Node's Buffer.toString, Python's
 * errors="replace") does, so ids equal the reference tokenizers' on the
 * decoded string.  ENG_TOK_RAW_BYTES keeps such bytes instead (lossless): the
 * valid runs around them are pre-tokenised separately and each invalid byte
 * becomes its single-byte token.  `bytes` never changes anything.
 *
 * Threads: an eng_tok holds scratch space and a cache, so one thread encodes
 * with it at a time (open one per thread).  Decoding only reads it.
 *
 * The tokenizer hash (SHA-256 of the canonical definition: kind, pattern,
 * ranks, special tokens) goes into every shard header; eng_tok_check_shards
 * is what training calls to refuse shards made with another tokenizer. */
#ifndef TLM_ENGINE_TOKENIZER_H
#define TLM_ENGINE_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "engine/format/shard.h"

typedef struct eng_tok eng_tok;

typedef enum eng_tok_kind { ENG_TOK_BYTES = 1, ENG_TOK_BPE = 2, ENG_TOK_SPM = 3 } eng_tok_kind;

/* encode flags */
enum {
    ENG_TOK_ALLOW_SPECIAL = 1, /* "<|end_of_text|>" in the text becomes its special id
                                  (otherwise special-token text is encoded as plain text) */
    ENG_TOK_RAW_BYTES = 2      /* keep invalid UTF-8 bytes (lossless) instead of U+FFFD */
};

/* A growable list of ids; zero-initialise, free with eng_tokvec_clear. */
typedef struct eng_tokvec {
    uint32_t *ids;
    size_t n, cap;
} eng_tokvec;

void eng_tokvec_clear(eng_tokvec *v);
int eng_tokvec_push(eng_tokvec *v, uint32_t id, tlm_err *e);

/* Where a named tokenizer's file is looked for, first hit wins:
 *   1. spec itself when it names an existing file (a path);
 *   2. <dir>/<name>.tiktoken for dir = each folder in `search`
 *      (colon-separated; a shard file stands for its folder; the dataset
 *      root above a train/ or val/ split folder is tried too);
 *   3. each folder in $TLM_TOKENIZERS (colon-separated).
 * Writes the path found into out; TLM_EDATA with the list of places tried
 * when there is none.  "bytes" needs no file (out = ""). */
int eng_tok_find(const char *spec, const char *search, char *out, size_t cap, tlm_err *e);

/* Open a tokenizer: "bytes", "llama3", "llama2", "bpeN" (found with
 * eng_tok_find and `search`, may be NULL), or a path to a tokenizer file. */
int eng_tok_open(eng_tok **t, const char *spec, const char *search, tlm_err *e);
/* Open a tokenizer file under a given name (name decides the special
 * tokens: "llama3", "bpeN", else none; "llama2" must be Llama 2's model).
 * The format comes from the content: a SentencePiece vocabulary file, a
 * SentencePiece model (name llama2 or a *.model path), else tiktoken ranks.
 * NULL name = the file's base name. */
int eng_tok_open_file(eng_tok **t, const char *path, const char *name, tlm_err *e);
/* The same from a rank file's text (the fuzz target, tests); label names it
 * in messages and, with a NULL name, gives the name as a path would. */
int eng_tok_open_text(eng_tok **t, const char *label, const char *name, const char *text, size_t len, tlm_err *e);
void eng_tok_free(eng_tok *t);
/* A second tokenizer with the same definition and its own scratch space,
 * for another thread: faster than opening the file again. */
int eng_tok_clone(eng_tok **out, const eng_tok *t, tlm_err *e);
/* Write a SentencePiece tokenizer as a vocabulary file (docs/data.md),
 * atomically: what `tlm-data vocab` makes of a tokenizer.model. */
int eng_tok_write_vocab(const eng_tok *t, const char *path, tlm_err *e);

const char *eng_tok_name(const eng_tok *t);   /* as stored in shard headers */
eng_tok_kind eng_tok_kind_of(const eng_tok *t);
uint32_t eng_tok_vocab(const eng_tok *t);     /* ids are < vocab */
const uint8_t *eng_tok_sha256(const eng_tok *t); /* 32 bytes */
/* The document separator written between documents by tlm-data
 * (<|end_of_text|> for llama3, <|endoftext|> for bpeN); -1 for none. */
int32_t eng_tok_eot(const eng_tok *t);
/* Id of a special token's text ("<|eot_id|>"), -1 when it is not one. */
int32_t eng_tok_special(const eng_tok *t, const char *text);
/* The bytes of an id (a special token's text for specials; for
 * SentencePiece the text a piece decodes to, its marker as a space);
 * NULL when id >= vocab. */
const uint8_t *eng_tok_piece(const eng_tok *t, uint32_t id, size_t *len);

/* Append the ids of text[0, len) to out.  flags: ENG_TOK_*. */
int eng_tok_encode(eng_tok *t, const void *text, size_t len, int flags, eng_tokvec *out, tlm_err *e);
/* Append the bytes of ids to *buf (malloc'd, grown as needed; *len bytes
 * used, *cap allocated).  TLM_EDATA for an id >= vocab.  SentencePiece:
 * the space of the first piece, and of a piece after <s> or </s>, is
 * dropped (it is the dummy prefix encoding put there). */
int eng_tok_decode(const eng_tok *t, const uint32_t *ids, size_t n, uint8_t **buf, size_t *len, size_t *cap,
                   tlm_err *e);

/* The training-time check: accept the shards of `set` (opened from
 * data_path) for a job whose config says `tokenizer: cfg_tokenizer`, or
 * return TLM_EDATA with a message that names the shard, both tokenizers and
 * what to do.  Checks the name, the vocabulary size, and the definition hash
 * against the tokenizer file when one can be found (data_path's dataset
 * folder, $TLM_TOKENIZERS); without a file the name and size must do. */
int eng_tok_check_shards(const char *cfg_tokenizer, const eng_shardset *set, const char *data_path, tlm_err *e);

/* ------------------------------------------------------------ trainer */
typedef struct eng_bpe_trainer eng_bpe_trainer;

int eng_bpe_trainer_new(eng_bpe_trainer **tr, tlm_err *e);
/* Pre-tokenise text (invalid UTF-8 replaced as when encoding) and count its
 * pieces.  May be called many times; bounded by memory only. */
int eng_bpe_trainer_feed(eng_bpe_trainer *tr, const void *text, size_t len, tlm_err *e);
/* Learn merges until there are vocab-1 ranks (vocab >= 257; the last id is
 * <|endoftext|>) and write them as a tiktoken rank file, atomically.
 * Deterministic: the same text fed in the same order gives the same file.
 * TLM_EDATA when the text is too small for that many merges.
 * progress (may be NULL) is called now and then with (done, total) merges. */
int eng_bpe_trainer_finish(eng_bpe_trainer *tr, uint32_t vocab, const char *out_path,
                           void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg, tlm_err *e);
void eng_bpe_trainer_free(eng_bpe_trainer *tr);

#endif
