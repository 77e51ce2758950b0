"""mpilens: launch MPI measurement programs, read their results, analyse and report."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def _version() -> str:
    # In a checkout, VERSION is the truth; installed metadata goes stale when it changes.
    version_file = Path(__file__).resolve().parents[2] / "VERSION"
    if version_file.is_file():
        return version_file.read_text(encoding="utf-8").strip()
    try:
        return version("mpilens")
    except PackageNotFoundError:
        return "unknown"


__version__ = _version()
