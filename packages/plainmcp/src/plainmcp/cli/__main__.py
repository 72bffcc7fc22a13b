"""``python -m plainmcp.cli``: the ``plainmcp`` command."""

import sys

from . import main

sys.exit(main())
