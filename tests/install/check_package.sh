#!/usr/bin/env bash
# The Python side as users install it, away from the checkout:
# - `python -m build` makes a wheel and an sdist;
# - the wheel installs into a fresh virtual environment: `mpilens --version` says VERSION, the
#   help's reference points at the documentation it installed, `man mpilens-report` (and one
#   page per command) is found under the environment, bash completion loads and completes;
# - the sdist installs into another (building the wheel from the sdist alone);
# - pipx installs the wheel: its command runs and its manual pages are linked.
# usage: check_package.sh PYTHON   (a Python with the `build` package: the project's .venv)
set -eu
python=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(cat "$root/VERSION")
work=$(mktemp -d)
# the installs that run in the background (below) are stopped before their directory goes
trap 'kill $(jobs -p) 2>/dev/null || true; wait; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work" # nothing of the checkout on the path

"$python" -m build --outdir "$work/dist" "$root" >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; fail "python -m build"; }
wheel=$(ls "$work"/dist/mpilens-"$version"-*.whl) sdist=$(ls "$work"/dist/mpilens-"$version".tar.gz)

install() { # install VENV WHAT: a fresh environment with WHAT installed
  python3 -m venv "$1" && "$1/bin/pip" install -q "$2" >"$work/$(basename "$1").log" 2>&1 ||
    { tail -20 "$work/$(basename "$1").log" >&2; fail "pip install $(basename "$2") into a fresh environment"; }
}

# The three environments install at once: each is mostly waiting on downloads and unpacking,
# and one after the other they were most of this stage's 2 minutes.
install "$work/venv-sdist" "$sdist" &
sdist_installed=$!
install "$work/pipx" pipx &
pipx_installed=$!

# ---- the wheel
install "$work/venv" "$wheel"
[ "$("$work/venv/bin/mpilens" --version)" = "mpilens $version" ] || fail "the installed mpilens is not $version"
# argparse wraps the epilog where the line is full: read it as one line
help=$("$work/venv/bin/mpilens" --help | tr '\n' ' ')
[[ "$help" == *"Reference: $work/venv/share/doc/mpilens/cli.md."* ]] || fail "--help does not point at the installed docs: $help"
[ -f "$work/venv/share/doc/mpilens/cli.md" ] || fail "the docs --help points at are not installed"
for command in mpilens $("$work/venv/bin/python" -c "
from mpilens.cli import build_parser
from mpilens.packaging_files import man_pages
from pathlib import Path
print(' '.join(n[:-2] for n in man_pages(build_parser(), Path('.'), '') if n != 'mpilens.1'))"); do
  MANWIDTH=80 man -M "$work/venv/share/man" "$command" 2>/dev/null | grep -q "^NAME" || fail "man $command: no page"
done
completion=$work/venv/share/bash-completion/completions/mpilens
# shellcheck disable=SC1090 # the file under test
words=$(bash -c "source '$completion'; COMP_WORDS=(mpilens rep); COMP_CWORD=1; COMP_LINE='mpilens rep'; COMP_POINT=11
  \$(complete -p mpilens | sed 's/.*-F \([^ ]*\) .*/\1/') mpilens rep mpilens; echo \"\${COMPREPLY[*]}\"") ||
  fail "the bash completion does not load"
[ "$words" = "report" ] || fail "bash completion of \"mpilens rep\" gave \"$words\", expected report"
[ -f "$work/venv/share/zsh/site-functions/_mpilens" ] || fail "no zsh completion"

# ---- the sdist alone
wait "$sdist_installed" || exit 1 # install said why
[ "$("$work/venv-sdist/bin/mpilens" --version)" = "mpilens $version" ] || fail "the sdist does not install mpilens $version"
[ -f "$work/venv-sdist/share/man/man1/mpilens-overlap.1" ] || fail "the sdist's install has no manual pages"

# ---- pipx
wait "$pipx_installed" || exit 1
PIPX_HOME=$work/pipx-home PIPX_BIN_DIR=$work/bin PIPX_MAN_DIR=$work/man "$work/pipx/bin/pipx" install "$wheel" \
  >"$work/pipx.log" 2>&1 || { cat "$work/pipx.log" >&2; fail "pipx install"; }
[ "$("$work/bin/mpilens" --version)" = "mpilens $version" ] || fail "pipx's mpilens is not $version"
MANWIDTH=80 man -M "$work/man" mpilens 2>/dev/null | grep -q "^NAME" || fail "pipx did not link the manual pages"
echo passed
