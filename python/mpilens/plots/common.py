"""Figure creation and PNG rendering shared by the family plot modules."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Tuple

from ..section import Plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 110


def new_figure(size: Tuple[float, float] = (6.4, 3.8)) -> "Figure":
    """A figure bound to the Agg canvas: no display, no pyplot global state."""
    # matplotlib takes about half a second to import; only commands that draw should pay for it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def to_plot(figure: "Figure", name: str, caption: str) -> Plot:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return Plot(name=name, caption=caption, png=buffer.getvalue())
