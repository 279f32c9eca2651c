"""Entry point: ``python -m benchmarks <suite> [flags]``."""

import sys

from .harness import main

sys.exit(main())
