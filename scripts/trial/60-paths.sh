# 60-paths.sh: paths that are folders, FIFOs, devices, symlinks, missing,
# unreadable or unwritable, very long, or oddly named, for every path each
# program takes.  A path is named in the message with what was expected;
# nothing blocks on a FIFO; odd characters go through whole.  Device nodes
# are private copies (mknod, as root) so that nothing here can touch the
# system's /dev.  Sourced by trial.sh.

need_run
need_db
J=$FX/job.yaml
DB=$FX/db/results.db
sweep "$FX/t.yaml" t
ODD=$'odd %s%n "q" \303\274 \\ dir' # a folder name to go through whole
E=$FX/eval.yaml # a job with the alignment suite
EVAL=", suites: [val, alignment], alignment: {text: $FX/corpus/GPL-2, tokens: 256}" job "$E"
NOWAIT=(--retry-delay 0 --max-attempts 1 --no-progress)

# ---- tlm-worker --config, --out, --checkpoint, data.train
selected issue.folder-config && { in_case issue.folder-config; mkdir c.yaml
    tc issue.folder-config "--config of a folder" 2 "--config c\.yaml: is a directory \(expected a job config file" "$W" --describe --config c.yaml; }
selected path.config-fifo && { in_case path.config-fifo; mkfifo c.yaml
    TO=10 tc path.config-fifo "--config of a FIFO" 2 "c\.yaml: is not a regular file \(a FIFO\)" "$W" --describe --config c.yaml; }
selected path.config-missing && { in_case path.config-missing
    tc path.config-missing "--config that does not exist" 2 "nope\.yaml: cannot open: No such file or directory" "$W" --describe --config nope.yaml; }
selected path.config-symlink && { in_case path.config-symlink; ln -s "$J" c.yaml
    tc path.config-symlink "--config of a symlink to a config (handled)" 0 '"id"' "$W" --describe --config c.yaml; }
selected path.config-dangling && { in_case path.config-dangling; ln -s nowhere.yaml c.yaml
    tc path.config-dangling "--config of a dangling symlink" 2 "c\.yaml: cannot open: No such file or directory" "$W" --describe --config c.yaml; }
selected path.config-loop && { in_case path.config-loop; ln -s c.yaml c.yaml
    tc path.config-loop "--config of a symlink to itself" 2 "c\.yaml: cannot open: Too many levels of symbolic links" "$W" --describe --config c.yaml; }
selected path.config-chardev && { in_case path.config-chardev
    tc path.config-chardev "--config /dev/zero (a character device)" 2 "/dev/zero: is not a regular file \(a character device\)" "$W" --describe --config /dev/zero; }
selected path.config-component && { in_case path.config-component
    tc path.config-component "--config whose file name has 300 characters" 2 "a{20}.*(File name too long|longer than)" "$W" --describe --config "$(printf 'a%.0s' $(seq 300)).yaml"; }
selected path.config-4096 && { in_case path.config-4096
    long=$(python3 -c "print('/'.join(['d' * 200] * 21))")
    tc path.config-4096 "--config of 4,227 bytes" 2 "--config: the path is 4227 bytes, longer than the 4095 this system allows" "$W" --describe --config "$long/c.yaml"; }
selected path.config-format && { in_case path.config-format; printf 'scale: 1m\nseed: x\n' >'%s%n%x.yaml'
    tc path.config-format "a config named %s%n%x.yaml (printf directives)" 2 "%s%n%x\.yaml:2:7: seed: expected an integer, got 'x'" "$W" --describe --config '%s%n%x.yaml'; }
selected path.config-newline && { in_case path.config-newline; printf 'scale: 1m\nseed: x\n' >$'a\nb.yaml'
    tc path.config-newline "a config whose name holds a newline" 2 "b\.yaml:2:7: seed: expected an integer" "$W" --describe --config $'a\nb.yaml'; }
selected path.config-dash && { in_case path.config-dash; printf 'scale: 1m\nseed: x\n' >-x.yaml
    tc path.config-dash "a config named -x.yaml (a leading dash)" 2 "-x\.yaml:2:7: seed: expected an integer" "$W" --describe --config -x.yaml; }
selected path.out-file && { in_case path.out-file; echo keep >f
    AFTER='[ "$(cat f)" = keep ]' AFTER_MSG="the file was changed" \
        tc path.out-file "--out of an existing file" 6 "--out.*f.*(not a directory|exists)" "$W" --config "$J" --out f --threads 1; }
selected path.out-under-file && { in_case path.out-under-file; : >f
    tc path.out-under-file "--out under a file (f/run)" 6 "f/run.*(Not a directory|not a directory)" "$W" --config "$J" --out f/run --threads 1; }
selected path.out-symlink && { in_case path.out-symlink; mkdir real; ln -s real r
    AFTER='[ -d real/ckpt/step-00000016 ]' AFTER_MSG="the checkpoints are not in the link's target" \
        tc path.out-symlink "--out of a symlink to a folder (handled)" 0 '"ev":"done"' "$W" --config "$J" --out r --threads 1; }
selected path.out-3840 && { in_case path.out-3840
    long=$PWD; while [ ${#long} -lt 3900 ]; do long=$long/$(printf 'o%.0s' $(seq 200)); done
    AFTER="[ ! -e \"$PWD/$(printf 'o%.0s' $(seq 200))\" ]" AFTER_MSG="folders were made for a refused --out" \
        tc path.out-3840 "--out of ${#long} bytes" 2 "--out: the path is ${#long} bytes, longer than the 3839 TLM allows here" "$W" --config "$J" --out "$long"; }
selected path.out-odd && { in_case path.out-odd
    AFTER='[ -f "$ODD/ckpt/step-00000016/MANIFEST.json" ]' AFTER_MSG="the checkpoints are not in the oddly named folder" \
        tc path.out-odd "--out with spaces, %n, quotes, a backslash and UTF-8" 0 '"ev":"done"' "$W" --config "$J" --out "$ODD" --threads 1; }
selected path.ckpt-fifo && { in_case path.ckpt-fifo; mkfifo ck
    TO=10 tc path.ckpt-fifo "--eval --checkpoint of a FIFO" 3 "ck: is not a regular file \(a FIFO\)|ck: (is not a directory|not a checkpoint)" "$W" --eval --checkpoint ck --config "$E" --suites alignment; }
selected path.ckpt-file && { in_case path.ckpt-file
    tc path.ckpt-file "--eval --checkpoint of a plain file" 3 "(job\.yaml|--checkpoint).*(not a directory|no checkpoint|not a checkpoint)" "$W" --eval --checkpoint "$J" --config "$E" --suites alignment; }
# dt ID WHAT PATTERN DATA-LINE: a job whose data is DATA-LINE fails in set-up (3) saying PATTERN
dt() {
    selected "$1" || return 0
    in_case "$1"
    [ -e prep.sh ] && . ./prep.sh
    DATA="$4" job j.yaml
    AFTER='! grep -q "\"ev\":\"step\"" "$OUT/$id.out"' AFTER_MSG="a step was trained" \
        TO=15 tc "$1" "$2" 3 "$3" "$W" --config j.yaml --out r --threads 1
}
dt data.path-missing "data.train that does not exist" "data\.train: .*missing.*(No such file|does not exist)" "train: $tmp/c/data.path-missing/missing"
selected issue.fifo-data && { in_case issue.fifo-data; mkfifo f.tlmtok
    dt issue.fifo-data "data.train of a FIFO" "f\.tlmtok: is not a regular file \(a FIFO\)" "train: $PWD/f.tlmtok"; }
dt data.path-chardev "data.train /dev/zero" "/dev/zero: is not a regular file \(a character device\)" "train: /dev/zero"
selected data.path-empty-dir && { in_case data.path-empty-dir; mkdir e
    dt data.path-empty-dir "data.train of a folder without shards" "e.*(no \.tlmtok|no shards|holds no)" "train: $PWD/e"; }
selected data.path-fifo-in-dir && { in_case data.path-fifo-in-dir; mkdir d; cp "$SHARD" d/a.tlmtok; mkfifo d/b.tlmtok
    dt data.path-fifo-in-dir "a FIFO named b.tlmtok in the data folder" "b\.tlmtok: is not a regular file \(a FIFO\)" "train: $PWD/d"; }
selected data.path-dir-in-dir && { in_case data.path-dir-in-dir; mkdir -p d/b.tlmtok; cp "$SHARD" d/a.tlmtok
    dt data.path-dir-in-dir "a folder named b.tlmtok in the data folder" "b\.tlmtok: is a directory" "train: $PWD/d"; }
selected data.path-val-fifo && { in_case data.path-val-fifo; mkfifo v.tlmtok
    dt data.path-val-fifo "data.val of a FIFO" "v\.tlmtok: is not a regular file \(a FIFO\)" "train: $SHARD, val: $PWD/v.tlmtok"; }
selected data.path-symlink && { in_case data.path-symlink; ln -s "$SHARD" s.tlmtok; DATA="train: $PWD/s.tlmtok" job j.yaml
    tc data.path-symlink "data.train of a symlink to a shard (handled)" 0 '"ev":"done"' "$W" --config j.yaml --out r --threads 1; }

# ---- tlmd --db, --runs, --worker, --sweeps
selected issue.folder-db && { in_case issue.folder-db; mkdir r.db
    tc issue.folder-db "tlmd --db of a folder" 2 "--db r\.db: is a directory \(expected an SQLite database file" "$T" --sweeps "$FX/t.yaml" --db r.db --no-progress; }
selected path.status-db-dir && { in_case path.status-db-dir; mkdir r.db
    tc path.status-db-dir "tlmd status --db of a folder" 2 "--db r\.db: is a directory" "$T" status --db r.db; }
selected path.db-fifo && { in_case path.db-fifo; mkfifo r.db
    AFTER='[ -p r.db ]' AFTER_MSG="the FIFO given as --db was replaced by a new database file" \
        TO=10 tc path.db-fifo "tlmd --db of a FIFO (a real run)" 2 "r\.db: is not a regular file \(a FIFO\)" "$T" --sweeps "$FX/t.yaml" --db r.db "${NOWAIT[@]}" --worker /bin/true; }
selected path.db-fifo-dry && { in_case path.db-fifo-dry; mkfifo r.db
    TO=10 tc path.db-fifo-dry "tlmd --dry-run --db of a FIFO" 2 "r\.db: is not a regular file \(a FIFO\)" "$T" --dry-run --sweeps "$FX/t.yaml" --db r.db; }
selected path.status-db-fifo && { in_case path.status-db-fifo; mkfifo r.db
    TO=10 tc path.status-db-fifo "tlmd status --db of a FIFO" 2 "r\.db: is not a regular file \(a FIFO\)" "$T" status --db r.db; }
if [ $ROOT = 1 ]; then
    selected path.db-chardev && { in_case path.db-chardev; mknod null c 1 3
        AFTER='[ -c null ]' AFTER_MSG="the character device given as --db was replaced by a database file (as root, tlmd --db /dev/null replaces /dev/null)" \
            TO=10 tc path.db-chardev "tlmd --db of a character device (a private copy of /dev/null)" 2 "null: is not a regular file \(a character device\)" \
            "$T" --sweeps "$FX/t.yaml" --db null "${NOWAIT[@]}" --worker /bin/true; }
else
    notried path.db-chardev "tlmd --db of a character device" "needs root to make a private device node; /dev/null itself is not risked"
fi
selected path.db-nodir && { in_case path.db-nodir
    tc path.db-nodir "tlmd --db in a folder that does not exist" 2\|3 "nodir/r\.db: .*(No such file or directory|does not exist|no such folder)" "$T" --sweeps "$FX/t.yaml" --db nodir/r.db --no-progress; }
selected path.db-dangling && { in_case path.db-dangling; ln -s nowhere.db r.db
    tc path.db-dangling "tlmd --db of a dangling symlink (handled: creates the target, or refuses)" 0\|2 "tlmd: .*(done|r\.db.*(dangling|symbolic link|does not exist))" "$T" --sweeps "$FX/t.yaml" --db r.db --no-progress --threads-per-worker 1; }
selected path.db-text && { in_case path.db-text; echo "my notes, not a database" >r.db
    AFTER='[ "$(cat r.db)" = "my notes, not a database" ]' AFTER_MSG="the text file given as --db was changed" \
        tc path.db-text "tlmd --db of a text file" 2 "r\.db: not an SQLite database \(the file does not begin with SQLite's header\)" "$T" --sweeps "$FX/t.yaml" --db r.db --no-progress; }
selected issue26.status-db-text && { in_case issue26.status-db-text; echo "my notes, not a database" >r.db
    tc issue26.status-db-text "tlmd status --db of a text file" 2 "r\.db: not an SQLite database" "$T" status --db r.db; }
selected issue.db-named && { in_case issue.db-named; sqlite3 r.db "create table t(x); insert into t values (42)"
    AFTER='[ "$(sqlite3 r.db "select x from t")" = 42 ]' AFTER_MSG="another program's database was changed" \
        tc issue.db-named "tlmd --db of another program's SQLite database" 2 "^tlmd: r\.db: the file holds tables but no TLM schema version" "$T" --sweeps "$FX/t.yaml" --db r.db --no-progress; }
selected path.db-newer && { in_case path.db-newer; sqlite3 r.db "pragma user_version = 99; create table t(x)"
    tc path.db-newer "tlmd --db of a newer schema" 2 "^tlmd: r\.db: schema version 99 is newer than this program's" "$T" --sweeps "$FX/t.yaml" --db r.db --no-progress; }
selected path.db-4080 && { in_case path.db-4080
    long=$(mkpath "$PWD" 4080)
    tc path.db-4080 "tlmd --db of 4,080 bytes" 2 "--db: the path is 4080 bytes, longer than the 4079 TLM allows here" "$T" --sweeps "$FX/t.yaml" --db "$long" --no-progress; }
selected path.runs-file && { in_case path.runs-file; : >runs
    tc path.runs-file "tlmd --runs of a file" 2 "--runs runs: is not a directory \(expected the folder that holds the run folders\)" "$T" --sweeps "$FX/t.yaml" --runs runs --no-progress; }
selected path.runs-3827 && { in_case path.runs-3827
    long=$PWD; while [ ${#long} -lt 3900 ]; do long=$long/$(printf 'r%.0s' $(seq 200)); done
    tc path.runs-3827 "tlmd --runs of ${#long} bytes" 2 "--runs: the path is ${#long} bytes, longer than the 3826 TLM allows here" "$T" --sweeps "$FX/t.yaml" --runs "$long" --no-progress; }
selected path.runs-symlink && { in_case path.runs-symlink; mkdir real; ln -s real runs
    AFTER='[ -f real/tlmd-runs.json ] && [ "$(q results.db "select status from jobs")" = done ]' AFTER_MSG="the job is not done in the link's target" \
        tc path.runs-symlink "tlmd --runs of a symlink to a folder (handled)" 0 "" "$T" --sweeps "$FX/t.yaml" --runs runs --no-progress --threads-per-worker 1; }
selected path.worker-dir && { in_case path.worker-dir; mkdir w
    tc path.worker-dir "tlmd --worker of a folder" 2 "--worker w: is a directory" "$T" --sweeps "$FX/t.yaml" --worker w --no-progress; }
selected path.odd-tlmd && { in_case path.odd-tlmd; mkdir "$ODD"
    AFTER='[ "$(q "$ODD/r.db" "select status from jobs")" = done ] && [ -f "$ODD/runs/tlmd-runs.json" ]' AFTER_MSG="the job did not finish in the oddly named folder" \
        tc path.odd-tlmd "tlmd --db and --runs with spaces, %n, quotes, a backslash and UTF-8" 0 "" "$T" --sweeps "$FX/t.yaml" --db "$ODD/r.db" --runs "$ODD/runs" --no-progress --threads-per-worker 1; }

# ---- tlm-report --db and --out
selected path.report-db-dir && { in_case path.report-db-dir; mkdir r.db
    tc path.report-db-dir "tlm-report --db of a folder" 2 "--db r\.db: is a directory \(expected an SQLite database file" "$R" --db r.db --list; }
selected path.report-db-fifo && { in_case path.report-db-fifo; mkfifo r.db
    TO=10 tc path.report-db-fifo "tlm-report --db of a FIFO" 1\|2 "r\.db: is not a regular file \(a FIFO\)" "$R" --db r.db --list; }
selected path.report-db-missing && { in_case path.report-db-missing
    tc path.report-db-missing "tlm-report --db that does not exist" 1 "nope\.db: no such file \(tlmd writes it" "$R" --db nope.db --list; }
selected path.report-db-symlink && { in_case path.report-db-symlink; ln -s "$DB" r.db
    tc path.report-db-symlink "tlm-report --db of a symlink (handled)" 0 "runs" "$R" --db r.db --list; }
selected path.report-db-4096 && { in_case path.report-db-4096
    long=$(python3 -c "print('/'.join(['d' * 200] * 21))")
    tc path.report-db-4096 "tlm-report --db of 4,225 bytes" 2 "--db: the path is 4225 bytes, longer than the 4079 TLM allows here" "$R" --db "$long/x.db" --list; }
selected path.report-out-dir && { in_case path.report-out-dir; mkdir t.md
    tc path.report-out-dir "tlm-report --table --out of a folder" 2 "--out t\.md: is a directory \(expected a file" "$R" --db "$DB" --table runs --out t.md; }
selected path.report-out-nodir && { in_case path.report-out-nodir
    tc path.report-out-nodir "tlm-report --out in a folder that does not exist" 1\|2 "nodir/t\.md: .*(No such file or directory|does not exist)" "$R" --db "$DB" --table runs --out nodir/t.md; }
selected path.report-out-fifo && { in_case path.report-out-fifo; mkfifo t.md
    (timeout 15 cat t.md >got 2>/dev/null &) # a reader, as a pipeline would have
    AFTER='[ -p t.md ] && { [ $rc != 0 ] || grep -q cosine got; }' AFTER_MSG="the FIFO given as --out was replaced by a regular file" \
        TO=10 tc path.report-out-fifo "tlm-report --out of a FIFO with a reader (write into it, or refuse)" 0\|1\|2 "" "$R" --db "$DB" --table runs --out t.md; }
selected path.report-all-file && { in_case path.report-all-file; : >o
    tc path.report-all-file "tlm-report --all --out of a file" 2 "--out o: is not a directory \(expected the folder --all writes into\)" "$R" --db "$DB" --all --out o; }
selected path.report-odd && { in_case path.report-odd; mkdir "$ODD"; cp "$DB" "$ODD/r.db"
    AFTER='grep -q "cosine" "$ODD/t.md"' AFTER_MSG="the table was not written whole" \
        tc path.report-odd "tlm-report --db and --out with odd characters" 0 "" "$R" --db "$ODD/r.db" --table runs --out "$ODD/t.md"; }

# ---- tlm-data --out and inputs
selected path.data-out-1001 && { in_case path.data-out-1001
    long=$(mkpath "$PWD" 1001)
    tc path.data-out-1001 "tlm-data build --out of 1,001 bytes" 2 "--out: the path is 1001 bytes, longer than the 1000 TLM allows here" "$D" build --tokenizer bytes --out "$long" "$FX/corpus"; }
selected path.data-odd && { in_case path.data-odd; mkdir -p "$ODD/in"; cp "$FX/corpus/GPL-2" "$ODD/in/"
    AFTER='[ -f "$ODD/ds/manifest.json" ]' AFTER_MSG="no dataset in the oddly named folder" \
        tc path.data-odd "tlm-data build with odd characters in --out and the input" 0 "" "$D" build --tokenizer bytes --out "$ODD/ds" "$ODD/in"; }

# ---- permissions: as an unprivileged user (nobody when this runs as root)
if [ $PERM_OK = 1 ]; then
    # pu ID WHAT STATUS PATTERN CMD...: CMD as the unprivileged user
    pu() { local id=$1 what=$2 st=$3 pat=$4; shift 4; tc "$id" "$what" "$st" "$pat" "${ASU[@]}" "$@"; }
    selected perm.config && { in_case perm.config; cp "$J" c.yaml; chmod 000 c.yaml
        pu perm.config "--config that cannot be read" 2 "c\.yaml: cannot open: Permission denied" "$W" --describe --config c.yaml; }
    selected perm.out && { in_case perm.out; mkdir ro; chmod 555 ro
        pu perm.out "--out in a folder that cannot be written" 6 "ro/run: cannot create folder: Permission denied" "$W" --config "$J" --out ro/run --threads 1; }
    selected perm.data && { in_case perm.data; cp "$SHARD" s.tlmtok; chmod 000 s.tlmtok; DATA="train: $PWD/s.tlmtok" job j.yaml; mkdir -m 777 out
        pu perm.data "data.train that cannot be read (a fault of the machine: io)" 6 "s\.tlmtok: .*Permission denied" "$W" --config j.yaml --out out/r --threads 1; }
    selected perm.eval-file && { in_case perm.eval-file; cp "$FX/corpus/GPL-2" t.txt; chmod 000 t.txt; mkdir -m 777 out
        EVAL=", suites: [val, alignment], alignment: {text: $PWD/t.txt, tokens: 256}" job j.yaml
        pu perm.eval-file "an evaluation file that cannot be read (io)" 6 "t\.txt: .*Permission denied" "$W" --config j.yaml --out out/r --threads 1; }
    selected perm.resume-ckpt && { in_case perm.resume-ckpt; mkdir -m 777 out; cp -a "$FX/run" out/r; chown -R 65534 out/r 2>/dev/null; chmod 000 out/r/ckpt/step-00000016/model.safetensors
        AFTER='[ -f out/r/ckpt/step-00000016/model.safetensors ]' AFTER_MSG="the unreadable checkpoint was deleted" \
            pu perm.resume-ckpt "--resume with a newest checkpoint that cannot be read" 0 "step-00000016 is not usable.*Permission denied" "$W" --config "$J" --out out/r --threads 1 --resume; }
    selected perm.db && { in_case perm.db; chmod 777 .; cp "$DB" r.db; chmod 444 r.db
        AFTER='cmp -s r.db "$DB"' AFTER_MSG="the read-only database was changed" \
            pu perm.db "tlmd --db that cannot be written" 2\|3 "r\.db: .*(Permission denied|read-only|readonly|cannot be written)" "$T" --sweeps "$FX/t.yaml" --db r.db --no-progress; }
    # issue 26: the folder of the database, which SQLite writes its -wal and -shm into
    selected issue26.perm-db-folder && { in_case issue26.perm-db-folder; mkdir ro; cp "$DB" ro/r.db; chmod 666 ro/r.db; chmod 555 ro
        AFTER='cmp -s ro/r.db "$DB"' AFTER_MSG="the database was changed" \
            pu issue26.perm-db-folder "tlmd --db in a folder that cannot be written (the file itself can)" 3 "ro/r\.db: its folder ro is not writable \(Permission denied\): SQLite keeps the database's -wal and -shm files beside it" \
            "$T" --sweeps "$FX/t.yaml" --db ro/r.db --no-progress; }
    selected issue26.perm-db-new && { in_case issue26.perm-db-new; mkdir -m 555 ro
        pu issue26.perm-db-new "tlmd --db of a new file in a folder that cannot be written" 3 "ro/r\.db: cannot create: its folder ro is not writable by this user \(Permission denied\)" \
            "$T" --sweeps "$FX/t.yaml" --db ro/r.db --no-progress; }
    selected issue26.perm-dry-data && { in_case issue26.perm-dry-data; chmod 755 .; cp "$SHARD" s.tlmtok; chmod 000 s.tlmtok
        sweep s.yaml s; sed -i "s|train: $FX/ds/train, val: $FX/ds/val|train: s.tlmtok|" s.yaml; chmod 644 s.yaml
        pu issue26.perm-dry-data "tlmd --dry-run of a sweep whose data cannot be read" 2 "s\.yaml: data\.train s\.tlmtok: Permission denied \(a relative path is read from .*, the folder tlmd runs in\)" \
            "$T" --dry-run --sweeps s.yaml --db none.db; }
    selected perm.runs && { in_case perm.runs; chmod 777 .; mkdir -m 555 runs
        pu perm.runs "tlmd --runs that cannot be written" 1\|2\|3 "runs.*Permission denied" "$T" --sweeps "$FX/t.yaml" --runs runs --no-progress --retry-delay 0 --max-machine-faults 2 --threads-per-worker 1; }
    selected perm.status && { in_case perm.status; cp "$DB" r.db; chmod 000 r.db
        pu perm.status "tlmd status --db that cannot be read" 2\|3 "r\.db: .*(Permission denied|unreadable)" "$T" status --db r.db; }
    selected perm.report-db && { in_case perm.report-db; cp "$DB" r.db; chmod 000 r.db
        pu perm.report-db "tlm-report --db that cannot be read" 1 "r\.db: .*(Permission denied|unreadable)" "$R" --db r.db --list; }
    selected perm.report-out && { in_case perm.report-out; mkdir -m 555 ro
        pu perm.report-out "tlm-report --out in a folder that cannot be written" 1 "ro/t\.md.*Permission denied" "$R" --db "$DB" --table runs --out ro/t.md; }
    selected perm.data-input && { in_case perm.data-input; mkdir -m 777 w; cp "$FX/corpus/GPL-2" g; chmod 000 g
        pu perm.data-input "tlm-data build with an input that cannot be read" 1 "g: .*Permission denied" "$D" build --tokenizer bytes --out w/x g; }
    selected perm.data-out && { in_case perm.data-out; mkdir -m 555 ro
        pu perm.data-out "tlm-data build --out in a folder that cannot be written" 1 "ro/x.*Permission denied" "$D" build --tokenizer bytes --out ro/x "$FX/corpus"; }
else
    for c in perm.config perm.out perm.data perm.eval-file perm.resume-ckpt perm.db perm.runs perm.status perm.report-db perm.report-out perm.data-input perm.data-out \
        issue26.perm-db-folder issue26.perm-db-new issue26.perm-dry-data; do
        notried "$c" "a permission case" "running as root without setpriv: root reads and writes everything"
    done
fi
