# shellcheck shell=bash # sourced by the bash scripts, so without a #! line
# Sourced by the MPI test scripts: a work directory removed at exit, failures counted and
# reported, and what the launcher needs to pass variables on.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# is_open_mpi LAUNCHER: Open MPI forwards only the variables it is told to (-x); hydra forwards
# all and has no -x.
is_open_mpi() { "$1" --version 2>&1 | grep -qi "open mpi\|openrte"; }

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
