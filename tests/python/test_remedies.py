"""The catalogue of remedies (remedies.json) and the report's advice built on it (issue 19):
rules checked on constructed libraries and findings whose true cost is known."""

import copy
import re

import pytest

from mpilens import advice, remedies, report, schema
from mpilens.analysis import conditions, overlap_costs

from conftest import make_overlap_run, map_point

MPICH_UCX = remedies.Library("mpich", (4, 0, 2), "ch4:ucx",
                             frozenset({"MPIR_CVAR_ASYNC_PROGRESS", "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE"}),
                             nodes=1)
OPENMPI_41 = remedies.Library("openmpi", (4, 1, 4), None,
                              frozenset({"btl_vader_eager_limit", "btl_tcp_eager_limit",
                                         "btl_tcp_progress_thread", "mpi_yield_when_idle"}),
                              nodes=1)


def names(symptom, library):
    return [r.name for r in remedies.for_symptom(symptom, library)]


def test_every_remedy_is_complete_and_names_known_symptoms():
    known = remedies.symptoms()
    for remedy in remedies.catalogue():
        assert remedy.reason and remedy.libraries and remedy.kind in remedies.KINDS
        assert set(remedy.symptoms) <= set(known)
        assert remedy.env or remedy.launcher or remedy.code, remedy.name
        # Every placeholder of a remedy is one that some symptom fills.
        assert set(remedy.needs_values) <= {"size", "ranks_per_node"}, remedy.name
    assert len({r.name for r in remedies.catalogue()}) == len(remedies.catalogue())


def test_rules_follow_flavour_device_version_and_nodes():
    mpich = names("no-overlap-recv", MPICH_UCX)
    assert "mpich-async-progress" in mpich and "ucx-eager" in mpich
    # ch3's eager limit is a control variable of this MPICH too, but its device is ch4: it
    # would change nothing, so it is not advised.
    assert "mpich-ch3-eager" not in mpich
    assert not [n for n in mpich if n.startswith("ompi-")]
    ompi = names("no-overlap-recv", OPENMPI_41)
    assert "ompi-vader-eager" in ompi and "ompi-sm-eager" not in ompi   # sm is Open MPI 5's
    assert "ompi-tcp-eager" not in ompi                                  # one node: no TCP
    across = remedies.Library(**{**OPENMPI_41.__dict__, "nodes": 2})
    assert "ompi-tcp-eager" in names("no-overlap-recv", across)
    assert "ompi-vader-eager" not in names("no-overlap-recv", across)
    open_mpi_5 = remedies.Library("openmpi", (5, 0, 11), None, frozenset({"btl_sm_eager_limit"}), 1)
    assert "ompi-sm-eager" in names("no-overlap-send", open_mpi_5)


def test_only_control_variables_the_library_has_are_advised():
    without = remedies.Library("mpich", (4, 0, 2), "ch4:ucx", frozenset(), 1)
    assert "mpich-async-progress" not in names("no-overlap-send", without)
    reason = remedies.why_not(remedies.by_name("mpich-async-progress"), without)
    assert "no control variable MPIR_CVAR_ASYNC_PROGRESS" in reason
    # Unknown (results older than the cvars record): not refused, advised unchecked.
    unknown = remedies.Library("mpich", (4, 0, 2), "ch4:ucx", None, 1)
    assert "mpich-async-progress" in names("no-overlap-send", unknown)


def test_settings_that_cannot_exist_are_named():
    env = {"MPIR_CVAR_ASYNC_PROGRESS": "1", "MPIR_CVAR_NO_SUCH": "1", "OMPI_MCA_btl_x": "1",
           "UCX_RNDV_THRESH": "8192", "MPICH_ASYNC_PROGRESS": "1"}
    assert remedies.missing_variables(env, MPICH_UCX) == ["MPIR_CVAR_NO_SUCH", "OMPI_MCA_btl_x"]
    assert remedies.missing_variables({"OMPI_MCA_mpi_yield_when_idle": "1",
                                       "MPIR_CVAR_ASYNC_PROGRESS": "1",
                                       "OMPI_MCA_nope": "1"}, OPENMPI_41) == [
        "MPIR_CVAR_ASYNC_PROGRESS", "OMPI_MCA_nope"]


def test_library_read_from_a_meta_record():
    meta = {"mpi": {"flavour": "mpich", "library": "MPICH Version:\t4.0.2",
                    "library_full": "MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx\n"},
            "nodes": 2, "cvars": {"count": 1, "vars": {"MPIR_CVAR_ASYNC_PROGRESS": {}}}}
    library = remedies.library_of(meta)
    assert (library.flavour, library.version, library.device, library.nodes) == (
        "mpich", (4, 0, 2), "ch4:ucx", 2)
    assert library.cvars == {"MPIR_CVAR_ASYNC_PROGRESS"}
    meta["mpi"] = {"flavour": "openmpi", "library": "Open MPI v4.1.4, package: Debian OpenMPI"}
    assert remedies.library_of(meta).version == (4, 1, 4)


def test_placeholders_are_filled():
    remedy = remedies.by_name("ucx-eager")
    assert remedy.env_for({"size": "262144"}) == {"UCX_RNDV_THRESH": "262144"}
    assert advice.size_value(131072) == "262144" and advice.size_value(100) == "128"
    fewer = remedies.by_name("fewer-ranks-per-node")
    assert remedies.launcher_options(fewer, "/usr/bin/srun", {"ranks_per_node": "1"}) == [
        "--ntasks-per-node=1"]
    assert remedies.launcher_options(fewer, "mpiexec.mpich", {"ranks_per_node": "1"}) == [
        "-ppn", "1"]


# --- symptoms of overlap runs whose cost is known ---------------------------------------------

def overlap_run(receiver_ratio, sender_ratio, **meta):
    """Sender and receiver maps at 3 sizes x 2 computation times, every point determined: the
    receiver's ratio at 64 KiB and above as given, 0 below; the sender's everywhere."""
    points = []
    for size in (1024, 65536, 1048576):
        for compute in (100_000, 400_000):
            r = receiver_ratio if size >= 65536 else 0.0
            points.append(map_point("receiver", size, compute, r, 200_000.0))
            points.append(map_point("sender", size, compute, sender_ratio, 200_000.0))
    return make_overlap_run(points, **meta)


def test_no_overlap_costs_what_the_times_say():
    run = overlap_run(receiver_ratio=1.0, sender_ratio=0.0)
    (symptom,) = overlap_costs.symptoms(run)
    # T_comm 200 µs, ratio 1: 200 µs beyond the longer part; its share is largest where the
    # measured time is smallest: computation 100 µs, T = 300 µs.
    assert symptom.key == "no-overlap-recv" and symptom.bench == "overlap:receiver"
    assert symptom.cost_ns == pytest.approx(100_000.0)
    assert symptom.share == pytest.approx(100_000 / 300_000)
    assert symptom.evidence == "map-receiver"
    assert symptom.values == {"size": str(2 * 1048576)}
    assert "64 KiB–1 MiB" in symptom.text


def test_hurting_overlap_is_its_own_symptom():
    run = overlap_run(receiver_ratio=0.0, sender_ratio=1.5)
    keys = [s.key for s in overlap_costs.symptoms(run)]
    assert keys == ["no-overlap-send", "overlap-hurts"]


def test_a_run_that_overlaps_has_no_symptom_and_says_so():
    run = overlap_run(receiver_ratio=0.0, sender_ratio=0.0)
    assert overlap_costs.symptoms(run) == []
    assert overlap_costs.verdict(run) == "Overlaps at every size decided: sender, receiver."
    failing = overlap_run(receiver_ratio=1.0, sender_ratio=0.0)
    assert overlap_costs.verdict(failing).startswith("Does not overlap: receiver (from 64 KiB).")


def test_a_map_that_fails_only_at_small_sizes_says_where():
    points = [map_point("receiver", size, compute, 1.0 if size == 1024 else 0.0, 200_000.0)
              for size in (1024, 65536, 1048576) for compute in (100_000, 400_000)]
    assert overlap_costs.verdict(make_overlap_run(points)) == (
        "Does not overlap: receiver (at 1 KiB).")


def test_findings_are_ranked_by_their_share_of_the_time():
    run = overlap_run(receiver_ratio=1.0, sender_ratio=0.5)
    found = advice.ranked(advice.findings_of("overlap", run, overlap_costs.symptoms(run)))
    assert [f.symptom.key for f in found] == ["no-overlap-recv", "no-overlap-send"]
    shares = [f.symptom.share for f in found]
    assert shares == sorted(shares, reverse=True)


def test_verification_command_names_the_tunable_remedies():
    run = overlap_run(receiver_ratio=1.0, sender_ratio=0.0)
    (finding,) = advice.findings_of("overlap", run, overlap_costs.symptoms(run))
    command = advice.verification(finding)
    assert command.startswith("mpilens tune --bench overlap:receiver --np 2 --mpi openmpi --settings ")
    settings = command.split("--settings ")[1].split(",")
    assert "progress-poll" in settings and "test-during-compute" not in settings
    assert all(remedies.by_name(name).kind in advice.TUNABLE_KINDS for name in settings)


def test_crowded_and_unbound_ranks_are_conditions_with_remedies():
    meta = {"ranks": 4, "nodes": 1, "cpus_online": 2, "hosts": ["a"] * 4,
            "binding": ["0-1"] * 4, "machines": ["m"] * 4}
    keys = [s.key for s in conditions.condition_symptoms(meta)]
    assert keys == ["oversubscribed", "unbound-ranks"]
    crowded = conditions.condition_symptoms(meta)[0]
    assert crowded.values == {"ranks_per_node": "2"}
    bound = dict(meta, ranks=2, hosts=["a"] * 2, binding=["0", "1"], machines=["m"] * 2)
    assert conditions.condition_symptoms(bound) == []


# --- the report's first screen ----------------------------------------------------------------

def test_first_screen_order_evidence_and_folded_metadata(tmp_path):
    crowded = {"ranks": 2, "cpus_online": 2, "binding": ["0-1", "0-1"]}
    run = overlap_run(receiver_ratio=1.0, sender_ratio=0.5, **crowded)
    page = report.write_report([run], tmp_path).read_text(encoding="utf-8")
    order = ["<h2>Read with care</h2>", "<h2>Verdict</h2>",
             "<h2>What costs time, and what to try</h2>", "receiver-side (receiver): no full overlap",
             "sender-side (sender): no full overlap", "<h2>Overlap", "<h2>Runs</h2>"]
    places = [page.index(text) for text in order]
    assert places == sorted(places)
    assert "may run on any CPU" in page[places[0]:places[1]]
    # Every evidence link leads to a figure of the page.
    links = re.findall(r'href="#([^"]+)"', page)
    assert links and all(f'<figure id="{link}">' in page for link in links)
    # The metadata is folded, at the end.
    assert page.index("<details><summary>overlap.jsonl: how it was run") > places[-1]


def test_remedies_are_advised_only_where_the_library_has_them(tmp_path):
    run = overlap_run(receiver_ratio=1.0, sender_ratio=0.0)
    run.meta["cvars"] = {"count": 1, "vars": {"btl_vader_eager_limit": {
        "type": "unsigned long", "scope": "readonly", "value": 4096, "default": 4096}}}
    page = report.write_report([run], tmp_path).read_text(encoding="utf-8")
    assert "OMPI_MCA_btl_vader_eager_limit=2097152" in page
    assert "btl_tcp" not in page and "mpi_yield_when_idle" not in page
    assert "not checked against it" not in page
    unchecked = copy.deepcopy(run)
    del unchecked.meta["cvars"]
    page = report.write_report([unchecked], tmp_path / "old").read_text(encoding="utf-8")
    assert "not checked against it" in page


def test_cvars_of_the_meta_record_are_validated():
    good = {"count": 1, "vars": {"x": {"type": "int", "scope": "local", "value": 3,
                                       "default": None}}}
    schema.check_meta({"cvars": good})
    schema.check_meta({"cvars": None})
    for bad in ({"count": "1", "vars": {}}, {"count": 1, "vars": {"x": 3}},
                {"count": 1, "vars": {"x": {"type": 1}}},
                {"count": 1, "vars": {"x": {"value": [1]}}}):
        with pytest.raises(schema.FieldError):
            schema.check_meta({"cvars": bad})
