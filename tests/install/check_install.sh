#!/usr/bin/env bash
# Installs a build tree into a temporary prefix and uses it as a user would: runs the programs,
# compiles against the headers through pkg-config, and finds the package from CMake.
# usage: check_install.sh BUILD_DIR C_COMPILER MPI_C_COMPILER
set -eu
build=$1 cc=$2 mpicc=$3
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
[ -x "$prefix/bin/mpilens-sanity" ] || fail "mpilens-sanity not installed"
"$prefix/bin/mpilens-sanity" --version 2>/dev/null | grep -q "^mpilens-sanity [0-9]" || fail "installed program does not run"
[ -f "$prefix/include/mpilens/version.h" ] || fail "public header not installed"
pc=$(find "$prefix" -name mpilens.pc)
[ -n "$pc" ] || fail "mpilens.pc not installed"
find "$prefix" -path "*src/core*" -o -name "*.c" | grep -q . && fail "internal sources were installed"

# pkg-config gives what a C program needs
cat >"$prefix/use.c" <<'C'
#include <mpilens/version.h>
#include <stdio.h>
int main(void) { printf("%s %d\n", MPILENS_VERSION, MPILENS_VERSION_NUMBER > 0); return 0; }
C
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags mpilens)
# shellcheck disable=SC2086 # $cc and $cflags: words, one argument each
$cc $cflags "$prefix/use.c" -o "$prefix/use" || fail "cannot compile against the installed header"
version=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion mpilens)
[ "$("$prefix/use")" = "$version 1" ] || fail "header and pkg-config disagree on the version"

# each library has its pkg-config file, naming it and the directory of its tool API header
for lib in monitor piggyback progress; do
  flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs "mpilens-$lib") || fail "no mpilens-$lib.pc"
  [[ "$flags" == *"-lmpilens-$lib"* ]] || fail "mpilens-$lib.pc does not link the library: $flags"
  ls "$prefix"/lib*/libmpilens-"$lib".so >/dev/null 2>&1 || ls "$prefix"/lib/*/libmpilens-"$lib".so >/dev/null 2>&1 ||
    fail "libmpilens-$lib.so not installed"
done
cat >"$prefix/use_api.c" <<'C'
#include <mpilens/piggyback.h>
#include <mpilens/progress.h>
int main(void) { return mpilens_progress_status_string(MPILENS_PROGRESS_OK) == 0; }
C
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags mpilens-progress)
# shellcheck disable=SC2086 # as above
$mpicc $cflags -c "$prefix/use_api.c" -o "$prefix/use_api.o" || fail "cannot compile against the tool API headers"

# a CMake project finds the package
mkdir -p "$prefix/consumer"
cat >"$prefix/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer LANGUAGES NONE)
find_package(mpilens REQUIRED)
message(STATUS "found mpilens ${mpilens_VERSION} headers ${mpilens_INCLUDE_DIR} programs ${mpilens_BIN_DIR}")
if(NOT EXISTS "${mpilens_BIN_DIR}/mpilens-sanity")
  message(FATAL_ERROR "mpilens_BIN_DIR has no programs")
endif()
CM
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >"$prefix/cm.log" 2>&1 ||
  { cat "$prefix/cm.log" >&2; fail "find_package(mpilens) failed"; }
grep -q "found mpilens $version" "$prefix/cm.log" || fail "CMake package reports another version"
echo passed
