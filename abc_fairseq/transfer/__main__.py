"""``python -m abc_fairseq.transfer``: see the package docstring (``--help``)."""

import sys

from .cli import main

sys.exit(main())
