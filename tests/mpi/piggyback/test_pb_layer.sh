#!/usr/bin/env bash
# libmpilens-piggyback under MPI (docs/piggyback.md is the contract):
# - test_pb_calls, which uses every covered call with messages of distinct sizes and contents,
#   passes its own checks without the layer and under every method, with the check driver
#   verifying every piggyback: the count it verified is the number of messages the program
#   received, with no error, at a small pb size, and at 2 ranks at a large one too;
# - so does pb_buffered, whose buffered sends (Bsend, Ibsend, Bsend_init) have exactly the
#   attached buffer the MPI standard requires: the layer's additions must not come out of it;
# - so does pb_conformance, the cases MPICH's test suite found (tests/conformance/run): a status
#   seen by MPI_Request_get_status, datatypes freed while pending, an MPI_Isendrecv left pending
#   beside large messages, a cancelled send to itself, communicators freed and made again;
# - so does pb_pingpong, a ping-pong written in Fortran, through the layer's Fortran entry points
#   (FORTRAN_PROGRAM "-" where this MPI has no Fortran interface);
# - so does pb_large_count through MPI-4's large-count forms, whose counts above INT_MAX the layer
#   refuses with MPI_ERR_COUNT and one line (LARGE_PROGRAM "-" before MPI-4);
# - the example applications give bit-identical results with and without the layer, with
#   specific and with wildcard receives, every message's pb verified;
# - the lamport driver gives the clocks a token ring must end with;
# - bad configurations end at MPI_Init with one clear line and a non-zero status; a program
#   asking for MPI_THREAD_MULTIPLE is told what it gets, in one line, and MPI_Query_thread agrees.
# usage: test_pb_layer.sh LIBRARY CALLS_PROGRAM RING_PROGRAM THREADS_PROGRAM BUFFERED_PROGRAM
#                         CONFORMANCE_PROGRAM SWEEP CG FORTRAN_PROGRAM LARGE_PROGRAM NP LAUNCHER [ARGS...]
set -u
# shellcheck disable=SC2034 # calls, buffered, conformance, sweep and cg are read by name, as ${!program} and ${!app}
library=$1 calls=$2 ring=$3 threads=$4 buffered=$5 conformance=$6 sweep=$7 cg=$8 fortran=$9 large=${10} np=${11}
shift 11
launch=("$@")
. "$(dirname "$0")/../testlib.sh"
vars=(LD_PRELOAD MPILENS_PB_METHOD MPILENS_PB_SIZE MPILENS_PB_DRIVER MPILENS_PB_AUTO_FILE)
# auto's thresholds: none measured, unless a check below writes them
export MPILENS_PB_AUTO_FILE=$work/auto
forward_vars "${launch[0]}" "${vars[@]}"

run() { # run NAME METHOD SIZE DRIVER PROGRAM [ARGS]: the program under the layer (METHOD "none": without)
  local name=$1 method=$2 pb_size=$3 driver=$4 preload=$library
  shift 4
  [ "$method" = none ] && preload=
  LD_PRELOAD=$preload MPILENS_PB_METHOD=$method MPILENS_PB_SIZE=$pb_size MPILENS_PB_DRIVER=$driver \
    timeout 120 "${launch[@]}" "${forward[@]}" -n "$np" "$@" >"$work/$name.out" 2>"$work/$name.err"
  echo $? >"$work/$name.status"
}

check_calls() { # check_calls NAME: the program passed and the driver verified every message
  local name=$1
  [ "$(cat "$work/$name.status")" = 0 ] || { fail "$name: status $(cat "$work/$name.status"): $(tail -5 "$work/$name.err")"; return; }
  grep -q "^passed" "$work/$name.err" || fail "$name: the program's checks failed: $(grep -m3 "check failed" "$work/$name.err")"
  local expected verified
  expected=$(sed -n 's/^expected \([0-9]*\) messages with piggyback$/\1/p' "$work/$name.out")
  [ -n "$expected" ] && [ "$expected" -gt 0 ] || { fail "$name: no message count printed"; return; }
  [ "$2" = none ] && return
  verified=$(sed -n 's/.*check ([a-z-]*, [0-9]*-byte pb): \([0-9]*\) messages verified, 0 errors$/\1/p' "$work/$name.err")
  [ "$verified" = "$expected" ] ||
    fail "$name: the check driver reports \"$(grep -m1 'check (' "$work/$name.err")\" for $expected messages received: $(grep -m3 'check:' "$work/$name.err")"
}

# Every covered call, then buffered sends at exactly the room the standard requires, then the
# cases of MPICH's suite, without the layer and under every method.
for program in calls buffered conformance; do
  run "${program}_none" none 0 none "${!program}"
  check_calls "${program}_none" none
  sizes=(24 4096)
  # its cases are of call sequences, not of pb sizes; a pb's size is each message's own, which
  # more ranks do not change, so the large one is checked at 2 ranks
  [ "$program" = conformance ] || [ "$np" != 2 ] && sizes=(24)
  for method in pack-before pack-after datatype-before datatype-after separate separate-after auto; do
    for pb_size in "${sizes[@]}"; do
      run "${program}_${method}_$pb_size" "$method" "$pb_size" check "${!program}"
      check_calls "${program}_${method}_$pb_size" "$method"
    done
  done
done

if [ "$fortran" != - ]; then
  run fortran_none none 0 none "$fortran"
  check_calls fortran_none none
  for method in pack-before datatype-after separate auto; do
    run "fortran_$method" "$method" 24 check "$fortran"
    check_calls "fortran_$method" "$method"
  done
fi

if [ "$large" != - ]; then
  run large_none none 0 none "$large" delivered
  check_calls large_none none
  for method in pack-after datatype-before separate auto; do
    run "large_$method" "$method" 24 check "$large" refused
    check_calls "large_$method" "$method"
    grep -q "MPI_Isend_c with a count above INT_MAX: the layer passes counts on as int" "$work/large_$method.err" ||
      fail "large_$method: the refusal is not said: $(tail -3 "$work/large_$method.err")"
  done
fi

# The applications: the same checksum, bit for bit, with and without the layer.
# shellcheck disable=SC2034 # read by name, as ${!args_name}
app_args_sweep=(--n 16 --iterations 2 --kblock 4)
# shellcheck disable=SC2034 # read by name, as ${!args_name}
app_args_cg=(--n 12 --iterations 40)
for app in sweep cg; do
  program=${!app}
  # shellcheck disable=SC1087 # the name of the array's elements, for ${!args_name}
  args_name="app_args_$app[@]"
  for receives in specific wildcard; do
    extra=()
    [ "$receives" = wildcard ] && extra=(--wildcard)
    run "${app}_${receives}_none" none 0 none "$program" "${!args_name}" "${extra[@]}"
    reference=$(grep '^checksum' "$work/${app}_${receives}_none.out")
    [ -n "$reference" ] || { fail "$app $receives without the layer: $(tail -3 "$work/${app}_${receives}_none.err")"; continue; }
    for method in pack-after datatype-before separate auto; do
      name="${app}_${receives}_$method"
      run "$name" "$method" 24 check "$program" "${!args_name}" "${extra[@]}"
      [ "$(grep '^checksum' "$work/$name.out")" = "$reference" ] ||
        fail "$name: \"$(grep '^checksum' "$work/$name.out")\" differs from \"$reference\" without the layer: $(tail -2 "$work/$name.err")"
      grep -q "messages verified, 0 errors" "$work/$name.err" || fail "$name: $(grep -m3 'check' "$work/$name.err")"
    done
  done
done

# A token passed around the ring 3 times: rank r's clock is known exactly (ring program's comment).
for method in datatype-before separate; do
  run "ring_$method" "$method" 8 lamport "$ring"
  [ "$(cat "$work/ring_$method.status")" = 0 ] || fail "ring_$method: $(tail -3 "$work/ring_$method.err")"
  expected=$(for ((r = 0; r < np; r++)); do
    if [ "$r" = 0 ]; then echo -n " $((6 * np))"; else echo -n " $((6 * np - 2 * (np - r) + 1))"; fi
  done)
  line=$(grep -m1 "lamport clocks at MPI_Finalize:" "$work/ring_$method.err")
  [ "${line#*MPI_Finalize:}" = "$expected" ] || fail "ring_$method: \"$line\", expected clocks$expected"
done

expect_refusal() { # expect_refusal NAME MESSAGE METHOD SIZE DRIVER
  local name=$1 message=$2
  run "$name" "$3" "$4" "$5" "$calls"
  [ "$(cat "$work/$name.status")" != 0 ] || fail "$name: ran with a bad configuration"
  grep -q "libmpilens-piggyback: .*$message" "$work/$name.err" || fail "$name: no \"$message\": $(head -3 "$work/$name.err")"
  grep -q "^passed" "$work/$name.err" && fail "$name: the program ran on"
}
if [ "$np" = 2 ]; then
  expect_refusal bad_method 'unknown method "fastest" in MPILENS_PB_METHOD' fastest 24 check
  expect_refusal big_size 'invalid value "70000" in MPILENS_PB_SIZE' separate 70000 check
  expect_refusal bad_driver 'unknown driver "clocks" in MPILENS_PB_DRIVER' separate 24 clocks
  expect_refusal small_check 'the check driver needs MPILENS_PB_SIZE of at least 24 bytes' pack-before 4 check
  run threads datatype-before 24 check "$threads"
  [ "$(cat "$work/threads.status")" = 0 ] || fail "threads: $(tail -3 "$work/threads.err")"
  [ "$(grep -c "supports up to MPI_THREAD_SERIALIZED" "$work/threads.err")" = 1 ] ||
    fail "threads: not one line about the thread level: $(grep -c "MPI_THREAD_SERIALIZED" "$work/threads.err")"
  grep -q "^provided SERIALIZED" "$work/threads.out" || fail "threads: $(cat "$work/threads.out")"
  grep -q "MPI_Query_thread says otherwise" "$work/threads.out" && fail "threads: MPI_Query_thread disagrees with provided"
  # auto reads its threshold for this library from its file, and refuses a bad one
  mpi_library=$(sed -n 's/^library //p' "$work/threads.out")
  printf 'Some Other MPI 1.0\t64\n%s\t1024\n' "$mpi_library" >"$MPILENS_PB_AUTO_FILE"
  run auto_file auto 24 check "$calls"
  check_calls auto_file auto
  grep -q "auto: no threshold" "$work/auto_file.err" && fail "auto_file: the threshold for \"$mpi_library\" was not read"
  printf 'Some Other MPI 1.0\t64\n' >"$MPILENS_PB_AUTO_FILE"
  run auto_other auto 24 check "$calls"
  check_calls auto_other auto
  grep -q "auto: no threshold measured for this MPI library in $MPILENS_PB_AUTO_FILE" "$work/auto_other.err" ||
    fail "auto_other: nothing said of the missing threshold"
  printf '%s\t1k\n' "$mpi_library" >"$MPILENS_PB_AUTO_FILE"
  expect_refusal auto_bad "invalid value \"1k\" in $MPILENS_PB_AUTO_FILE" auto 24 check
fi

finish "all piggyback layer checks passed at $np ranks"
