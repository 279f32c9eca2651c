"""Open a recipe's zip archive, or exit with an error naming what is wrong with it: a file that
is no zip, or the members it lacks (a wrong archive fails here, not as odd data later)."""

import zipfile
from typing import Sequence


def open_zip(archive: str, members: Sequence[str], tool: str, hint: str) -> zipfile.ZipFile:
    """The open ``archive``, which holds every one of ``members``; ``hint`` says which archive
    was expected (it ends the error that names the missing ones)."""
    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as e:
        raise SystemExit("%s: ERROR: cannot open %s as a zip archive: %s" % (tool, archive, e))
    names = set(zf.namelist())
    missing = [member for member in members if member not in names]
    if missing:
        zf.close()
        raise SystemExit("%s: ERROR: %s lacks %s (%s)" % (tool, archive, ", ".join(missing), hint))
    return zf
