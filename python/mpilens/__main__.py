"""Allow `python -m mpilens`."""

import sys

from .cli import main

sys.exit(main())
