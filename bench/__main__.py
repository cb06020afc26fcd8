"""``python -m bench``: the Tensat table (see bench/tensat_table.py)."""

import sys

from bench.tensat_table import main

sys.exit(main())
