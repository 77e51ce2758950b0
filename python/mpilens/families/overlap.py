"""The overlap family (seed 000): does non-blocking communication progress while the program
computes?"""

from ..analysis import overlap as analysis
from ..analysis import overlap_costs
from ..cli_common import Names
from ..family import Family, FamilyOption
from ..plots import overlap as plots
from ..program_command import COMMAND

# --bench: benchmark names of docs/overlap.md, or all.
BENCHES = Names(analysis.BENCHES, "benchmark", "sender,receiver")


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
    ),
    compare_parts=plots.compare_parts,
    validity=analysis.validity,
    verdict=overlap_costs.verdict,
    symptoms=overlap_costs.symptoms,
)
