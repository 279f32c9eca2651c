"""``python -m abc_fairseq.convert``: see the package docstring (``--help``)."""

import sys

from .cli import main

sys.exit(main())
