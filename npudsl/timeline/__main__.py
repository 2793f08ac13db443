"""``python3 -m npudsl.timeline``: see :mod:`npudsl.timeline.cli`."""

import sys

from npudsl.timeline.cli import main

sys.exit(main())
