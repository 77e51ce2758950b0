#!/usr/bin/env python3
"""Write python/mpilens/program_options.json from a build: the choice lists and integer ranges
of the programs' option tables, which the mpilens command offers and checks (see
python/mpilens/program_options.py). Run it after changing them in a program's table:

    tools/update_program_options.py [BIN_DIR]        (default build/openmpi/bin)
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from mpilens import program_options  # noqa: E402
from mpilens.errors import MpilensError  # noqa: E402


def main() -> int:
    bin_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "openmpi" / "bin"
    try:
        found = {name: program_options.read(bin_dir / name) for name in program_options.PROGRAMS}
    except MpilensError as error:
        print(f"update_program_options: {error}", file=sys.stderr)
        return 2
    path = ROOT / "python" / "mpilens" / program_options.FILE
    path.write_text(program_options.dumps(found), encoding="utf-8")
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
