"""The sanity family: can this machine and MPI library be measured, and how finely?"""

from ..analysis import sanity as analysis
from ..family import Family
from ..plots import sanity as plots
from ..program_command import COMMAND

FAMILY = Family(
    "sanity",
    "mpilens-sanity",
    "check that this machine and MPI can be measured: clock, compute kernels, clock offsets, "
    "ready-first handshake, synchronized start",
    plots.render,
    analysis.diagnose,
    analysis.compare,
    commands=(COMMAND,),
    verdict=analysis.verdict,
)
