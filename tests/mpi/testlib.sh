# shellcheck shell=bash # sourced by the bash scripts, so without a #! line
# Sourced by the MPI test scripts: a work directory removed at exit, failures counted and
# reported, and what the launcher needs to pass variables on.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# cli_args PROGRAM NP X LAUNCHER [LAUNCHER ARGS...]: the arguments of the CLI test scripts, which
# take X ($3) themselves: sets program, np and launch.
# shellcheck disable=SC2034 # np is the sourcing script's
cli_args() {
  program=$1 np=$2
  shift 3
  launch=("$@")
}

# record NAME COMMAND...: runs COMMAND, its stdout, stderr and exit status kept in $work/NAME.out,
# NAME.err and NAME.status; status NAME prints that status.
record() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>"$work/$name.err"
  echo $? >"$work/$name.status"
}
status() { cat "$work/$1.status"; }

# run NAME RANKS ARGS...: the script's $program at RANKS ranks under its ${launch[@]}, recorded as
# NAME (a script whose runs need more defines its own run).
# shellcheck disable=SC2154 # program and launch are the sourcing script's
run() {
  local name=$1 ranks=$2
  shift 2
  record "$name" "${launch[@]}" -n "$ranks" "$program" "$@"
}

# run_env NAME RANKS ARGS...: as run, stopped after 300 s, in an environment without the
# variables the script lists in its array `cleared`, then with the VAR=VALUE words of the caller's
# array `settings`, which the launcher passes on.
# shellcheck disable=SC2154 # cleared and settings are the sourcing script's
run_env() {
  local name=$1 ranks=$2 env=(env) s vars=()
  shift 2
  for s in "${cleared[@]}"; do env+=(-u "$s"); done
  for s in "${settings[@]}"; do vars+=("${s%%=*}"); done
  forward_vars "${launch[0]}" "${vars[@]}"
  record "$name" "${env[@]}" "${settings[@]}" timeout 300 "${launch[@]}" "${forward[@]}" -n "$ranks" "$program" "$@"
}

# expect_refused NAME PROGRAM MESSAGE: the run NAME ended with exit status 2, printed exactly one
# line naming PROGRAM ("PROGRAM:"), holding MESSAGE, and wrote no $work/NAME.jsonl.
expect_refused() {
  local name=$1 program=$2 message=$3 first
  [ "$(status "$name")" = 2 ] || fail "$name: status $(status "$name"), expected 2"
  first=$(grep -m1 "$program:" "$work/$name.err")
  [[ "$first" == *"$message"* ]] || fail "$name: stderr lacks \"$message\": $(head -3 "$work/$name.err")"
  [ "$(grep -c "$program:" "$work/$name.err")" = 1 ] || fail "$name: the error is printed more than once"
  [ ! -e "$work/$name.jsonl" ] || fail "$name: a results file was written"
}

# expect_usage_error NAME RANKS MESSAGE ARGS...: the script's run NAME RANKS [$plain] ARGS...
# --output $work/NAME.jsonl is refused (expect_refused), the program naming itself $tool. The
# script sets tool, and plain where its run takes a setting first (the one without any layer).
# shellcheck disable=SC2154 # tool is the sourcing script's
expect_usage_error() {
  local name=$1 ranks=$2 message=$3
  shift 3
  run "$name" "$ranks" ${plain:+"$plain"} "$@" --output "$work/$name.jsonl"
  expect_refused "$name" "$tool" "$message"
}

# is_open_mpi LAUNCHER: Open MPI forwards only the variables it is told to (-x); hydra forwards
# all and has no -x.
is_open_mpi() { "$1" --version 2>&1 | grep -qi "open mpi\|openrte"; }

# is_intel_mpi LAUNCHER: Intel MPI's hydra, which places ranks by I_MPI_PIN_* variables only.
is_intel_mpi() { "$1" --version 2>&1 | grep -q "Intel(R) MPI"; }

# forward_vars LAUNCHER VAR...: sets the array `forward` to the launcher options that pass VAR... on.
forward_vars() {
  local launcher=$1 v
  shift
  forward=()
  if is_open_mpi "$launcher"; then
    for v in "$@"; do forward+=(-x "$v"); done
  fi
}

# finish MESSAGE: exit 1 if any check failed, else print MESSAGE.
finish() {
  [ "$failures" = 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
  echo "$1"
}
