#!/usr/bin/env bash
# Black-box tests of mpilens-piggyback under MPI (docs/programs/mpilens-piggyback.md is the contract):
# - bad input ends with one line naming the option, exit status 2 and no results file;
# - without the layer, a small sweep has every planned point (latency and bandwidth, specific and
#   wildcard receives) with finite positive values, recorded as method "none" and a 0-byte pb;
# - with libmpilens-piggyback preloaded (datatype-before, check driver), the same points record
#   the layer's method and pb size, and the driver verified every piggyback without an error;
# - MPILENS_PB_METHOD set without the library preloaded gets a warning, on stderr and in the file;
# - --resume completes a cut file, and refuses one measured under another layer configuration.
# Timings are not compared: the machines are shared and noisy.
# usage: test_piggyback_cli.sh PROGRAM NP LIBRARY LAUNCHER [LAUNCHER ARGS...]
set -u
library=$3
checker="$(dirname "$0")/check_piggyback.py"
. "$(dirname "$0")/testlib.sh"
cli_args "$@"
cleared=(LD_PRELOAD MPILENS_PB_METHOD MPILENS_PB_SIZE MPILENS_PB_DRIVER)
tool=mpilens-piggyback plain=none

# run NAME RANKS LAYER ARGS...: LAYER "none" runs without the library; METHOD/SIZE/DRIVER preloads it
# so configured; "unloaded" sets MPILENS_PB_METHOD without preloading the library.
run() {
  local name=$1 ranks=$2 layer=$3 method pb_size driver settings=()
  shift 3
  if [ "$layer" = unloaded ]; then
    settings=(MPILENS_PB_METHOD=datatype-before)
  elif [ "$layer" != none ]; then
    IFS=/ read -r method pb_size driver <<<"$layer"
    settings=(LD_PRELOAD="$library" MPILENS_PB_METHOD="$method" MPILENS_PB_SIZE="$pb_size" MPILENS_PB_DRIVER="$driver")
  fi
  run_env "$name" "$ranks" "$@"
}

if [ "$np" = 2 ]; then
  expect_usage_error one_rank 1 'needs at least 2 ranks'
  expect_usage_error bad_recv "$np" 'invalid value "any" for --recv' --recv any
  expect_usage_error bad_sizes "$np" 'invalid value "4M:1K" for --sizes' --sizes 4M:1K
  expect_usage_error bad_size_unit "$np" 'invalid value "1:4Q" for --sizes' --sizes 1:4Q
  expect_usage_error above_int "$np" 'invalid value for --sizes: at most 2147483647 bytes' --sizes 1:3G
  expect_usage_error no_window "$np" 'invalid value "0" for --window' --window 0
  # 4096 receive slots of 1 GiB on rank 1: 4 TiB
  expect_usage_error too_big "$np" 'lower the maximum of --sizes or --window' --sizes 1:1G --window 4096
  expect_usage_error bad_bench "$np" 'invalid value "latency,pingpong" for --bench' --bench latency,pingpong
fi

# A small sweep: 1 B to 64 KiB, 17 sizes, 68 points, 3 repetitions each.
min=1 max=65536 window=16 reps=3
sweep=(--sizes "$min:$max" --window "$window" --reps "$reps")
check() { # check NAME METHOD PB_SIZE
  local name=$1
  [ "$(status "$name")" = 0 ] || { fail "$name failed: $(tail -5 "$work/$name.err")"; return 1; }
  python3 "$checker" "$work/$name.jsonl" "$2" "$3" "$min" "$max" "$window" "$reps" ||
    { fail "$name: checks failed"; return 1; }
}

run plain "$np" none "${sweep[@]}" --output "$work/plain.jsonl"
check plain none 0
grep -q "warning" "$work/plain.err" && fail "plain: a warning without reason: $(grep -m1 warning "$work/plain.err")"

# The check driver needs 24 pb bytes: it names each message's sender, tag, size and sequence number.
run layer "$np" datatype-before/24/check "${sweep[@]}" --output "$work/layer.jsonl"
if check layer datatype-before 24; then
  report='^libmpilens-piggyback: check (datatype-before, 24-byte pb): \([0-9]*\) messages verified, 0 errors$'
  verified=$(sed -n "s/$report/\1/p" "$work/layer.err")
  [ -n "$verified" ] && [ "$verified" -gt 0 ] ||
    fail "layer: the check driver says: $(grep -m1 'check (' "$work/layer.err") $(grep -m3 'check:' "$work/layer.err")"
fi

# The layer asked for but not loaded: measured without it, and said so.
run unloaded "$np" unloaded --sizes 1:1 --bench latency --recv specific --reps 2 --output "$work/unloaded.jsonl"
if [ "$(status unloaded)" = 0 ]; then
  warning="MPILENS_PB_METHOD is datatype-before but libmpilens-piggyback is not loaded"
  grep -q "^mpilens-piggyback: warning: $warning" "$work/unloaded.err" ||
    fail "unloaded: no warning on stderr: $(head -3 "$work/unloaded.err")"
  grep -q '"type":"note","level":"warning","text":"MPILENS_PB_METHOD is datatype-before' "$work/unloaded.jsonl" ||
    fail "unloaded: no warning note in the results"
  grep -q '"piggyback":{"method":"none","pb_size":0}' "$work/unloaded.jsonl" || fail "unloaded: meta does not say none"
else
  fail "unloaded failed: $(tail -3 "$work/unloaded.err")"
fi

# --resume: a run cut after 10 points and in the middle of the 11th is completed ...
head -n 11 "$work/plain.jsonl" >"$work/cut.jsonl"
sed -n 12p "$work/plain.jsonl" | head -c 50 >>"$work/cut.jsonl"
head -n 11 "$work/plain.jsonl" >"$work/cut.prefix"
# ... but not under another layer configuration, and the file is left as it was
cp "$work/cut.jsonl" "$work/cut.before"
run resume_other "$np" datatype-before/24/check "${sweep[@]}" --resume --output "$work/cut.jsonl"
[ "$(status resume_other)" = 2 ] || fail "resume_other: status $(status resume_other), expected 2"
refusal="cannot resume \"$work/cut.jsonl\": it was measured under \"piggyback\":{\"method\":\"none\",\"pb_size\":0}, this run under"
refusal+=" \"piggyback\":{\"method\":\"datatype-before\",\"pb_size\":24}"
grep -qF "mpilens-piggyback: $refusal" "$work/resume_other.err" ||
  fail "resume_other: $(head -3 "$work/resume_other.err")"
cmp -s "$work/cut.jsonl" "$work/cut.before" || fail "resume_other changed the file"
run resume "$np" none "${sweep[@]}" --resume --output "$work/cut.jsonl"
if [ "$(status resume)" = 0 ]; then
  head -n 11 "$work/cut.jsonl" | cmp -s - "$work/cut.prefix" || fail "resume changed finished records"
  python3 "$checker" "$work/cut.jsonl" none 0 "$min" "$max" "$window" "$reps" || fail "resume: checks failed"
  [ "$(grep -c '"text":"resumed"' "$work/cut.jsonl")" = 1 ] || fail "resume: no resume note"
else
  fail "resume failed: $(tail -3 "$work/resume.err")"
fi

finish "all mpilens-piggyback checks passed at $np ranks"
