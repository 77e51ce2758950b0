#!/usr/bin/env bash
# Black-box tests of a benchmark program under MPI: bad input ends with one clear line and exit
# status 2, results already written are never lost, and --resume completes an interrupted file
# without measuring a finished point twice.
# usage: test_sanity_cli.sh PROGRAM NP LAUNCHER [LAUNCHER ARGS...]
set -u
program=$1 np=$2
shift 2
launch=("$@" -n "$np")
. "$(dirname "$0")/testlib.sh"

# run NAME ARGS...: runs the program, keeps stdout, stderr and the status
run() {
  local name=$1; shift
  record "$name" "${launch[@]}" "$program" "$@"
}
# expect_usage_error NAME MESSAGE ARGS...: exit 2, and the message on the program's first stderr line
expect_usage_error() {
  local name=$1 message=$2; shift 2
  run "$name" "$@"
  expect_refused "$name" mpilens-sanity "$message"
  grep -q "Traceback\|Segmentation\|core dumped" "$work/$name.err" && fail "$name: crashed"
}

# shellcheck disable=SC2054 # the commas separate --checks' names
quick=(--preset quick --checks clock,offset,compute --compute 1us:100us --reps 5)

expect_usage_error bad_range 'invalid value "1:0" for --compute' --compute 1:0
expect_usage_error bad_time 'invalid value "4Q" for --compute' --compute 4Q
expect_usage_error bad_negative 'invalid value "-1" for --leads' --leads -1
expect_usage_error bad_option 'unknown option --frobnicate' --frobnicate
expect_usage_error bad_check 'invalid value "clock,teleport" for --checks' --checks clock,teleport
expect_usage_error bad_reps 'invalid value "0" for --reps' --reps 0
expect_usage_error no_dir 'cannot write output' "${quick[@]}" --output "$work/no/such/dir/x.jsonl"

run help --help
[ "$(status help)" = 0 ] && grep -q -- "--compute MIN:MAX" "$work/help.out" || fail "--help"
[ "$(grep -c '^usage:' "$work/help.out")" = 1 ] || fail "--help printed by more than one rank"

# a complete run
run full "${quick[@]}" --output "$work/full.jsonl"
[ "$(status full)" = 0 ] || fail "full run failed: $(cat "$work/full.err")"
points=$(grep -c '"type":"point"' "$work/full.jsonl")
total=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["points_total"])' "$work/full.jsonl")
[ "$points" = "$total" ] || fail "full run has $points points, planned $total"

# never overwrite results
cp "$work/full.jsonl" "$work/keep.jsonl"
expect_usage_error exists 'already holds results; use --resume' "${quick[@]}" --output "$work/keep.jsonl"
cmp -s "$work/full.jsonl" "$work/keep.jsonl" || fail "an existing results file was modified"

# an interrupted run: 4 complete records and half of the fifth
head -n 4 "$work/full.jsonl" >"$work/cut.jsonl"
sed -n 5p "$work/full.jsonl" | head -c 40 >>"$work/cut.jsonl"
head -n 4 "$work/full.jsonl" >"$work/cut.expected-prefix"
expect_usage_error resume_other_reps 'it was measured with --reps 5' --preset quick --checks clock,offset,compute \
  --compute 1us:100us --reps 7 --resume --output "$work/cut.jsonl"
run resume "${quick[@]}" --resume --output "$work/cut.jsonl"
[ "$(status resume)" = 0 ] || fail "resume failed: $(cat "$work/resume.err")"
head -n 4 "$work/cut.jsonl" | cmp -s - "$work/cut.expected-prefix" || fail "resume changed finished records"
python3 - "$work/full.jsonl" "$work/cut.jsonl" <<'PY' || failures=$((failures + 1))
import json, sys
def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]  # every line must be whole JSON
full, resumed = records(sys.argv[1]), records(sys.argv[2])
keys = lambda rs: [r["key"] for r in rs if r["type"] == "point"]
ok = True
if sorted(keys(full)) != sorted(keys(resumed)):
    print("FAIL: resumed file has other points:", sorted(set(keys(full)) ^ set(keys(resumed))), file=sys.stderr); ok = False
if len(keys(resumed)) != len(set(keys(resumed))):
    print("FAIL: a point was measured twice", file=sys.stderr); ok = False
notes = [r for r in resumed if r["type"] == "note" and r["text"] == "resumed"]
if len(notes) != 1 or "--resume" not in notes[0]["command"]:
    print("FAIL: no resume note with the command line", file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY

# resuming a complete file measures nothing more
before=$(grep -c '"type":"point"' "$work/cut.jsonl")
run resume_again "${quick[@]}" --resume --output "$work/cut.jsonl"
[ "$(status resume_again)" = 0 ] || fail "second resume failed"
[ "$(grep -c '"type":"point"' "$work/cut.jsonl")" = "$before" ] || fail "a complete file got new points"

finish "passed"
