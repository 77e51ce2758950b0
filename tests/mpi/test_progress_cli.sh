#!/usr/bin/env bash
# Black-box tests of mpilens-progress under MPI (docs/programs/mpilens-progress.md is the contract):
# - bad input ends with one line naming the cause, exit status 2 and no results file;
# - without libmpilens-progress, a small sweep of p2p, nbc and interrupts has every planned point,
#   in order, with the documented fields and the truths of their definitions (check_progress.py:
#   floor(size/interval)+1 tests, overheads that are sums of durations not negative, t_b shared by
#   a size's points, test-best the lowest interval, t_c recorded), and says the library is absent;
# - with the library preloaded (MPILENS_PROGRESS=yield), the meta record and every point say so;
# - MPILENS_PROGRESS without the library gets a warning; the MPI libraries' async progress
#   variables are recorded as given and named in the label when switched on;
# - --resume completes a file cut inside a size's test intervals (t_b and the overheads measured
#   before are read back), and refuses a file measured under another progress setting.
# Timings are never compared: the machines are shared and noisy.
# usage: test_progress_cli.sh PROGRAM NP LIBRARY LAUNCHER [LAUNCHER ARGS...]
set -u
library=$3
checker="$(dirname "$0")/check_progress.py"
. "$(dirname "$0")/testlib.sh"
cli_args "$@"

cleared=(LD_PRELOAD MPILENS_PROGRESS MPIR_CVAR_ASYNC_PROGRESS I_MPI_ASYNC_PROGRESS)
tool=mpilens-progress plain=none

# run NAME RANKS SETTING ARGS...: SETTING "none" runs without the library or any progress
# variable; "yield" preloads the library in that mode; "unloaded" sets MPILENS_PROGRESS and two
# async progress variables (one off, one on) without preloading the library.
run() {
  local name=$1 ranks=$2 setting=$3 settings=()
  shift 3
  case $setting in
    yield) settings=(LD_PRELOAD="$library" MPILENS_PROGRESS=yield) ;;
    unloaded) settings=(MPILENS_PROGRESS=yield MPIR_CVAR_ASYNC_PROGRESS=0 I_MPI_ASYNC_PROGRESS=1) ;;
  esac
  run_env "$name" "$ranks" "$@"
}

if [ "$np" = 2 ]; then
  expect_usage_error one_rank_p2p 1 '--bench p2p needs at least 2 ranks' --bench p2p
  expect_usage_error bad_bench "$np" 'invalid value "p2p,pingpong" for --bench' --bench p2p,pingpong
  expect_usage_error bad_op "$np" 'invalid value "iallreduce,ibarrier" for --ops' --ops iallreduce,ibarrier
  expect_usage_error bad_strategy "$np" 'invalid value "poll" for --strategy' --strategy poll
  expect_usage_error bad_compute "$np" 'invalid value "cpu" for --compute' --compute cpu
  expect_usage_error bad_sizes "$np" 'invalid value "4M:1K" for --sizes' --sizes 4M:1K
  expect_usage_error above_int "$np" 'invalid value for --sizes: at most 2147483647 bytes' --sizes 1:3G
  expect_usage_error no_interval "$np" 'invalid value for --intervals: intervals are from 1 byte to 1GiB' --intervals 0:4K
  expect_usage_error huge_interval "$np" 'invalid value for --intervals: intervals are from 1 byte to 1GiB' --intervals 1K:2G
  expect_usage_error absurd_rate "$np" 'invalid value "1000000" for --interrupt-rate' --interrupt-rate 1000000
  expect_usage_error short_work "$np" 'invalid value for --interrupt-work: at least 1ms' --interrupt-work 10us
fi

# A small sweep: sizes 1 to 4 KiB with tests every 1 or 2 KiB (1 to 5 tests), both kinds of
# computation, Iallreduce, a short interrupt measurement. With more ranks than cores every
# collective costs scheduler time slices: few points keep the test within seconds.
sweep=(--preset quick --sizes 1K:4K --intervals 1K:2K --reps 3 --ops iallreduce
       --interrupt-work 20ms --interrupt-rounds 1)
expect=(--ranks "$np" --sizes 1024:4096 --intervals 1024:2048 --reps 3 --ops iallreduce)
passes() { # passes NAME CHECKER-ARGS...: the run succeeded and its file passes the checker
  local name=$1
  shift
  [ "$(status "$name")" = 0 ] || { fail "$name failed: $(tail -5 "$work/$name.err")"; return 1; }
  python3 "$checker" "$work/$name.jsonl" "${expect[@]}" "$@" || { fail "$name: checks failed"; return 1; }
}

run plain "$np" none "${sweep[@]}" --output "$work/plain.jsonl"
passes plain --bench p2p,nbc,interrupts --label none --loaded no
grep -q "warning" "$work/plain.err" && fail "plain: a warning without reason: $(grep -m1 warning "$work/plain.err")"

run thread "$np" yield "${sweep[@]}" --bench p2p,nbc --sizes 4K:4K --output "$work/thread.jsonl"
passes thread --bench p2p,nbc --sizes 4096:4096 --label thread:yield --loaded yes --mode yield \
  --env MPILENS_PROGRESS=yield

# The seed's placement of the tests (at the start, evenly, at the end), named in the points.
run seed "$np" none "${sweep[@]}" --bench p2p --test-placement seed --output "$work/seed.jsonl"
passes seed --bench p2p --label none --loaded no --test-placement seed

run unloaded "$np" unloaded "${sweep[@]}" --bench p2p --sizes 1K:1K --intervals 1K:1K --output "$work/unloaded.jsonl"
if passes unloaded --bench p2p --sizes 1024:1024 --intervals 1024:1024 --label async:I_MPI_ASYNC_PROGRESS=1 \
  --loaded no --env MPILENS_PROGRESS=yield --env MPIR_CVAR_ASYNC_PROGRESS=0 --env I_MPI_ASYNC_PROGRESS=1; then
  warning="MPILENS_PROGRESS is yield but libmpilens-progress is not loaded"
  grep -q "^mpilens-progress: warning: $warning" "$work/unloaded.err" ||
    fail "unloaded: no warning on stderr: $(head -3 "$work/unloaded.err")"
  grep -q "\"type\":\"note\",\"level\":\"warning\",\"text\":\"$warning" "$work/unloaded.jsonl" ||
    fail "unloaded: no warning note in the results"
fi

# --resume: the p2p points of 1 KiB cut after the work-based test at 1 KiB, and in the middle of
# the next record: the rest of the size needs t_b and the 1 KiB overhead read back.
if [ "$(status plain)" = 0 ]; then
  head -n 8 "$work/plain.jsonl" >"$work/resume.jsonl"
  sed -n 9p "$work/plain.jsonl" | head -c 60 >>"$work/resume.jsonl"
  cp "$work/resume.jsonl" "$work/cut.jsonl"
  run resume_other "$np" yield "${sweep[@]}" --resume --output "$work/resume.jsonl"
  [ "$(status resume_other)" = 2 ] || fail "resume_other: status $(status resume_other), expected 2"
  refusal="cannot resume \"$work/resume.jsonl\": it was measured under \"progress_setting\":{\"label\":\"none\""
  grep -qF "mpilens-progress: $refusal" "$work/resume_other.err" ||
    fail "resume_other: $(head -3 "$work/resume_other.err")"
  cmp -s "$work/resume.jsonl" "$work/cut.jsonl" || fail "resume_other changed the file"
  run resume "$np" none "${sweep[@]}" --resume --output "$work/resume.jsonl"
  if passes resume --bench p2p,nbc,interrupts --label none --loaded no; then
    head -n 8 "$work/resume.jsonl" | cmp -s - <(head -n 8 "$work/plain.jsonl") || fail "resume changed finished records"
    [ "$(grep -c '"text":"resumed"' "$work/resume.jsonl")" = 1 ] || fail "resume: no resume note"
  fi
fi

finish "all mpilens-progress checks passed at $np ranks"
