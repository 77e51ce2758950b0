#!/usr/bin/env bash
# libmpilens-progress under MPI (docs/progress-library.md is the contract):
# - a 4 MiB (rendezvous) transfer completes while the receiver computes without MPI calls with the
#   thread in every mode, and only after the computation without it (no layer, or mode off);
#   event, on this one node, falls back to sleep and says why (tests/cluster runs it across nodes);
# - the tool API, linked: configure, the thread polling, stopped at MPI_Finalize, at the program's
#   MPI_THREAD_FUNNELED;
# - programs of the other tests give the same results under the thread: every point-to-point call,
#   wildcard receives, persistent requests, probes (test_pb_calls) and the CG example;
# - bad settings: a clear message and a defined fallback, never a hang;
# - below a layer that gives only MPI_THREAD_SERIALIZED (the piggyback layer): no thread, said so;
# - cpu=spare: a core no rank is bound to, when there is one.
# usage: test_progress_layer.sh LIBRARY RENDEZVOUS API CALLS CG PIGGYBACK NP LAUNCHER [ARGS...]
set -u
library=$1 rendezvous=$2 api=$3 calls=$4 cg=$5 piggyback=$6 np=$7
shift 7
launch=("$@")
. "$(dirname "$0")/../testlib.sh"

forward_vars "${launch[0]}" LD_PRELOAD MPILENS_PROGRESS MPILENS_PB_METHOD

run() { # run NAME SETTING PROGRAM ARGS...: the program with the layer preloaded (SETTING "": none)
  local name=$1 setting=$2; shift 2
  if [ "$setting" = none ]; then
    timeout 300 "${launch[@]}" -n "$np" "$@" >"$work/$name.out" 2>"$work/$name.err"
  else
    LD_PRELOAD=${PRELOAD:-$library} MPILENS_PROGRESS=$setting timeout 300 "${launch[@]}" "${forward[@]}" -n "$np" "$@" \
      >"$work/$name.out" 2>"$work/$name.err"
  fi
  echo $? >"$work/$name.status"
}
passed() { # passed NAME: exit 0 and "passed" printed
  [ "$(cat "$work/$1.status")" = 0 ] && grep -q "^passed" "$work/$1.out" "$work/$1.err" ||
    fail "$1: $(grep -h -m3 "unexpected\|FAIL\|check failed\|rror" "$work/$1.out" "$work/$1.err" || tail -3 "$work/$1.err")"
}
says() { # says NAME TEXT
  grep -qF -- "$2" "$work/$1.err" || fail "$1: no \"$2\" on stderr: $(head -3 "$work/$1.err")"
}

# background progress, with and without the thread
run no_layer none "$rendezvous" off && passed no_layer
run mode_off off "$rendezvous" off && passed mode_off
grep -q "progress thread started" "$work/mode_off.err" && fail "mode_off: a thread was started"
for mode in poll yield sleep:100 rt; do
  name=mode_${mode%%:*}
  run "$name" "$mode" "$rendezvous" on && passed "$name"
  says "$name" "progress thread started: ${mode%%:*}"
done

# event on one node: no descriptor to wait on in shared memory, so the sleep it falls back to
run mode_event event "$rendezvous" on && passed mode_event
says mode_event "share one node, whose shared memory has no descriptor to wait on: sleep:1000 instead"

# the tool API, linked (MPILENS_PROGRESS is overridden by the program's configure)
run api none "$api" sleep:200 && passed api
run api_event none "$api" event:0 && passed api_event

# other programs' results under the thread
run calls yield "$calls" && passed calls
run cg_none none "$cg" --n 12 --iterations 40
run cg_poll poll "$cg" --n 12 --iterations 40
reference=$(grep '^checksum' "$work/cg_none.out")
[ -n "$reference" ] && [ "$(grep '^checksum' "$work/cg_poll.out")" = "$reference" ] ||
  fail "cg: \"$(grep '^checksum' "$work/cg_poll.out")\" under the thread, \"$reference\" without"

# bad settings: said, then a defined fallback
run bogus bogus "$rendezvous" off && passed bogus
says bogus 'MPILENS_PROGRESS: unknown mode "bogus" (modes: off, poll, yield, sleep:US, rt[:US], event[:US]): no progress thread'
run no_pause sleep "$rendezvous" off && passed no_pause
says no_pause 'sleep needs its pause in microseconds, as in sleep:50: no progress thread'
run zero_pause sleep:0 "$rendezvous" off && passed zero_pause
says zero_pause '"sleep:0": the pause must be a whole number of microseconds, 1 to 1000000'
run event_too_long event:1000001 "$rendezvous" off && passed event_too_long
says event_too_long '"event:1000001": the longest wait must be a whole number of microseconds, 0 to 1000000'
run bad_cpu yield,cpu=100000 "$rendezvous" on && passed bad_cpu
says bad_cpu 'cpu=100000 is not a processing unit this process may use'
run bad_placement yield,core=1 "$rendezvous" off && passed bad_placement
says bad_placement '"core=1": the placement is cpu=N'
if command -v setpriv >/dev/null; then # rt without the right to it: the normal policy
  launch=(setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice "${launch[@]}")
  run rt_refused rt "$rendezvous" on && passed rt_refused
  says rt_refused 'rt: SCHED_FIFO is not permitted here'
  launch=("${launch[@]:3}")
fi

# below the piggyback layer, which gives MPI_THREAD_SERIALIZED at most
PRELOAD="$library $piggyback" MPILENS_PB_METHOD=pack-before run stacked yield "$rendezvous" off && passed stacked
says stacked 'the MPI library provides MPI_THREAD_SERIALIZED, not MPI_THREAD_MULTIPLE: no progress thread'

# cpu=spare: one rank bound to a core leaves the other cores spare; all ranks bound, none
if [ "$np" = 2 ] && [ "$(nproc)" -ge 2 ]; then
  # Intel MPI's hydra has no -bind-to: its ranks are pinned by I_MPI_PIN_* variables.
  bind=(--bind-to core)
  is_open_mpi "${launch[0]}" || bind=(-bind-to core)
  is_intel_mpi "${launch[0]}" && bind=()
  saved=("${launch[@]}")
  launch=("${launch[0]}" "${bind[@]}")
  I_MPI_PIN_PROCESSOR_LIST=0 np=1 run spare_one yield,cpu=spare "$rendezvous" on && passed spare_one
  grep -q "progress thread started: yield, on cpu [0-9]" "$work/spare_one.err" ||
    fail "spare_one: the thread was not bound to a spare cpu: $(head -3 "$work/spare_one.err")"
  launch=("${launch[0]}" "${bind[@]}")
  is_open_mpi "${launch[0]}" && launch+=(--map-by core:oversubscribe)
  I_MPI_PIN_DOMAIN=core run spare_none yield,cpu=spare "$rendezvous" on && passed spare_none
  says spare_none 'cpu=spare: no spare core'
  launch=("${saved[@]}")
fi

finish "all progress layer checks passed at $np ranks"
