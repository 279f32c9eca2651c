"""Refuse to overwrite: the data tools write only files that do not exist yet.

The recipes run every tool into a fresh temporary directory, so this never fires for them; it
protects a user who runs a tool by hand from replacing a file they did not mean to.
"""

import os
import sys
from typing import Iterable


def refuse_existing(paths: Iterable[str], tool: str) -> None:
    """Exit with an error naming every one of ``paths`` that already exists (files or folders)."""
    existing = [p for p in paths if os.path.lexists(p)]
    if existing:
        sys.exit("%s: ERROR: refusing to overwrite %s (it exists already; move it away or choose "
                 "another output)" % (tool, ", ".join(existing)))
