#!/usr/bin/env bash
# Black-box tests of the example applications (docs/examples.md) at NP ranks:
#  - the output is exactly the documented lines;
#  - the checksum is bit-identical with and without --wildcard, from run to run, and with --repeat;
#  - the sweep gives the same bits at 1 rank and at NP ranks, and for any --kblock (every cell is
#    updated from the same operands in the same order);
#  - CG converges: its residual |b - Ax| / |b| falls below 1e-8, after being larger earlier, and its
#    solution at NP ranks equals the one at 1 rank to rounding;
#  - on tiny problems both agree with an independent computation (the sweep's recurrence cell by
#    cell, the Poisson system by Gaussian elimination);
#  - bad input exits with status 2 and one line naming the option, without a crash.
# Sizes are small and uneven (remainders in the decomposition) so that the whole test stays short
# even with more ranks than cores.
# usage: test_examples.sh SWEEP CG NP LAUNCHER [LAUNCHER ARGS...]
set -u
sweep=$1 cg=$2 np=$3
shift 3
launcher=("$@")
. "$(dirname "$0")/../testlib.sh"

# run NAME RANKS PROGRAM ARGS...: runs the program, keeps stdout, stderr and the status
run() {
  local name=$1 ranks=$2; shift 2
  "${launcher[@]}" -n "$ranks" "$@" >"$work/$name.out" 2>"$work/$name.err"
  echo $? >"$work/$name.status"
}
status() { cat "$work/$1.status"; }
value() { awk -v key="$2" '$1 == key { print $2 }' "$work/$1.out"; }

# run_ok NAME RANKS KEYS PROGRAM ARGS...: a run that must succeed and print exactly the lines KEYS
run_ok() {
  local name=$1 ranks=$2 keys=$3; shift 3
  run "$name" "$ranks" "$@"
  if [ "$(status "$name")" != 0 ]; then
    fail "$name: status $(status "$name"): $(head -5 "$work/$name.err")"
    return
  fi
  local printed
  printed=$(awk '{ print $1 }' "$work/$name.out" | tr '\n' ' ')
  [ "$printed" = "$keys " ] || fail "$name: printed lines \"$printed\", expected \"$keys\""
  [[ "$(value "$name" checksum)" =~ ^-?0x[0-9a-f]+(\.[0-9a-f]+)?p[-+][0-9]+$ ]] ||
    fail "$name: checksum \"$(value "$name" checksum)\" is not a %a hex float"
  [[ "$(value "$name" time_s)" =~ ^[0-9]+\.[0-9]+$ ]] || fail "$name: time_s \"$(value "$name" time_s)\""
  # the longest solve is no shorter than the shortest
  awk -v lo="$(value "$name" time_s)" -v hi="$(value "$name" time_max_s)" 'BEGIN { exit !(hi >= lo) }' ||
    fail "$name: time_max_s \"$(value "$name" time_max_s)\" below time_s \"$(value "$name" time_s)\""
}

# same NAME... : every run printed the checksum of the first, bit for bit
same() {
  local first=$1 expected
  expected=$(value "$first" checksum)
  for other in "${@:2}"; do
    [ "$(value "$other" checksum)" = "$expected" ] ||
      fail "checksum of $other ($(value "$other" checksum)) differs from $first ($expected)"
  done
}

# expect_usage_error NAME PROGRAM MESSAGE ARGS...: status 2, one error line holding MESSAGE
expect_usage_error() {
  local name=$1 program=$2 message=$3; shift 3
  local base
  base=$(basename "$program")
  run "$name" "$np" "$program" "$@"
  [ "$(status "$name")" = 2 ] || fail "$name: status $(status "$name"), expected 2"
  [ "$(grep -c "^$base:" "$work/$name.err")" = 1 ] || fail "$name: not one error line: $(head -5 "$work/$name.err")"
  [[ "$(grep "^$base:" "$work/$name.err")" == *"$message"* ]] || fail "$name: error lacks \"$message\""
  grep -qi "segmentation\|core dumped\|MPI_Abort\|signal [0-9]\|signal:" "$work/$name.err" && fail "$name: crashed"
  [ -s "$work/$name.out" ] && fail "$name: printed results"
}

# ---- the sweep
geometry=(--nx 21 --ny 14 --nz 12 --iterations 3)
run_ok sweep "$np" "checksum time_s time_max_s" "$sweep" "${geometry[@]}" --kblock 5
run_ok sweep_wildcard "$np" "checksum time_s time_max_s" "$sweep" "${geometry[@]}" --kblock 5 --wildcard
run_ok sweep_again "$np" "checksum time_s time_max_s" "$sweep" "${geometry[@]}" --kblock 5 --repeat 2
run_ok sweep_serial 1 "checksum time_s time_max_s" "$sweep" "${geometry[@]}" --kblock 5
run_ok sweep_one_block "$np" "checksum time_s time_max_s" "$sweep" "${geometry[@]}" --kblock 12 --wildcard
same sweep sweep_wildcard sweep_again sweep_serial sweep_one_block

# ---- conjugate gradients
problem=(--nx 10 --ny 13 --nz 11 --iterations 300)
run_ok cg "$np" "checksum time_s time_max_s residual" "$cg" "${problem[@]}" --tolerance 1e-10
run_ok cg_wildcard "$np" "checksum time_s time_max_s residual" "$cg" "${problem[@]}" --tolerance 1e-10 --wildcard
run_ok cg_again "$np" "checksum time_s time_max_s residual" "$cg" "${problem[@]}" --tolerance 1e-10 --repeat 2 --wildcard
same cg cg_wildcard cg_again
[ "$(value cg residual)" = "$(value cg_wildcard residual)" ] || fail "cg residual differs with --wildcard"
run_ok cg_early "$np" "checksum time_s time_max_s residual" "$cg" "${problem[@]}" --iterations 5
run_ok cg_serial 1 "checksum time_s time_max_s residual" "$cg" "${problem[@]}" --tolerance 1e-10
python3 - "$(value cg residual)" "$(value cg_early residual)" "$(value cg checksum)" "$(value cg_serial checksum)" \
  "$(value cg_serial residual)" <<'PY' || failures=$((failures + 1))
import sys
try:
    converged, early, checksum, serial, serial_residual = sys.argv[1:]
    converged, early, serial_residual = float(converged), float(early), float(serial_residual)
    checksum, serial = float.fromhex(checksum), float.fromhex(serial)
except ValueError as e:
    print(f"FAIL: cg printed an unreadable value: {e}", file=sys.stderr)
    sys.exit(1)
problems = []
if not converged < 1e-8:
    problems.append(f"cg did not converge: residual {converged}")
if not serial_residual < 1e-8:
    problems.append(f"cg did not converge at 1 rank: residual {serial_residual}")
if not converged < early < 1:
    problems.append(f"residual after 5 iterations {early} is not between 1 and the final {converged}")
if not abs(checksum - serial) <= 1e-9 * abs(serial):
    problems.append(f"solution sum {checksum!r} differs from the one at 1 rank {serial!r}")
for p in problems:
    print("FAIL:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

# ---- known answers: a tiny problem of each, computed independently here
# (the sweep's grid is just large enough for both materials and a source)
run_ok sweep_tiny "$np" "checksum time_s time_max_s" "$sweep" --nx 10 --ny 9 --nz 9 --iterations 2 --kblock 4
run_ok cg_tiny "$np" "checksum time_s time_max_s residual" "$cg" --nx 4 --ny 3 --nz 5 --iterations 200 --tolerance 1e-14
python3 - "$(value sweep_tiny checksum)" "$(value cg_tiny checksum)" <<'PY' || failures=$((failures + 1))
import sys

def sweep(nx, ny, nz, iterations):
    """The recurrence of docs/examples.md, cell by cell, on one process."""
    levels = (0.2666355, 0.6815076, 0.9261808)
    angles = ((0, 0, 2), (0, 2, 0), (2, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 0))
    octants = ((1, 1, 1), (-1, 1, 1), (-1, -1, 1), (1, -1, 1), (1, 1, -1), (-1, 1, -1), (-1, -1, -1), (1, -1, -1))
    cells = [(i, j, k) for k in range(nz) for j in range(ny) for i in range(nx)]
    qext = {c: 1.0 if c[0] < nx // 2 and c[1] < ny // 3 and c[2] < nz // 4 else 0.0 for c in cells}
    sigt = {c: 1.5 if (c[0] // 8 + c[1] // 8 + c[2] // 8) % 2 else 1.0 for c in cells}
    phi = {c: 0.0 for c in cells}
    for _ in range(iterations):
        src = {c: qext[c] + 0.5 * phi[c] for c in cells}
        phi = {c: 0.0 for c in cells}
        for dx, dy, dz in octants:
            for a in angles:
                mu, eta, xi = (levels[l] for l in a)
                psi = {}
                order = lambda n, d: range(n) if d > 0 else range(n - 1, -1, -1)
                for k in order(nz, dz):
                    for j in order(ny, dy):
                        for i in order(nx, dx):
                            inx, iny, inz = (psi.get(u, 0.0) for u in ((i - dx, j, k), (i, j - dy, k), (i, j, k - dz)))
                            c = (i, j, k)
                            p = (src[c] + mu * inx + eta * iny + xi * inz) / (sigt[c] + (mu + eta + xi))
                            phi[c] += (1.0 / 48) * p
                            psi[c] = p
    return sum(sum(phi[(i, j, k)] for k in range(nz)) for j in range(ny) for i in range(nx))

def poisson(nx, ny, nz):
    """Sum of the solution of the 7-point system, by Gaussian elimination."""
    index = {(i, j, k): n for n, (i, j, k) in enumerate((i, j, k) for k in range(nz) for j in range(ny) for i in range(nx))}
    size = len(index)
    a = [[0.0] * (size + 1) for _ in range(size)]
    for (i, j, k), n in index.items():
        a[n][n] = 6.0
        for u in ((i - 1, j, k), (i + 1, j, k), (i, j - 1, k), (i, j + 1, k), (i, j, k - 1), (i, j, k + 1)):
            if u in index:
                a[n][index[u]] = -1.0
        a[n][size] = 1.0 + (i + 2 * j + 3 * k) % 7
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, size):
            f = a[r][col] / a[col][col]
            if f:
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    x = [0.0] * size
    for r in range(size - 1, -1, -1):
        x[r] = (a[r][size] - sum(a[r][c] * x[c] for c in range(r + 1, size))) / a[r][r]
    return sum(x)

ok = True
for name, printed, expected in (("sweep", sys.argv[1], sweep(10, 9, 9, 2)), ("cg", sys.argv[2], poisson(4, 3, 5))):
    try:
        got = float.fromhex(printed)
    except ValueError:
        got = float("nan")
    if not (expected > 0 and abs(got - expected) <= 1e-12 * expected):
        print(f"FAIL: {name} checksum {printed} = {got!r}, expected {expected!r}", file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY

# ---- bad input (each failing launch is slow under Open MPI, so one case per check in the code)
for program in "$sweep" "$cg"; do
  name=$(basename "$program")
  expect_usage_error "$name-negative" "$program" 'invalid value "-3" for --n' --n -3
  expect_usage_error "$name-unknown" "$program" 'unknown option --frobnicate' --frobnicate
  run "$name-help" "$np" "$program" --help
  [ "$(status "$name-help")" = 0 ] || fail "$name --help: status $(status "$name-help")"
  [ "$(grep -c '^usage:' "$work/$name-help.out")" = 1 ] || fail "$name --help: usage not printed once"
done
expect_usage_error cg-tolerance "$cg" 'invalid value "-1e-3" for --tolerance' --tolerance -1e-3
# too few cells for the process grid: with 2 or more ranks the sweep splits x in two at least
expect_usage_error sweep-grid "$sweep" '--nx 1 --ny 64 is too small' --nx 1

finish "passed"
