"""``python -m npudsl``: the same as the ``npudsl`` command."""

import sys

from npudsl.cli import main

sys.exit(main())
