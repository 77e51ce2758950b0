"""numpy, imported at its first use: `mpilens` imports every family on each start, and numpy
alone took a third of that start (0.3 s of 0.8 s), for the few commands that read matrices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
else:

    class _Numpy:
        def __getattr__(self, name: str) -> Any:
            import numpy

            return getattr(numpy, name)

    np = _Numpy()

__all__ = ["np"]
