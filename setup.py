"""Build hook of the Python package (its metadata is in pyproject.toml): the manual pages, the
shell completions and the documentation the wheel installs beside the package, generated from
the command's own parser when the package is built (python/mpilens/packaging_files.py)."""

import sys
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "python"))
from mpilens.packaging_files import write_all  # noqa: E402

setup(data_files=write_all(ROOT, "build/python-data"))
