"""Figure creation and PNG rendering shared by the family plot modules."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Iterable, List, Optional, Tuple

from ..markup import Markup, element, join
from ..section import Part, Plot

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


def plot_part(figure: Optional["Figure"], name: str, caption: str) -> List[Part]:
    """The figure as a section's part; nothing when there was nothing to draw."""
    return [] if figure is None else [to_plot(figure, name, caption)]


def diagnosis_list(sentences: Iterable[str]) -> Markup:
    """Diagnosis sentences as a list, warnings and skipped measurements marked for the style."""
    items = [element("li", s, "warn" if "warning:" in s else "skip" if s.startswith("skipped:")
                     else None) for s in sentences]
    return element("ul", join(items)) if items else element("p", "Nothing to report.")
