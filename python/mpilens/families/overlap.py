"""The overlap family (seed 000): does non-blocking communication progress while the program
computes?"""

from typing import Callable

from .. import program_options
from ..analysis import overlap as analysis
from ..analysis import overlap_costs
from ..cli_common import Names
from ..errors import MpilensError
from ..family import Family, FamilyOption
from ..plots import overlap as plots
from ..program_command import COMMAND

# --bench: benchmark names of docs/overlap.md, or all.
BENCHES = Names(analysis.BENCHES, "benchmark", "sender,receiver")
# --kernel: the computation (docs/programs/mpilens-overlap.md).
KERNELS = program_options.choices("mpilens-overlap", "kernel")


def kernel(text: str) -> str:
    if text.strip() not in KERNELS:
        raise MpilensError(f'invalid kernel "{text}": choose from ' + ", ".join(KERNELS))
    return text.strip()


def thread_count(option: str, least: int = 0) -> Callable[[str], str]:
    """The check of a program option that counts threads, within the program's own bounds and
    at least `least`."""
    low, high = program_options.int_range("mpilens-overlap", option)
    low = max(low, least)

    def check(text: str) -> str:
        if not text.strip().isdigit() or not low <= int(text) <= high:
            raise MpilensError(
                f'invalid --{option} "{text}": expected a number of threads from {low} to {high}'
            )
        return text.strip()

    return check


FAMILY = Family(
    "overlap",
    "mpilens-overlap",
    "Does non-blocking communication progress while the program computes? Heat maps over "
    "message size × computation time (seed 000)",
    plots.render,
    analysis.diagnose,
    analysis.compare,
    commands=(COMMAND,),
    options=(
        FamilyOption(
            "--bench",
            "LIST",
            f"benchmarks to run, separated by commas: {BENCHES.listing()}",
            BENCHES.passed_on,
        ),
        FamilyOption(
            "--kernel",
            "NAME",
            "the computation: time (a busy loop on the rank's thread, the default) or openmp "
            "(that loop on the threads of an OpenMP region, seed 000's multi-threaded one)",
            kernel,
        ),
        FamilyOption(
            "--omp-threads",
            "N",
            "--kernel openmp: the region's threads (default: the processing units of each rank)",
            # 0 is the program's own value under the time kernel, not a user's
            thread_count("omp-threads", least=1),
        ),
        FamilyOption(
            "--comm-threads",
            "N",
            "threads: the threads of each rank that communicate at once (default 2; the benchmark "
            "needs MPI_THREAD_MULTIPLE, which naming it in --bench asks for)",
            thread_count("comm-threads"),
        ),
    ),
    compare_parts=plots.compare_parts,
    validity=analysis.validity,
    verdict=overlap_costs.verdict,
    symptoms=overlap_costs.symptoms,
)
