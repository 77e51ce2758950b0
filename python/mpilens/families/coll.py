"""The coll family (seed 003): how long does a collective really take to reach each rank?
Measured as a series over rank counts, one run of mpilens-coll per count."""

from ..analysis import coll as analysis
from ..cli_common import Names
from ..errors import MpilensError
from ..family import Family, FamilyOption
from ..plots import coll as plots
from ..program_command import COMMAND
from ..units import parse_message_size, parse_time

OPS = Names(analysis.OPS, "operation", "bcast,reduce")
METHODS = Names(
    analysis.METHODS,
    "method",
    "oli,rounds",
    dict.fromkeys(
        analysis.DERIVED, "computed from the barrier method's runs: add barrier to get it"
    ),
)
ALGOS = Names(analysis.ALGOS, "algorithm", "library,linear")


def size(text: str) -> str:
    parse_message_size(text)
    return text.strip()


def hop_delay(text: str) -> str:
    if parse_time(text) > analysis.HOP_DELAY_MAX_NS:
        raise MpilensError(f'invalid hop delay "{text}": at most 1s')
    return text.strip()


def block(text: str) -> str:
    low, high = analysis.BLOCK_RANGE
    if not text.strip().isdigit() or not low <= int(text) <= high:
        raise MpilensError(
            f'invalid block "{text}": expected a number of operations from {low} to {high}'
        )
    return text.strip()


def wait(text: str) -> str:
    if text.strip() not in analysis.WAITS:
        raise MpilensError(f'invalid wait "{text}": choose from ' + ", ".join(analysis.WAITS))
    return text.strip()


def estimator(text: str) -> str:
    if text.strip() not in analysis.ESTIMATORS:
        raise MpilensError(
            f'invalid estimator "{text}": choose from ' + ", ".join(analysis.ESTIMATORS)
        )
    return text.strip()


# full is the seed's protocol: blocks of 100 operations, 8 to 30 blocks, until their RSD is below
# 3%, each point the mean of its blocks; full-64k the same at the seed's other size. Options given
# on the command line come after these and win.
PRESETS = {
    "quick": ["--block", "10", "--min-blocks", "3", "--max-blocks", "5"],
    "default": ["--block", "50", "--min-blocks", "5", "--max-blocks", "15"],
    "full": ["--estimator", "mean"],
    "full-64k": ["--estimator", "mean", "--size", "64K"],
}

OPTIONS = (
    FamilyOption(
        "--op",
        "LIST",
        f"operations, separated by commas: {OPS.listing()} (default bcast)",
        OPS.passed_on,
    ),
    FamilyOption(
        "--method",
        "LIST",
        f"methods, separated by commas: {METHODS.listing()} (default all)",
        METHODS.passed_on,
    ),
    FamilyOption(
        "--algo",
        "LIST",
        f"implementations, separated by commas: {ALGOS.listing()} (default all)",
        ALGOS.passed_on,
    ),
    FamilyOption("--size", "BYTES", "message size, such as 256 or 64K (default 256)", size),
    FamilyOption(
        "--hop-delay",
        "TIME",
        "busy wait before every forwarding send of the reference "
        "algorithms, such as 100 (µs) or 2ms, at most 1s: the true latency is then "
        "known (default 0)",
        hop_delay,
    ),
    FamilyOption(
        "--block",
        "M",
        "operations per block, {} to {} (the preset's otherwise)".format(*analysis.BLOCK_RANGE),
        block,
    ),
    FamilyOption(
        "--fast", "", "oli: measure in full only the candidates of a cheap pass, plus random checks"
    ),
    FamilyOption(
        "--estimator",
        "NAME",
        "a point's estimate: median (of its blocks; of an oli block's operations) or mean (the "
        "seed's); the other is recorded beside it (default median; full presets mean)",
        estimator,
    ),
    FamilyOption(
        "--wait", "MODE", "how ranks wait: " + ", ".join(analysis.WAITS) + " (default auto)", wait
    ),
)

FAMILY = Family(
    "coll",
    analysis.PROGRAM,
    "How long does a collective really take to reach each rank? Every common method against "
    "the per-rank operation latency OL_i, over rank counts (seed 003)",
    plots.render,
    analysis.diagnose,
    analysis.compare,
    commands=(COMMAND,),
    presets=PRESETS,
    options=OPTIONS,
    compare_parts=plots.compare_parts,
    validity=analysis.validity,
    np_series=True,
    min_ranks=2,
    text_table=analysis.comparison_table,
    verdict=analysis.verdict,
)
