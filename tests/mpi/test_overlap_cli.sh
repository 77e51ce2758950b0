#!/usr/bin/env bash
# Black-box tests of mpilens-overlap under MPI (docs/overlap.md is the contract):
# - bad input ends with one clear line and exit status 2;
# - a sweep of every benchmark yields every planned point, each holding what the contract lists,
#   with ratios that follow from their stored ingredients (eq. 1);
# - without MPI_THREAD_FUNNELED, nload is skipped with a note; threads, which needs MULTIPLE, is
#   skipped with a note under the default --bench all, and asks for MULTIPLE when named: each
#   thread's message reaches its own thread (the program aborts otherwise);
# - the blocking control, which cannot overlap, gives a ratio near 1 where the ratio is
#   well-conditioned (both times >= 5 us, the longer at most 4x the shorter); under a library
#   whose lone transfers do not take the ping-pong reference's time (Intel MPI, MPICH 5), mpilens
#   must instead refuse every point the control shows off;
# - with libmpilens-progress preloaded, the run records the thread as its progress setting, and
#   --resume refuses to complete that file without it.
# usage: test_overlap_cli.sh PROGRAM NP PROGRESS_LIBRARY LAUNCHER [LAUNCHER ARGS...]
set -u
library=$3
. "$(dirname "$0")/testlib.sh"
cli_args "$@"

tool=mpilens-overlap

expect_usage_error min_above_max "$np" 'invalid value "1M:1K" for --sizes' --sizes 1M:1K
expect_usage_error compute_above "$np" 'invalid value "2ms:1us" for --compute' --compute 2ms:1us
expect_usage_error bad_bench "$np" 'invalid value "sender,teleport" for --bench' --bench sender,teleport
expect_usage_error bad_density "$np" 'invalid value "0" for --density' --density 0
expect_usage_error zero_compute "$np" 'computation times must be at least 1ns' --compute 0:1ms
expect_usage_error endless_compute "$np" 'at most 1s per computation' --compute 1us:100000s
expect_usage_error too_big "$np" 'lower the maximum of --sizes' --sizes 1:512G --bench sender
expect_usage_error one_rank 1 'needs at least 2 ranks' --preset quick
expect_usage_error omp_alone "$np" '--omp-threads needs --kernel openmp' --omp-threads 2

# A sweep of every benchmark on a tiny grid.
tiny=(--sizes 1:4K --compute 10us:40us --density 1 --reps 3 --threads 1)
run sweep "$np" "${tiny[@]}" --output "$work/sweep.jsonl"
[ "$(cat "$work/sweep.status")" = 0 ] || fail "sweep failed: $(tail -5 "$work/sweep.err")"
python3 - "$work/sweep.jsonl" "$np" <<'PY' || failures=$((failures + 1))
import json, math, sys
path, ranks = sys.argv[1], int(sys.argv[2])
records = [json.loads(line) for line in open(path)]
meta, points = records[0], [r for r in records if r["type"] == "point"]
notes = [r["text"] for r in records if r["type"] == "note"]
errors = []
def check(cond, what):
    if not cond:
        errors.append(what)
check(len(points) == meta["points_total"], f"{len(points)} points, {meta['points_total']} planned")
benches = {p["bench"] for p in points}
expected = {"sender", "receiver", "bidir", "noncontig", "cpu", "nload", "control", "late", "ibcast",
            "iallreduce", "ialltoall", "multi-same", "ref-pingpong", "ref-noncontig", "ref-send",
            "ref-ibcast", "ref-iallreduce", "ref-ialltoall", "ref-multi-same"} \
           | ({"multi", "ref-multi"} if ranks >= 3 else set())
check(benches == expected, f"benches {sorted(benches ^ expected)} missing or unexpected")
check(any("noncontig" in n and "below one 32-byte block" in n for n in notes), "no noncontig skip note")
if ranks < 3:
    check(any("multi needs at least 3 ranks" in n for n in notes), "no multi skip note")
check(meta["options"]["thread-level"] == "funneled", "--bench all asked for more than funneled")
check(any(n.startswith("threads needs MPI_THREAD_MULTIPLE; asked for funneled") for n in notes),
      "no threads skip note")
map_stats = {"t_measured_ns", "t_comm_ns", "t_comp_ns", "lat0_ns", "ratio", "sample", "comp", "ref"}
# T_comm of a point-to-point map point is the median of the reference measured right before its
# size's points (stats.ref), one way (half) for the ping-pong references
halved = {"sender", "receiver", "bidir", "noncontig", "control", "late"}
def from_own_reference(s, bench):
    scale = 0.5 if bench in halved else 1.0
    return abs(s["t_comm_ns"] - scale * s["ref"]["median"]) <= 1e-6 * max(1.0, s["t_comm_ns"])
for p in points:
    b, s, params = p["bench"], p["stats"], p["params"]
    check(p["family"] == "overlap", f"{p['key']}: family")
    if b.startswith("ref-"):
        continue
    if b == "nload":
        check(s["ratio"] is not None and abs(s["ratio"] - (s["t_measured_ns"] - s["t_comm_ns"]) / s["t_comm_ns"]) < 1e-6,
              f"{p['key']}: nload ratio")
        continue
    if b in ("ibcast", "iallreduce", "ialltoall"):
        check(params["ranks"] == ranks and all(len(s["per_rank"][k]) == ranks for k in s["per_rank"]),
              f"{p['key']}: per-rank values")
        check(s["ratio"] == max(r for r in s["per_rank"]["ratio"] if r is not None), f"{p['key']}: worst rank")
    else:
        check(map_stats <= set(s), f"{p['key']}: missing {sorted(map_stats - set(s))}")
        check(s["sample"]["n"] == 3 and s["comp"]["n"] == 3, f"{p['key']}: 3 repetitions")
        check(s["ref"]["n"] >= 3 and from_own_reference(s, b), f"{p['key']}: T_comm is not its column's reference")
    lo, hi = sorted((s["t_comm_ns"], s["t_comp_ns"]))
    if lo <= 0:  # a reference at or below 0 (lat0 above it, on a loaded machine): no ratio
        check(s["ratio"] is None, f"{p['key']}: a ratio {s['ratio']} over a part of {lo} ns")
    else:
        check(abs(s["ratio"] - (s["t_measured_ns"] - hi) / lo) < 1e-6, f"{p['key']}: ratio is not eq. 1")
    if b == "noncontig":
        check(params["size_bytes"] % 32 == 0, f"{p['key']}: not whole blocks")
    if b == "multi-same":
        # 4 requests to rank 1, against the reference of the same 4 messages without computation
        reference = [r for r in points if r["bench"] == "ref-multi-same"
                     and r["params"]["size_bytes"] == params["size_bytes"]]
        check(params.get("requests") == 4 and len(reference) == 1
              and reference[0]["params"].get("requests") == 4, f"{p['key']}: its reference")
for e in errors[:20]:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# threads, named: the program asks for MPI_THREAD_MULTIPLE itself; every point records its
# threads, T_comm is the median of its column's reference, and the ratio is eq. 1. 3 threads at 4 ranks.
team=$(( np >= 4 ? 3 : 2 ))
run threads "$np" --bench threads --comm-threads "$team" --sizes 1K:16K --compute 10us:20us --density 1 \
  --reps 3 --output "$work/threads.jsonl"
[ "$(cat "$work/threads.status")" = 0 ] || fail "threads failed: $(tail -5 "$work/threads.err")"
python3 - "$work/threads.jsonl" "$team" <<'PY' || failures=$((failures + 1))
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
team = int(sys.argv[2])
meta, points = records[0], [r for r in records if r["type"] == "point"]
errors = []
def check(cond, what):
    if not cond:
        errors.append(what)
check(meta["options"]["thread-level"] == "multiple", f"asked for {meta['options']['thread-level']}")
check(len(points) == meta["points_total"], f"{len(points)} points, {meta['points_total']} planned")
references = {p["params"]["size_bytes"]: p for p in points if p["bench"] == "ref-threads"}
maps = [p for p in points if p["bench"] == "threads"]
check(len(references) == 5 and len(maps) == 10, f"{len(references)} references, {len(maps)} map points")
for p in maps:
    s, params = p["stats"], p["params"]
    reference = references.get(params["size_bytes"])
    check(params.get("comm_threads") == team and reference is not None
          and reference["params"].get("comm_threads") == team
          and abs(s["t_comm_ns"] - s["ref"]["median"]) <= 1e-6 * max(1.0, s["t_comm_ns"]),
          f"{p['key']}: its reference")
    # T_comp is the span of the threads' computations: at least the computation asked for
    check(s["t_comp_ns"] >= params["compute_ns"], f"{p['key']}: T_comp {s['t_comp_ns']} below the computation")
    lo, hi = sorted((s["t_comm_ns"], s["t_comp_ns"]))
    if lo > 0:
        check(abs(s["ratio"] - (s["t_measured_ns"] - hi) / lo) < 1e-6, f"{p['key']}: ratio is not eq. 1")
for e in errors[:20]:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# --decide on: every map point (p2p and collective) stops between 6 and 4 x --reps repetitions,
# before the maximum only when decided, undecidable or out of savings; a reference (and a point's
# column reference) between --reps and 8 x --reps, before the maximum only at its precision (5%)
# or budget; the sizes of a map are measured coarse to fine.
run decide "$np" --bench sender,ibcast --sizes 1K:4K --compute 10us:20us --density 1 --reps 3 --decide on \
    --output "$work/decide.jsonl"
[ "$(cat "$work/decide.status")" = 0 ] || fail "decide failed: $(tail -5 "$work/decide.err")"
python3 - "$work/decide.jsonl" <<'PY' || failures=$((failures + 1))
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
errors = []
for p in (r for r in records if r["type"] == "point"):
    sample = p["stats"]["sample"]
    n, stop = sample["n"], sample["stop"]
    if p["bench"].startswith("ref-"):
        early = ("precision", "time_budget")
        ok = 3 <= n <= 24 and stop in (early if n < 24 else early + ("max_reps",))
        ok = ok and sample["precision"] == 0.05
    else:
        early = ("decided", "undecidable", "time_budget")
        ok = 6 <= n <= 12 and stop in (early if n < 12 else early + ("max_reps",))
        ref = p["stats"].get("ref")  # the column's reference: a reference's rule
        if p["bench"] == "sender":
            ok = ok and ref is not None and 3 <= ref["n"] <= 24 and ref["precision"] == 0.05
    if not ok:
        errors.append(f"{p['key']}: {n} repetitions, stopped: {stop}")
# Sweep order, coarse to fine: both ends of the size range, then the middle, at each
# computation time (docs/overlap.md, "Sweep order").
for bench in ("sender", "ibcast"):
    sizes = [p["params"]["size_bytes"] for p in records if p["type"] == "point"
             and p["bench"] == bench and p["params"].get("compute_ns") == 10000]
    if sizes != [1024, 4096, 2048]:
        errors.append(f"{bench}: sizes measured in the order {sizes}, not 1 KiB, 4 KiB, 2 KiB")
for e in errors[:20]:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# --threads defaults to the node's PUs, decided after parsing: the meta records that number (a
# dangling pointer once recorded "" here), and --resume with it given explicitly is the same run.
run pus "$np" --bench sender --sizes 1:1 --compute 10us:10us --density 1 --reps 3 --output "$work/pus.jsonl"
threads=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["options"]["threads"])' \
  "$work/pus.jsonl" 2>/dev/null)
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || fail "pus: the meta records threads \"$threads\", expected the node's PUs"
run pus_resume "$np" --bench sender --sizes 1:1 --compute 10us:10us --density 1 --reps 3 --threads "$threads" \
  --resume --output "$work/pus.jsonl"
[ "$(status pus_resume)" = 0 ] || fail "pus_resume: status $(status pus_resume): $(head -3 "$work/pus_resume.err")"

# Without MPI_THREAD_FUNNELED, nload is skipped with a note and the rest runs.
run single "$np" --bench nload,sender --sizes 1:64 --compute 10us:20us --density 1 --reps 3 --thread-level single \
  --output "$work/single.jsonl"
[ "$(cat "$work/single.status")" = 0 ] || fail "thread-level single failed"
grep -q '"bench":"nload"' "$work/single.jsonl" && fail "nload ran without MPI_THREAD_FUNNELED"
grep -q 'nload needs MPI_THREAD_FUNNELED; asked for single' "$work/single.jsonl" || fail "no nload skip note"
grep -q '"bench":"sender"' "$work/single.jsonl" || fail "the other benchmarks did not run"

# The OpenMP kernel (seed 000's multi-threaded computation): the options recorded, and every
# computation at least as long as asked (each thread loops until one deadline).
run openmp "$np" --bench sender,ibcast --sizes 1K:2K --compute 50us:100us --density 1 --reps 3 \
    --kernel openmp --omp-threads 2 --output "$work/openmp.jsonl"
[ "$(cat "$work/openmp.status")" = 0 ] || fail "openmp failed: $(tail -5 "$work/openmp.err")"
python3 - "$work/openmp.jsonl" <<'PY' || failures=$((failures + 1))
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
options, errors = records[0]["options"], []
if (options.get("kernel"), options.get("omp-threads")) != ("openmp", "2"):
    errors.append(f"options: kernel {options.get('kernel')}, omp-threads {options.get('omp-threads')}")
maps = [p for p in records if p["type"] == "point" and not p["bench"].startswith("ref-")]
if len(maps) != 8:
    errors.append(f"{len(maps)} map points, expected 2 benchmarks x 2 sizes x 2 computations")
for p in maps:
    if not p["stats"]["t_comp_ns"] >= p["params"]["compute_ns"]:
        errors.append(f"{p['key']}: computed {p['stats']['t_comp_ns']} ns, asked {p['params']['compute_ns']}")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# The control's known answer: status 0 met (or not judgeable, said), 1 missed, 2 the run failed.
control_attempt() {
  rm -f "$work/control.jsonl" # else the program would resume from the judged file
  run control "$np" --bench control --sizes 32K:256K --compute 5us:80us --density 2 --reps 30 \
    --output "$work/control.jsonl"
  [ "$(cat "$work/control.status")" = 0 ] || return 2
  python3 - "$work/control.jsonl" "$(dirname "$0")/../../python" <<'PY'
import json, re, statistics, sys
ratios, points, lat0, meta, off = [], [], None, None, []
for line in open(sys.argv[1]):
    r = json.loads(line)
    meta = meta or r
    if r.get("key") == "ref-pingpong/size_bytes=0":
        lat0 = r["stats"]["one_way_ns"]
    if r.get("bench") != "control":
        continue
    points.append(r)
    lo, hi = sorted((r["stats"]["t_comm_ns"], r["stats"]["t_comp_ns"]))
    if lo >= 5000 and hi <= 4 * lo:
        ratios.append(r["stats"]["ratio"])
        if not 0.7 <= r["stats"]["ratio"] <= 1.3:
            off.append(r)
median = statistics.median(ratios) if ratios else float("nan")
print(f"control: median ratio {median:.2f} over {len(ratios)} well-conditioned points of {len(points)}")
# Libraries whose lone shared-memory transfers do not take the ping-pong reference's time at
# these sizes (docs/overlap.md, "Invalid points": 0.3 at one size, 2 at the next): the known
# answer cannot hold there, and what must hold instead is that mpilens refuses every point the
# control shows off, by the control's row (computation time) or column (size).
BROKEN_REFERENCE = r"Intel\(R\) MPI Library|MPICH Version:\s*5\."
library = meta["mpi"]["library"] if meta else ""
if (len(ratios) < 10 or not 0.7 <= median <= 1.3) and re.match(BROKEN_REFERENCE, library):
    sys.path.insert(0, sys.argv[2])
    from mpilens import results
    from mpilens.analysis import overlap
    verdict = overlap.control_verdict(results.load(sys.argv[1]))
    kept = [p for p in off if verdict.reason_at(p["params"]["compute_ns"], p["params"]["size_bytes"]) is None]
    if off and not kept:
        print(f"control: off 1 at {len(off)} points under {library}, whose lone transfers do not "
              "take the reference's time; mpilens refuses every one of them (checked instead)")
        sys.exit(0)
    print(f"FAIL: under {library} the control is off at {len(kept)} points mpilens does not refuse: "
          f"{[p['key'] for p in kept][:5]}", file=sys.stderr)
# A 0-byte message takes microseconds between two ranks of one node; a millisecond means the
# ranks waited for time slices, the cores taken by another load: no ratio is then known.
if lat0 is not None and lat0 > 500e3 and len(ratios) < 10:
    print(f"SKIP: the control's known answer: a 0-byte one-way time of {lat0 / 1e6:.1f} ms (the "
          "machine is busy with another load), so too few points are well-conditioned")
    sys.exit(0)
if len(ratios) < 10 or not 0.7 <= median <= 1.3:
    print("FAIL: the blocking control should give a ratio near 1", file=sys.stderr)
    # what the run saw, so that a failure explains itself
    for size in sorted({p["params"]["size_bytes"] for p in points}):
        row = [p for p in points if p["params"]["size_bytes"] == size]
        print(f"  {size} B: T_comm {row[0]['stats']['t_comm_ns']:.0f} ns, T_comp "
              f"{min(p['stats']['t_comp_ns'] for p in row):.0f}-{max(p['stats']['t_comp_ns'] for p in row):.0f} ns, "
              f"ratios {[round(p['stats']['ratio'], 2) for p in row]}", file=sys.stderr)
    sys.exit(1)
PY
}
# A timing: the first of three runs that meets it decides, as for coll's truths. A wrong ratio
# misses every one; a library whose lone transfers now and then beat half a ping-pong's round trip
# (MPICH 5: 2 runs of 8 on a quiet machine, tests/compat/known.json) misses one now and then.
for attempt in 1 2 3; do
  control_attempt
  verdict=$?
  [ "$verdict" = 1 ] && [ "$attempt" -lt 3 ] || break
  echo "control: not met (attempt $attempt of 3); measuring again" >&2
done
case $verdict in
  0) ;;
  2) fail "control run failed" ;;
  *) failures=$((failures + 1)) ;;
esac

# Under libmpilens-progress: the setting is the run's context.
forward_vars "${launch[0]}" LD_PRELOAD MPILENS_PROGRESS
small=(--bench sender --sizes 1K:2K --compute 10us:20us --density 1 --reps 3)
LD_PRELOAD=$library MPILENS_PROGRESS=yield "${launch[@]}" "${forward[@]}" -n "$np" "$program" "${small[@]}" \
  --output "$work/thread.jsonl" >"$work/thread.out" 2>"$work/thread.err"
echo $? >"$work/thread.status"
[ "$(cat "$work/thread.status")" = 0 ] || fail "the run under the progress thread failed: $(tail -3 "$work/thread.err")"
python3 - "$work/thread.jsonl" "$np" <<'PY' || fail "the progress thread is not recorded"
import json, sys
setting = json.loads(open(sys.argv[1]).readline())["progress_setting"]
library = setting["library"]
sys.exit(0 if setting["label"] == "thread:yield" and library["loaded"] and
         library["running_per_rank"] == [True] * int(sys.argv[2]) else 1)
PY
head -n 2 "$work/thread.jsonl" >"$work/cut.jsonl"
run resume_bare "$np" "${small[@]}" --resume --output "$work/cut.jsonl"
[ "$(cat "$work/resume_bare.status")" = 2 ] || fail "resume_bare: status $(cat "$work/resume_bare.status"), expected 2"
grep -qF 'it was measured under "progress_setting":{"label":"thread:yield"' "$work/resume_bare.err" ||
  fail "resume_bare: $(head -3 "$work/resume_bare.err")"

finish "passed"
