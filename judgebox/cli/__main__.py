"""``python -m judgebox.cli``: the ``judgebox`` command."""

import sys

from judgebox.cli import main

sys.exit(main())
