#!/usr/bin/env bash
# Installs the Debian packages mpilens needs, only those missing (make deps calls this; make
# deps-cluster calls it with "cluster" for what the test cluster needs besides: Slurm, munge, the
# UCX headers its MPICH workaround is built with, iproute2 for namespaces and tc, gdb for the
# stacks of a rank that crashed in a cluster test; make docs calls it with "docs" for doxygen).
# On other systems, or without root, it says what is missing and how to get it.
set -eu
packages=(openmpi-bin libopenmpi-dev mpich libmpich-dev libhwloc-dev libscotch-dev pkg-config cmake make gcc g++ gfortran man-db
          shellcheck)
case "${1:-}" in
  "") ;;
  cluster) packages+=(slurm-wlm munge libucx-dev iproute2 gdb) ;;
  docs) packages+=(doxygen) ;;
  *) echo "install-deps: unknown group \"$1\": expected cluster or docs (or none)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3 -m venv needs ensurepip; Debian's own python3 ships it separately.
if ! python3 -c 'import ensurepip' 2>/dev/null; then
  missing+=(python3-venv)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing ${missing[*]}, and this is not a Debian system: install MPI, hwloc and cmake" \
       "with your package manager or modules (see README, \"On a cluster\")" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
  exit 2
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
