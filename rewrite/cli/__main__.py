"""``python -m rewrite.cli``: the same as the ``eqsat`` command."""

import sys

from rewrite.cli.main import main

sys.exit(main())
