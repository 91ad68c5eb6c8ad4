#!/bin/sh
# test_cli.sh: tlmd's command line without training: usage errors
# exit 2 with a message (a GPU slot this build cannot serve among them, and
# a database that is not TLM's, named by its --db path); a bad sweep file
# among good ones is reported with its position and nothing is recorded
# (one transaction); folders are read in name order; a missing worker or
# database is named; a 100,000-job sweep dry-runs in seconds.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"

"$T" --help >help.out 2>&1
ok $([ $? = 0 ] && grep -q -- "--heartbeat-timeout" help.out && echo 0 || echo 1) "--help exits 0 and lists the options"
# docs/tlmd.md's option table gives the defaults --help gives (which are
# the ones tlmd starts from: main.c prints its DEFAULTS)
python3 - "$TLM_SRCDIR/docs/tlmd.md" help.out >defaults.out 2>&1 <<'P'
import re, sys
doc = {}
for line in open(sys.argv[1]):
    m = re.match(r"\| `(--[a-z-]+)[^`]*` \| ([^|]*) \|", line)
    if m and m.group(2).strip():
        doc[m.group(1)] = m.group(2).strip().strip("`")
helps, cur = {}, None
for line in open(sys.argv[2]):
    m = re.match(r"  (--[a-z-]+)", line)
    if m:
        cur = m.group(1)
        helps[cur] = line
    elif cur and line.startswith("                           "):
        helps[cur] += line
    else:
        cur = None
n = 0
for opt, text in helps.items():
    m = re.search(r"\(default ([^;):]+)[;)]", " ".join(text.split()))
    if not m:
        continue
    n += 1
    assert doc.get(opt) == m.group(1), (opt, "docs:", doc.get(opt), "--help:", m.group(1))
assert n >= 9, n
print("# %d defaults agree" % n)
P
ok $? "docs/tlmd.md's option defaults are --help's ($(tail -1 defaults.out))"
"$T" >e1.out 2>&1
ok $([ $? = 2 ] && grep -q -- "--sweeps FILE|DIR is required" e1.out && echo 0 || echo 1) "no --sweeps: exit 2"
"$T" --sweeps x.yaml --bogus >e2.out 2>&1
ok $([ $? = 2 ] && echo 0 || echo 1) "an unknown option: exit 2"
"$T" --sweeps x.yaml --workers 0 >e3.out 2>&1
ok $([ $? = 2 ] && grep -q -- "--workers 0: out of range (expected an integer from 1 to 256)" e3.out && echo 0 || echo 1) \
    "--workers 0: $(cat e3.out)"
# expect2 PATTERN DESCRIPTION ARGS...: tlmd ARGS exits 2 and says PATTERN
expect2() {
    pat=$1 what=$2
    shift 2
    "$T" "$@" >e.out 2>&1
    rc=$?
    ok $([ $rc = 2 ] && grep -q -- "$pat" e.out && echo 0 || echo 1) "$what: exit $rc: $(head -c 300 e.out)"
}
expect2 "--workers 1.5: not an integer (expected an integer from 1 to 256)" "--workers 1.5 is not 1" \
    --sweeps x.yaml --workers 1.5
expect2 "--max-attempts 9223372036854775807: out of range (expected an integer from 1 to 1000)" \
    "a huge --max-attempts names the range" --sweeps x.yaml --max-attempts 9223372036854775807
expect2 "--kill-grace 0x10: not a number" "a hex --kill-grace" --sweeps x.yaml --kill-grace 0x10
expect2 "--db is given twice; give it once" "--db twice" --sweeps x.yaml --db a.db --db b.db
expect2 "--runs is given twice" "--runs twice" --sweeps x.yaml --runs a --runs b
expect2 "--progress and --no-progress contradict" "--progress with --no-progress" --sweeps x.yaml --progress --no-progress
expect2 "--db is given twice" "tlmd status: --db twice" status --db a.db --db b.db
mkdir adir
expect2 "--db adir: is a directory (expected an SQLite database file" "--db a folder" --sweeps x.yaml --db adir
expect2 "--db adir: is a directory (expected an SQLite database file" "tlmd status --db a folder" status --db adir
: >afile
expect2 "--runs afile: is not a directory (expected the folder that holds the run folders)" "--runs a file" \
    --sweeps x.yaml --runs afile
expect2 "--worker adir: is a directory" "--worker a folder" --sweeps x.yaml --worker adir
mkdir sw
sweep sw/a.yaml alpha 8 "grid:" "  taper.schedule: [linear, cosine]" "  taper.ratio: [[1.5, 0.5]]"
sweep sw/b.yaml beta 8 "seeds: [1, 2]"
"$T" --sweeps sw --devices 0,x >e4.out 2>&1
ok $([ $? = 2 ] && grep -q -- "--devices 0,x: expected auto, cpu, or GPU ids" e4.out && echo 0 || echo 1) "--devices 0,x: $(cat e4.out)"
# without the CUDA backend GPU ids are refused; with it, ids the driver
# does not list (this machine has none, or fewer)
if [ -e /proc/driver/nvidia/gpus ] && grep -q '^#define TLM_HAVE_CUDA 1' "$TLM_BUILDDIR/config.h"; then
    dev=1023
    want="--devices 1023: the NVIDIA driver lists no GPU 1023"
else
    dev=0
    want="--devices 0: \(this build cannot train on GPUs\|the NVIDIA driver lists no GPU 0\)"
fi
"$T" --sweeps sw --devices $dev --db dev.db >e4b.out 2>&1
rc=$?
ok $([ $rc = 2 ] && grep -q -- "$want" e4b.out && [ ! -e dev.db ] && echo 0 || echo 1) \
    "GPU ids this build or this machine cannot use: exit 2, nothing recorded: $(cat e4b.out)"
expect2 "--devices : is empty (expected auto, cpu, or GPU ids" "--devices ''" --sweeps sw --devices ''
# messages name the --db given, not "results.db"
sqlite3 other.db "create table t(x)"
"$T" --sweeps sw --db other.db >e4c.out 2>&1
ok $([ $? = 2 ] && grep -q "^tlmd: other.db: the file holds tables but no TLM schema version" e4c.out && echo 0 || echo 1) \
    "a database that is not TLM's is named: $(cat e4c.out)"
sqlite3 newer.db "pragma user_version = 99; create table t(x)"
"$T" --sweeps sw --db newer.db >e4d.out 2>&1
ok $([ $? = 2 ] && grep -q "^tlmd: newer.db: schema version 99 is newer than this program's" e4d.out && echo 0 || echo 1) \
    "so is a newer one: $(cat e4d.out)"
# --db of what SQLite would block on (a FIFO) or replace (a device): refused
# by name, left as it was; a missing folder is named, not "unable to open
# database file"
mkfifo fifo.db
timeout 10 "$T" --sweeps sw --db fifo.db --worker /bin/true --no-progress >e.out 2>&1
ok $([ $? = 2 ] && grep -q "^tlmd: fifo.db: is not a regular file (a FIFO) (expected an SQLite database file)" e.out &&
    [ -p fifo.db ] && echo 0 || echo 1) "--db a FIFO: exit 2, the FIFO kept: $(cat e.out)"
timeout 10 "$T" --dry-run --sweeps sw --db fifo.db >e.out 2>&1
ok $([ $? = 2 ] && grep -q "fifo.db: is not a regular file (a FIFO)" e.out && echo 0 || echo 1) "--dry-run --db a FIFO: $(cat e.out)"
timeout 10 "$T" status --db fifo.db >e.out 2>&1
ok $([ $? = 2 ] && grep -q "fifo.db: is not a regular file (a FIFO)" e.out && echo 0 || echo 1) "status --db a FIFO: $(tail -1 e.out)"
rm fifo.db
if mknod null.db c 1 3 2>/dev/null; then
    timeout 10 "$T" --sweeps sw --db null.db --worker /bin/true --no-progress >e.out 2>&1
    ok $([ $? = 2 ] && grep -q "null.db: is not a regular file (a character device)" e.out && [ -c null.db ] && echo 0 ||
        echo 1) "--db a character device: exit 2, the device kept: $(cat e.out)"
    rm null.db
else
    ok "# SKIP --db a character device (mknod needs root)"
fi
"$T" --sweeps sw --db nodir/r.db --no-progress >e.out 2>&1
ok $([ $? = 3 ] && grep -q "nodir/r.db: cannot create: its folder nodir: No such file or directory" e.out && echo 0 || echo 1) \
    "--db in a folder that does not exist: $(cat e.out)"
"$T" --sweeps sw --worker /nonexistent/tlm-worker >e5.out 2>&1
ok $([ $? = 2 ] && grep -q "worker /nonexistent/tlm-worker" e5.out && echo 0 || echo 1) "a missing worker: $(cat e5.out)"
"$T" --sweeps nope.yaml >e6.out 2>&1
ok $([ $? = 2 ] && grep -q "nope.yaml" e6.out && echo 0 || echo 1) "a missing sweep file: $(cat e6.out)"
mkdir -p dirsw/x.yaml
expect2 "dirsw/x.yaml: is a directory (expected a sweep file" "a folder named like a sweep file" --sweeps dirsw
rm -r dirsw
# a refused run makes nothing: no results.db, no runs folder (the sweeps
# are read before either is created)
mkdir fresh
(cd fresh && "$T" --sweeps nope.yaml >e.out 2>&1; echo $? >rc)
ok $([ "$(cat fresh/rc)" = 2 ] && [ ! -e fresh/results.db ] && [ ! -e fresh/runs ] && echo 0 || echo 1) \
    "a missing sweep file leaves no results.db or runs/: $(ls fresh | tr '\n' ' ')"
printf 'name: b\nbase: {scale: 1m, seed: x}\n' >fresh/b.yaml
(cd fresh && "$T" --sweeps b.yaml --no-progress >e.out 2>&1; echo $? >rc)
ok $([ "$(cat fresh/rc)" = 2 ] && grep -q "b.yaml:2:25: seed: expected an integer" fresh/e.out && [ ! -e fresh/results.db ] &&
    [ ! -e fresh/runs ] && echo 0 || echo 1) "neither does a bad one: $(cat fresh/e.out); $(ls fresh | tr '\n' ' ')"
rm -r fresh
# a FIFO as a sweep file, or in a sweep folder, is refused at once, never opened
mkfifo fifo.yaml
mkdir fifosw && printf 'name: a\nbase: {scale: 1m}\n' >fifosw/a.yaml && mkfifo fifosw/b.yaml
timeout 10 "$T" --dry-run --sweeps fifo.yaml >e.out 2>&1
ok $([ $? = 2 ] && grep -q "fifo.yaml: is not a regular file (a FIFO)" e.out && echo 0 || echo 1) "a FIFO sweep file: $(cat e.out)"
timeout 10 "$T" --sweeps fifosw --db fifo.db >e.out 2>&1
ok $([ $? = 2 ] && grep -q "fifosw/b.yaml: is not a regular file (a FIFO)" e.out && [ ! -e fifo.db ] && echo 0 || echo 1) \
    "a FIFO in a sweep folder: $(cat e.out)"
rm -r fifo.yaml fifosw

"$T" --dry-run --sweeps sw >dry.out 2>&1
ok $? "a folder of sweeps dry-runs"
"$T" --dry-run --sweeps sw --workers 2 --runs elsewhere >dry2.out 2>dry2.err
ok $([ $? = 0 ] && grep -q -- "--workers does nothing with --dry-run" dry2.err &&
    grep -q -- "--runs does nothing with --dry-run" dry2.err && echo 0 || echo 1) \
    "--dry-run says which options of the run it ignores: $(tr '\n' ' ' <dry2.err)"
ok $([ "$(grep '^sweep ' dry.out | cut -d' ' -f2 | tr '\n' ' ')" = "alpha beta " ] && echo 0 || echo 1) "in name order"
grep -q "total: 4 distinct jobs: 4 new" dry.out
ok $? "4 jobs (2 + 2 seeds)"
grep -q "^  [0-9a-f]\{12\}  new  *uniform  .*128x4  .*seed=2$" dry.out
ok $? "each line: id, status, label, d_ff summary, axes"

# a bad file after a good one: nothing of either is recorded
cp "$TLM_SRCDIR/tests/data/sweeps/bad/unknown_grid_key.yaml" sw/c.yaml
"$T" --sweeps sw >e7.out 2>&1
ok $([ $? = 2 ] && grep -q "sw/c.yaml:5:3: unknown key 'shedule' in taper; did you mean 'schedule'?" e7.out && echo 0 || echo 1) \
    "a bad sweep: exit 2 with its position: $(cat e7.out)"
ok $([ ! -e results.db ] && echo 0 || echo 1) "nothing recorded, not even the good sweeps before it (no results.db made)"
rm sw/c.yaml

"$T" status --db missing.db >e8.out 2>&1
ok $([ $? = 2 ] && grep -q "missing.db does not exist" e8.out && echo 0 || echo 1) "status of a missing database: exit 2"

# a long --runs (about 1,200 bytes; each part below NAME_MAX) holds its run
# folder whole, and results.db stores it whole
long=$tmp
for part in 1 2 3 4 5; do long=$long/$(printf "r%.0s" $(seq 240))$part; done
sweep long.yaml long 8
"$T" --sweeps long.yaml --db long.db --runs "$long" --threads-per-worker 1 >long.out 2>&1
rc=$?
stored=$(sqlite3 -batch long.db "select run_dir from jobs")
ok $([ $rc = 0 ] && [ "$stored" = "$long/$(sqlite3 -batch long.db "select substr(key, 1, 12) from jobs")" ] &&
    [ -f "$stored/config.json" ] && [ -d "$stored/ckpt/step-00000008" ] && echo 0 || echo 1) \
    "a ${#long}-byte --runs: the job ran (exit $rc) in its whole run folder, stored whole (${#stored} bytes)"
[ $rc = 0 ] || sed 's/^/# /' long.out | head -5
# the sweep file itself in that folder: `tlmd status` shows its whole name
cp long.yaml "$long/long.yaml"
"$T" --sweeps "$long/long.yaml" --db long.db --runs "$long" >long2.out 2>&1
"$T" status --db long.db --summary >status.out 2>&1
ok $([ $? = 0 ] && grep -qF "$long/long.yaml" status.out && echo 0 || echo 1) \
    "tlmd status names the ${#long}-byte sweep file whole"
"$T" status --db long.db --sweep nope >e9.out 2>&1
ok $([ $? = 2 ] && grep -q "no sweep named 'nope'" e9.out && echo 0 || echo 1) "status of an unknown sweep: exit 2"

# ---- results.db's upkeep (issue 26): tlmd backup, tlmd migrate, a damaged
# file, a file stamped with the wrong version, paths that cannot work
"$T" backup --db long.db --out long-copy.db >bk.out 2>&1
ok $([ $? = 0 ] && grep -q "long.db copied to long-copy.db" bk.out &&
    [ "$(sqlite3 -batch long-copy.db "select count(*) from jobs where status = 'done'")" = 1 ] && echo 0 || echo 1) \
    "tlmd backup copies the database: $(cat bk.out)"
expect2 "--out long-copy.db: exists; a backup never replaces a file" "tlmd backup onto an existing file" \
    backup --db long.db --out long-copy.db
expect2 "--db FILE and --out FILE are required" "tlmd backup without --out" backup --db long.db
"$T" migrate --db long.db >mig.out 2>&1
ok $([ $? = 0 ] && grep -q "long.db is at schema version [0-9]* already; nothing to do" mig.out && [ ! -e long.db.v5.bak ] &&
    echo 0 || echo 1) "tlmd migrate of a current database: nothing to do, no backup: $(cat mig.out)"
# an older file (version 5, as db/history keeps it): the read-only tools
# name `tlmd migrate`, which keeps a backup and migrates
sqlite3 old.db <"$TLM_SRCDIR/db/history/v5.sql" && sqlite3 old.db "pragma user_version = 5"
"$T" status --db old.db >e.out 2>&1
ok $([ $? = 2 ] && grep -q "old.db: schema version 5 is older than this program's ([0-9]*); upgrade it with: tlmd migrate --db old.db" e.out &&
    echo 0 || echo 1) "tlmd status of an older file names tlmd migrate: $(tail -1 e.out)"
"$T" --dry-run --sweeps sw --db old.db >e.out 2>&1
ok $([ $? = 2 ] && grep -q "upgrade it with: tlmd migrate --db old.db" e.out && echo 0 || echo 1) "so does --dry-run: $(tail -1 e.out)"
python3 -c 'import fcntl, time; f = open("old.db"); fcntl.flock(f, fcntl.LOCK_EX); open("locked", "w"); time.sleep(30)' &
fl=$!
kids="$kids $fl"
i=0
while [ ! -e locked ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$T" migrate --db old.db >e.out 2>&1
ok $([ $? = 2 ] && grep -q "another tlmd (pid $fl) is running" e.out && [ "$(sqlite3 old.db "pragma user_version")" = 5 ] &&
    echo 0 || echo 1) "tlmd migrate of a database a daemon holds: refused, nothing changed: $(cat e.out)"
kill "$fl" 2>/dev/null
wait "$fl" 2>/dev/null
"$T" migrate --db old.db >mig.out 2>&1
ok $([ $? = 0 ] && grep -q "old.db migrated from schema version 5 to [0-9]*; the old file is kept as old.db.v5.bak" mig.out &&
    [ "$(sqlite3 old.db.v5.bak "pragma user_version")" = 5 ] && [ "$(sqlite3 old.db "pragma user_version")" -gt 5 ] &&
    "$T" status --db old.db >/dev/null 2>&1 && echo 0 || echo 1) "tlmd migrate: a backup, then the migration: $(cat mig.out)"
# a version changed by hand: the cause, not only SQLite's "duplicate column name"
cp long-copy.db stamped.db && sqlite3 stamped.db "pragma user_version = 4"
"$T" --sweeps long.yaml --db stamped.db --runs stamped-runs --no-progress >e.out 2>&1
ok $([ $? = 2 ] && grep -q "stamped.db: its tables are not those of schema version 4, the version the file says it has" e.out &&
    [ "$(sqlite3 stamped.db "pragma user_version")" = 4 ] && echo 0 || echo 1) "a hand-stamped version: $(cat e.out)"
# a damaged table: tlmd refuses to write to it, and says how to recover
cp long-copy.db damaged.db
python3 - damaged.db <<'P'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
root = c.execute("select rootpage from sqlite_master where name = 'steps'").fetchone()[0]
size = c.execute("pragma page_size").fetchone()[0]
c.close()
with open(sys.argv[1], "r+b") as f:
    f.seek((root - 1) * size)
    f.write(b"\x0d" + b"\xff" * 11)
P
cp damaged.db damaged.orig
"$T" --sweeps long.yaml --db damaged.db --runs damaged-runs --no-progress >e.out 2>&1
ok $([ $? = 3 ] && grep -q "damaged.db: the database is damaged (SQLite's quick_check: " e.out && grep -q "\.recover" e.out &&
    cmp -s damaged.db damaged.orig && echo 0 || echo 1) "a damaged database: exit 3, how to recover, nothing written: $(cat e.out)"
"$T" backup --db damaged.db --out damaged-copy.db >e.out 2>&1
ok $([ $? = 3 ] && [ ! -e damaged-copy.db ] && echo 0 || echo 1) "no backup of a damaged database: $(cat e.out)"
# not a database at all, a folder tlmd cannot write
printf 'my notes\n' >notes.txt
"$T" --sweeps sw --db notes.txt --no-progress >e.out 2>&1
ok $([ $? = 2 ] && grep -q "notes.txt: not an SQLite database (the file does not begin with SQLite's header)" e.out &&
    [ "$(cat notes.txt)" = "my notes" ] && echo 0 || echo 1) "--db over a text file: $(cat e.out)"
mkdir rodir && cp long-copy.db rodir/r.db && chmod 666 rodir/r.db && chmod 555 rodir
as_user=""
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null 2>&1 && as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
    chmod 711 "$tmp"
fi
if [ "$(id -u)" != 0 ] || [ -n "$as_user" ]; then
    $as_user "$T" --sweeps "$tmp/long.yaml" --db rodir/r.db --no-progress >e.out 2>&1
    ok $([ $? = 3 ] && grep -q "rodir/r.db: its folder rodir is not writable (Permission denied): SQLite keeps the database's -wal and -shm files beside it" e.out &&
        echo 0 || echo 1) "--db in a folder that cannot be written: $(cat e.out)"
    $as_user "$T" --sweeps "$tmp/long.yaml" --db rodir/new.db --no-progress >e.out 2>&1
    ok $([ $? = 3 ] && grep -q "rodir/new.db: cannot create: its folder rodir is not writable by this user" e.out && echo 0 || echo 1) \
        "a new --db there: $(cat e.out)"
    chmod 755 rodir && chmod 644 rodir/r.db
    $as_user "$T" --sweeps "$tmp/long.yaml" --db rodir/r.db --no-progress >e.out 2>&1
    ok $([ $? = 3 ] && grep -q "rodir/r.db: not writable by this user (Permission denied)" e.out && echo 0 || echo 1) \
        "a --db that cannot be written: $(cat e.out)"
else
    ok 0 "# SKIP --db in a folder that cannot be written (root without setpriv)"
fi
chmod 755 rodir

# ---- relative data paths: read from the folder tlmd runs in, the same
# for a dry run (which checks that they can be read) and a run
mkdir rel && cd rel || exit 1
printf 'name: rel\nbase:\n  model: {d_model: 64, layers: 4, heads: 2, d_ff: 128, vocab: 256}\n  data: {train: data/train.tlmtok}\n  train: {tokens: 8192, seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: 3e-3, warmup_tokens: 1024}\n' >rel.yaml
"$T" --dry-run --sweeps rel.yaml >dry.out 2>dry.err
ok $([ $? = 2 ] && grep -q "^tlmd: rel.yaml: data.train data/train.tlmtok: No such file or directory (a relative path is read from $PWD, the folder tlmd runs in)" dry.err &&
    grep -q "total: 1 distinct jobs: 1 new" dry.out && echo 0 || echo 1) "--dry-run of a sweep whose data is missing: exit 2, the path named: $(tr '\n' ' ' <dry.err)"
mkdir data && cp "$tmp/text.tlmtok" data/train.tlmtok
"$T" --dry-run --sweeps rel.yaml >dry.out 2>dry.err
ok $([ $? = 0 ] && [ ! -s dry.err ] && echo 0 || echo 1) "...and clean once it is there"
"$T" --sweeps rel.yaml --threads-per-worker 1 --no-progress >run.out 2>&1
ok $([ $? = 0 ] && [ "$(sqlite3 results.db "select status from jobs")" = done ] &&
    grep -q '"train":"data/train.tlmtok"' runs/*/config.json && echo 0 || echo 1) \
    "a run reads it from there too, its config (and identity) as written"
cd ..
# a --runs the worker's files could not fit under is refused before anything starts
toolong=$long
while [ ${#toolong} -lt 3900 ]; do toolong=$toolong/$(printf "r%.0s" $(seq 200)); done
expect2 "--runs: the path is ${#toolong} bytes, longer than the 3826 TLM allows here" "a ${#toolong}-byte --runs" \
    --sweeps long.yaml --db long2.db --runs "$toolong"
ok $([ ! -e long2.db ] && echo 0 || echo 1) "...and nothing is recorded"

# 100,000 jobs: 4 grid points x 25,000 seeds
{
    printf 'name: big\nbase: {scale: 1m, train: {tokens: 2e6}}\n'
    printf 'grid:\n  taper.schedule: [linear, cosine]\n  taper.ratio: [[1.5, 0.5], [1.25, 0.75]]\nseeds: ['
    seq -s, 0 24999 | tr -d '\n'
    printf ']\n'
} >big.yaml
t0=$(date +%s)
"$T" --dry-run --sweeps big.yaml >big.out 2>&1
rc=$?
t1=$(date +%s)
ok $([ $rc = 0 ] && grep -q "total: 100000 distinct jobs: 100000 new" big.out && echo 0 || echo 1) "100,000 jobs dry-run"
ok $([ $((t1 - t0)) -le 60 ] && echo 0 || echo 1) "in $((t1 - t0)) s"
finish
