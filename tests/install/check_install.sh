#!/usr/bin/env bash
# Installs a build tree into a temporary prefix and uses it as a site would, with no
# LD_LIBRARY_PATH anywhere:
# - every installed program starts and says the project's version (the install run path finds
#   the project's libraries and the MPI library);
# - mpilens-map maps a matrix, and the reordering example runs at 2 ranks from the prefix;
# - man shows each program's manual page from the prefix;
# - every installed header compiles alone, as C and as C++;
# - a consumer project (tests/install/consumer) links the monitoring API and runs at 2 ranks,
#   built with CMake (find_package(mpilens 0.2 COMPONENTS monitor), mpilens::monitor) and with a
#   Makefile through pkg-config, in C and, where this build has Fortran, in Fortran;
# - find_package refuses a component that does not exist and a version it is not.
# usage: check_install.sh BUILD_DIR MPI_C_COMPILER MPI_FORTRAN_COMPILER|- LAUNCHER [PREFLAGS...]
set -eu
build=$1 mpicc=$2 mpifc=$3
shift 3
launch=("$@")
here=$(cd "$(dirname "$0")" && pwd)
version=$(cat "$here/../../VERSION")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH
fortran=yes
{ [ "$mpifc" = - ] || [ ! -f "$build/fortran/mpi_monitoring.mod" ]; } && fortran=

cmake --install "$build" --prefix "$prefix" >/dev/null
find "$prefix" -path "*src/core*" -o -name "*.c" | grep -q . && fail "internal sources were installed"

# ---- programs: each starts from the prefix and agrees on the version
programs=("$prefix"/bin/mpilens-*)
[ "${#programs[@]}" -ge 10 ] || fail "only ${#programs[@]} programs installed: ${programs[*]}"
for program in "${programs[@]}"; do
  name=$(basename "$program")
  out=$("$program" --version 2>&1) || fail "$name --version: $out"
  [[ "$out" == "$name $version"* ]] || fail "$name --version says \"$out\", expected $name $version"
  # shellcheck disable=SC2016 # $ORIGIN is the run path's own word, not the shell's
  readelf -d "$program" | grep -q 'R.*PATH.*\$ORIGIN/\.\./lib' || fail "$name has no install run path"
done
map=$("$prefix/bin/mpilens-map" --generate stencil2d:4 --topology "node:2 core:2" --algo treematch) ||
  fail "mpilens-map did not map from the prefix"
[[ "$map" == *'"treematch"'* ]] || fail "mpilens-map wrote no treematch mapping: ${map:0:200}"
"${launch[0]}" -n 2 "${launch[@]:1}" "$prefix/bin/mpilens-example-reorder-allgather" --iterations 1 --sizes 1K --repeat 1 \
  --output "$prefix/reorder.jsonl" \
  >"$prefix/reorder.log" 2>&1 || { cat "$prefix/reorder.log" >&2; fail "the reordering example did not run from the prefix"; }
grep -q '"type":"point"' "$prefix/reorder.jsonl" || fail "the reordering example wrote no point"

# ---- manual pages: one per program with a reference page, which man finds under the prefix
for page in "$here"/../../docs/programs/*.md; do
  name=$(basename "$page" .md)
  [ -f "$prefix/share/man/man1/$name.1" ] || fail "no manual page for $name"
  MANPATH="$prefix/share/man" MANWIDTH=80 man "$name" 2>/dev/null | grep -q "^NAME" ||
    fail "man $name does not show the page from the prefix"
done

# ---- headers: each one alone, as C and as C++
for header in $(cd "$prefix/include" && find . -name "*.h" | sed 's|^\./||'); do
  for language in c c++; do
    echo "#include <$header>" | "$mpicc" -x "$language" -fsyntax-only -Wall -Werror -I"$prefix/include" - ||
      fail "$header does not compile alone as $language"
  done
done

# ---- a consumer project: CMake package and targets
cmake_args=(-DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$mpicc")
[ -n "$fortran" ] && cmake_args+=(-DCONSUMER_FORTRAN=ON -DMPI_Fortran_COMPILER="$mpifc" -DCMAKE_Fortran_COMPILER="$mpifc")
cmake -S "$here/consumer" -B "$prefix/cmake-consumer" "${cmake_args[@]}" >"$prefix/cm.log" 2>&1 &&
  cmake --build "$prefix/cmake-consumer" >>"$prefix/cm.log" 2>&1 ||
  { cat "$prefix/cm.log" >&2; fail "the CMake consumer does not build against mpilens::monitor"; }
# ---- ... and pkg-config
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name mpilens-monitor.pc)")
mkdir "$prefix/make-consumer"
make -s -C "$prefix/make-consumer" -f "$here/consumer/Makefile" VPATH="$here/consumer" MPICC="$mpicc" MPIFC="$mpifc" \
  c ${fortran:+fortran} >"$prefix/make.log" 2>&1 || { cat "$prefix/make.log" >&2; fail "the pkg-config consumer does not build"; }
for dir in cmake-consumer make-consumer; do
  for kind in c ${fortran:+f}; do
    out=$("${launch[0]}" -n 2 "${launch[@]:1}" "$prefix/$dir/monitor_ring_$kind" 2>&1) ||
      fail "$dir/monitor_ring_$kind: $out"
    [[ "$out" == *"passed"* ]] || fail "$dir/monitor_ring_$kind: $out"
  done
done

# ---- find_package refuses what is not there
for request in "0.2 REQUIRED COMPONENTS nosuch" "99.0 REQUIRED"; do
  mkdir -p "$prefix/refused"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(refused LANGUAGES C)\nfind_package(mpilens %s)\n' \
    "$request" >"$prefix/refused/CMakeLists.txt"
  cmake -S "$prefix/refused" -B "$prefix/refused/build" "${cmake_args[@]:0:2}" >/dev/null 2>&1 &&
    fail "find_package(mpilens $request) succeeded"
  rm -rf "$prefix/refused"
done
echo passed
