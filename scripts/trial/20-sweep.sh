# 20-sweep.sh: sweep files (docs/sweeps.md) through `tlmd --dry-run
# --sweeps`: the test suite's catalogue of mistakes (tests/data/sweeps/bad/,
# each with the message it must give), then more: limits, bombs, junk, folders
# of sweeps, names.  A refused sweep exits 2 with file:line:col and what was
# expected, and records nothing.  Sourced by trial.sh.

# ere TEXT: TEXT as an extended regular expression that matches it literally
ere() { printf '%s' "$1" | sed 's/[][\.*^$(){}?+|/]/\\&/g'; }

# sw ID WHAT PATTERN TEXT: s.yaml holds TEXT; a dry run must exit 2 saying PATTERN
sw() {
    selected "$1" || return 0
    in_case "$1"
    printf '%s\n' "$4" >s.yaml
    tc "$1" "$2" 2 "$3" "$T" --dry-run --sweeps s.yaml
}
# sw_ok ID WHAT PATTERN TEXT: a dry run lists it (exit 0) saying PATTERN
sw_ok() {
    selected "$1" || return 0
    in_case "$1"
    printf '%s\n' "$4" >s.yaml
    tc "$1" "$2" 0 "$3" "$T" --dry-run --sweeps s.yaml
}

# ---- the catalogue: every file with its expected message
for f in "$SRC"/tests/data/sweeps/bad/*.yaml; do
    b=$(basename "$f" .yaml)
    id=sweep.cat-$b
    selected "$id" || continue
    in_case "$id"
    cp "$f" s.yaml
    want=$(head -1 s.yaml | sed -n 's/^# expect: //p')
    case $want in
    -*) pat="s\\.yaml$(ere "${want#-}")" ;;
    *) pat="s\\.yaml:$(ere "${want//FILE/s.yaml}")" ;;
    esac
    tc "$id" "catalogue: $b" 2 "$pat" "$T" --dry-run --sweeps s.yaml
done

SB="name: t
base: {scale: 1m}"
# ---- limits
sw sweep.grid-points "a grid of 8^8 = 16.7M points" "s\.yaml:3:[0-9]+: grid: 16777216 points; at most 10000000 are allowed" "$SB
grid: {seed: [0,1,2,3,4,5,6,7], train.lr: [1,2,3,4,5,6,7,8], train.beta1: [0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8], train.beta2: [0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8], train.weight_decay: [0,1,2,3,4,5,6,7], train.grad_clip: [0,1,2,3,4,5,6,7], train.min_lr_ratio: [0,0.1,0.2,0.3,0.4,0.5,0.6,0.7], model.init_std: [0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08]}"
sw sweep.grid-keys "65 grid keys" "s\.yaml:[0-9]+:[0-9]+: grid: more than 64 keys" "$SB
grid:
$(for i in $(seq 65); do echo "  k$i: [1]"; done)"
selected sweep.huge && { in_case sweep.huge; { echo "$SB"; head -c 17000000 /dev/zero | tr '\0' '#'; echo; } >s.yaml
    tc sweep.huge "a 17 MB sweep file" 2 "s\.yaml: .*(larger than|16 MiB|bytes)" "$T" --dry-run --sweeps s.yaml; }
selected sweep.many-keys && { in_case sweep.many-keys; { echo "name: t"; echo "base:"; seq -f '  k%.0f: 1' 200000; } >s.yaml
    tc sweep.many-keys "200,000 keys in base (2.6 MB)" 2 "s\.yaml:3:3: unknown key 'k1'" "$T" --dry-run --sweeps s.yaml; }
selected sweep.many-seeds && { in_case sweep.many-seeds; { echo "$SB"; printf 'seeds: ['; seq -s, 0 99999 | tr -d '\n'; echo ']'; } >s.yaml
    TO=60 tc sweep.many-seeds "100,000 seeds: listed in seconds" 0 "total: 100000 distinct jobs: 100000 new" "$T" --dry-run --sweeps s.yaml; }
sw sweep.name-101 "a name of 101 characters" "s\.yaml:1:7: name: expected 1 to 100 characters" "name: $(printf 'a%.0s' $(seq 101))
base: {scale: 1m}"
sw_ok sweep.name-100 "a name of 100 characters" "sweep a{100} " "name: $(printf 'a%.0s' $(seq 100))
base: {scale: 1m}"
sw sweep.name-slash "a name with a slash" "s\.yaml:1:7: name: 'a/b' has a character other than letters" "name: a/b
base: {scale: 1m}"
sw sweep.name-empty "an empty name" "s\.yaml:1:[0-9]+: name: expected 1 to 100 characters" "name: ''
base: {scale: 1m}"
sw_ok sweep.name-number "a number as the name (the text 5)" "sweep 5 " "name: 5
base: {scale: 1m}"

# ---- keys of the sweep
sw sweep.overlap "grid keys taper and taper.schedule overlap" "s\.yaml:3:[0-9]+: grid: 'taper.schedule' overlaps 'taper' \(at s\.yaml:3:8\); vary one or the other" "$SB
grid: {taper: [{schedule: cosine}], taper.schedule: [linear]}"
sw sweep.seed-grid-seeds "seed in grid and seeds" "s\.yaml:3:8: seed is given both in grid and in seeds \(at s\.yaml:4:8\); keep one" "$SB
grid: {seed: [1, 2]}
seeds: [1]"
sw sweep.seed-base-seeds "seed in base and seeds" "s\.yaml:2:[0-9]+: seed is given both in base and in seeds \(at s\.yaml:3:8\); keep one" "name: t
base: {scale: 1m, seed: 3}
seeds: [1]"
sw sweep.seeds-twice "seeds: [1, 1]" "s\.yaml:3:12: seeds: 1 is listed twice" "$SB
seeds: [1, 1]"
sw sweep.seeds-empty "seeds: []" "s\.yaml:3:8: seeds: expected a non-empty list of integers \(e\.g\. \[0, 1, 2\]\), got an empty list" "$SB
seeds: []"
sw sweep.seeds-neg "seeds: [-1]" "s\.yaml:3:9: seeds: -1 is out of range \(expected an integer from 0 to 2\^32-1\)" "$SB
seeds: [-1]"
sw sweep.seeds-frac "seeds: [1.5]" "s\.yaml:3:9: seeds: expected an integer, got '1.5'" "$SB
seeds: [1.5]"
sw sweep.seeds-int64 "seeds: [9223372036854775807]" "s\.yaml:3:9: seeds: 9223372036854775807 is out of range \(expected an integer from 0 to 2\^32-1\)" "$SB
seeds: [9223372036854775807]"
sw sweep.seeds-scalar "seeds: 3 (not a list)" "s\.yaml:3:8: seeds: expected a non-empty list of integers" "$SB
seeds: 3"
sw sweep.grid-scalar "grid.taper.schedule: linear (not a list)" "s\.yaml:3:24: grid.taper.schedule: expected a list of values \(e\.g\. \[linear\]\), got a string" "$SB
grid: {taper.schedule: linear}"
sw sweep.grid-bad-value "a grid value that is not valid for its key" "s\.yaml:3:33: taper.schedule: '5' is not one of uniform .*\(in the job taper.schedule=5\)" "$SB
grid: {taper.schedule: [linear, 5]}"
sw sweep.grid-list "grid: a list instead of a mapping" "s\.yaml:3:[0-9]+: grid: expected a mapping" "$SB
grid: [taper.schedule, linear]"
sw sweep.exclude-nogrid "exclude without a grid" "s\.yaml:3:11: exclude: removes grid points, but the sweep has no grid" "$SB
exclude: [{taper.schedule: linear}]"
sw sweep.include-map "include: a mapping instead of a list" "s\.yaml:3:10: include: expected a list of mappings" "$SB
include: {taper.schedule: linear}"
sw sweep.include-unknown "an include entry with an unknown key" "s\.yaml:3:[0-9]+: unknown key 'shedule' in taper; did you mean 'schedule'" "$SB
include: [{taper.shedule: linear}]"
sw sweep.include-invalid "an include entry that is not a valid job" "s\.yaml:3:[0-9]+: taper.ratio: only used with linear, cosine and sigmoid" "$SB
include: [{taper.ratio: [1.5, 0.5]}]"
sw sweep.description-list "description: [1]" "s\.yaml:2:14: description: expected text, got a list" "name: t
description: [1]
base: {scale: 1m}"
sw sweep.dup-name "name given twice" "s\.yaml:2:1: duplicate key 'name' \(first given at s\.yaml:1:1\)" "name: a
name: b
base: {scale: 1m}"
sw sweep.dup-base "base given twice" "s\.yaml:3:1: duplicate key 'base' \(first given at s\.yaml:2:1\)" "$SB
base: {scale: 3m}"
sw sweep.dup-nested-dotted "model: {d_model} beside model.d_model in base" "s\.yaml:[0-9]+:[0-9]+: 'model.d_model' is set twice: here and at s\.yaml:[0-9]+:[0-9]+" "name: t
base:
  scale: 1m
  model: {d_model: 32}
  model.d_model: 64"
sw sweep.unknown-top "an unknown top-level key (grd)" "s\.yaml:3:1: unknown key 'grd' in a sweep; did you mean 'grid'" "$SB
grd: {seed: [1]}"
sw sweep.no-name "no name" "s\.yaml:1:1: a sweep needs a name \(name: my_sweep\)" "base: {scale: 1m}"
sw sweep.no-base-data "no base: a job config that needs model sizes" "s\.yaml.*(model.d_model|required)" "name: t"
sw sweep.tag "a !!python/object tag in base" "s\.yaml:2:[0-9]+: YAML tag '!!python/object/apply:os.system' is not supported here" "name: t
base: !!python/object/apply:os.system [ls]"
sw sweep.alias-bomb "an alias bomb in grid" "s\.yaml:[0-9]+:[0-9]+: YAML aliases \(\*a\) are not supported" "$SB
x: &a [1, 1, 1, 1, 1, 1, 1, 1]
grid: {seed: [*a, *a, *a, *a, *a, *a, *a, *a]}"
sw sweep.two-docs "two YAML documents" "s\.yaml:[0-9]+:1: more than one document" "$SB
---
$SB"
sw sweep.empty "an empty sweep file" "s\.yaml: the file is empty" ""
sw sweep.list-doc "a list as the sweep" "s\.yaml:1:1: a sweep file is a mapping \(name, base, grid, \.\.\.\), got a list" "[a, b]"
sw sweep.syntax "a syntax error" "s\.yaml:3:[0-9]+: invalid YAML/JSON" "$SB
grid: {seed: [1, 2}"
selected sweep.binary && { in_case sweep.binary; head -c 2048 /dev/urandom >s.yaml
    tc sweep.binary "2 KiB of random bytes" 2 "s\.yaml(:[0-9]+:[0-9]+)?: invalid YAML" "$T" --dry-run --sweeps s.yaml; }
selected sweep.deep && { in_case sweep.deep; { echo "name: t"; printf 'base: '; head -c 50000 /dev/zero | tr '\0' '['; echo; } >s.yaml
    tc sweep.deep "50,000 nested lists" 2 "s\.yaml:2:[0-9]+: nested deeper than 64 levels" "$T" --dry-run --sweeps s.yaml; }
selected sweep.bom && { in_case sweep.bom; printf '\357\273\277name: t\nbase: {scale: 1m}\n' >s.yaml
    tc sweep.bom "a UTF-8 byte-order mark" 0 "total: 1 distinct jobs: 1 new" "$T" --dry-run --sweeps s.yaml; }
selected sweep.latin1 && { in_case sweep.latin1; printf 'name: t\ndescription: "caf\351"\nbase: {scale: 1m}\n' >s.yaml
    tc sweep.latin1 "a Latin-1 byte on line 2" 2 "s\.yaml:2:[0-9]+: invalid YAML/JSON: .*UTF-8" "$T" --dry-run --sweeps s.yaml; }

# ---- what becomes jobs
sw_ok sweep.dedup "a grid listing one value twice: one job" "total: 1 distinct jobs" "$SB
grid: {taper.schedule: [linear, linear]}"
sw_ok sweep.section-grid "a grid over a whole section (train: [{lr}, {lr}])" "total: 2 distinct jobs: 2 new" "$SB
grid: {train: [{lr: 1e-3}, {lr: 3e-3}]}"
sw_ok sweep.same-lr "lr 0.001 and 1e-3: one job" "total: 1 distinct jobs" "$SB
grid: {train.lr: [0.001, 1e-3]}"
sw sweep.exclude-all "an exclude that removes every point" "s\.yaml:1:1: the sweep 't' expands to zero jobs" "$SB
grid: {taper.schedule: [linear]}
exclude: [{taper.schedule: linear}]"

# ---- folders of sweeps, symlinks, FIFOs
selected sweep.dir-empty && { in_case sweep.dir-empty; mkdir sw
    tc sweep.dir-empty "a sweep folder with no .yaml file" 2 "--sweeps sw: the folder holds no \.yaml or \.yml file" "$T" --dry-run --sweeps sw; }
selected sweep.dir-same-name && { in_case sweep.dir-same-name; mkdir sw; printf 'name: a\nbase: {scale: 1m}\n' >sw/a.yaml
    printf 'name: a\nbase: {scale: 3m}\n' >sw/b.yaml
    tc sweep.dir-same-name "two files, one name, different jobs" 2 "sw/b\.yaml:1:7: sweep name 'a' is already used by sw/a\.yaml with different jobs" "$T" --dry-run --sweeps sw; }
selected sweep.dir-copies && { in_case sweep.dir-copies; mkdir sw; printf 'name: a\nbase: {scale: 1m}\n' >sw/a.yaml; cp sw/a.yaml sw/b.yaml
    tc sweep.dir-copies "two copies of one sweep: listed once" 0 "total: 1 distinct jobs" "$T" --dry-run --sweeps sw; }
selected sweep.dir-bad-second && { in_case sweep.dir-bad-second; mkdir sw; printf 'name: a\nbase: {scale: 1m}\n' >sw/a.yaml
    printf 'name: b\nbase: {scale: 1m, seed: x}\n' >sw/b.yaml
    AFTER='[ ! -e results.db ] || [ "$(q results.db "select (select count(*) from sweeps) + (select count(*) from jobs)")" = 0 ]' \
        AFTER_MSG="something was recorded" \
        tc sweep.dir-bad-second "a bad file after a good one (a real run): nothing recorded" 2 "sw/b\.yaml:2:[0-9]+: seed: expected an integer" \
        "$T" --sweeps sw --no-progress; }
selected sweep.bad-leaves-no-db && { in_case sweep.bad-leaves-no-db; printf 'name: b\nbase: {scale: 1m, seed: x}\n' >s.yaml
    AFTER='[ ! -e results.db ] && [ ! -e runs ]' \
        AFTER_MSG="a refused run left a new results.db and runs/ behind (docs/tlmd.md: a bad file leaves results.db untouched)" \
        tc sweep.bad-leaves-no-db "a refused run where no results.db existed leaves none" 2 "s\.yaml:2:[0-9]+: seed: expected an integer" \
        "$T" --sweeps s.yaml --no-progress; }
selected sweep.symlink && { in_case sweep.symlink; printf 'name: a\nbase: {scale: 1m}\n' >real.yaml; ln -s real.yaml s.yaml
    tc sweep.symlink "a symlink to a sweep file" 0 "total: 1 distinct jobs" "$T" --dry-run --sweeps s.yaml; }
selected sweep.symlink-dangling && { in_case sweep.symlink-dangling; ln -s nowhere.yaml s.yaml
    tc sweep.symlink-dangling "a dangling symlink as the sweep file" 2 "s\.yaml: .*(No such file|does not exist|dangling)" "$T" --dry-run --sweeps s.yaml; }
selected sweep.symlink-loop && { in_case sweep.symlink-loop; ln -s s.yaml s.yaml
    tc sweep.symlink-loop "a symlink to itself" 2 "s\.yaml: .*(symbolic links|loop)" "$T" --dry-run --sweeps s.yaml; }
selected sweep.fifo && { in_case sweep.fifo; mkfifo s.yaml
    TO=10 tc sweep.fifo "a FIFO as the sweep file" 2 "s\.yaml: is not a regular file \(a FIFO\)" "$T" --dry-run --sweeps s.yaml; }
selected sweep.dir-fifo && { in_case sweep.dir-fifo; mkdir sw; printf 'name: a\nbase: {scale: 1m}\n' >sw/a.yaml; mkfifo sw/b.yaml
    TO=10 tc sweep.dir-fifo "a FIFO named b.yaml in a sweep folder" 2 "sw/b\.yaml: is not a regular file \(a FIFO\)" "$T" --dry-run --sweeps sw; }
selected sweep.devnull && { in_case sweep.devnull
    tc sweep.devnull "/dev/null as the sweep file" 2 "/dev/null: (is not a regular file|the file is empty)" "$T" --dry-run --sweeps /dev/null; }
selected sweep.dir-yaml && { in_case sweep.dir-yaml; mkdir -p sw/x.yaml
    tc sweep.dir-yaml "a folder named x.yaml inside a sweep folder" 2 "sw/x\.yaml: is a directory \(expected a sweep file" "$T" --dry-run --sweeps sw; }
