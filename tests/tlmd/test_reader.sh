#!/bin/sh
# test_reader.sh: readers querying results.db in a loop while tlmd
# trains a sweep into it (one through the db API, one with no busy timeout
# at all, like the sqlite3 shell; each holds its read transaction open
# across queries) never see "database is locked" while the daemon runs, and
# never hold it up: its slowest commit stays short and the sweep completes.
# After the daemon has exited, readers that open and close the file in turns
# can meet SQLite's WAL recovery (the last one out leaves the shared index to
# be rebuilt by the next one in): failures after its exit are reported but
# are not what this test is about.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
R="$TLM_BUILDDIR/tests/tlmd/db_reader"

schedule_sweep 3 64
"$R" results.db stop api >api.out 2>&1 &
ra=$!
"$R" results.db stop plain >plain.out 2>&1 &
rp=$!
kids="$kids $ra $rp"
# the shell itself, too, in a loop (read-only, as docs/tlmd.md advises)
(while [ ! -e stop ]; do
    sqlite3 -readonly -batch results.db 'select count(*) from steps; select * from results' >/dev/null 2>cli.one
    [ -s cli.one ] && sed "s/^/$(date +%s.%N) /" cli.one >>cli.err
    sleep 0.01
done) &
rc_loop=$!
kids="$kids $rc_loop"

"$T" --sweeps three.yaml --workers 2 --threads-per-worker 1 >run.out 2>&1
rc=$?
t_end=$(date +%s.%N)
touch cli.err
sleep 0.3
touch stop
wait "$ra"
ra_rc=$?
wait "$rp"
rp_rc=$?
wait "$rc_loop"
ok $rc "the sweep completes under readers (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run.out
cat api.out plain.out
# failures before the daemon's exit ($1 at $5: the time)
during() { awk -v t="$t_end" '$2 == "error" && $5 + 0 < t { n++ } END { print n + 0 }' "$1"; }
after() { awk -v t="$t_end" '$2 == "error" && $5 + 0 >= t { n++ } END { print n + 0 }' "$1"; }
ea=$(during api.out)
ep=$(during plain.out)
echo "# after the daemon exited: $(after api.out) API reader failure(s), $(after plain.out) plain reader failure(s)"
ok $([ $ra_rc = 0 ] && [ "$ea" = 0 ] && echo 0 || echo 1) "db API reader: no error while the daemon ran ($ea)"
ok $([ $rp_rc = 0 ] && [ "$ep" = 0 ] && echo 0 || echo 1) "reader without busy timeout: no error while the daemon ran ($ep)"
! grep -q " 0 rounds" api.out && ! grep -q " 0 rounds" plain.out
ok $? "both readers ran and read"
sed "s/^/# shell: /" cli.err | head -5
locked=$(awk -v t="$t_end" '$1 + 0 < t && tolower($0) ~ /locked|busy/ { n++ } END { print n + 0 }' cli.err)
ok $([ "$locked" = 0 ] && echo 0 || echo 1) \
    "the sqlite3 shell never saw 'database is locked' while the daemon ran ($locked times)"
longest=$(sed -n 's/.*commits (longest \([0-9.]*\) ms).*/\1/p' run.out)
echo "# daemon: $(grep 'commits' run.out)"
ok $([ -n "$longest" ] && awk "BEGIN { exit !($longest < 500) }" && echo 0 || echo 1) \
    "the daemon's slowest commit took $longest ms (readers never block it)"
ok $([ "$(q "select count(*) from steps")" = 192 ] && echo 0 || echo 1) "every step written"
finish
