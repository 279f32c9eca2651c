"""Output directories of the Python recipes: claim one, never replace what the recipe did not build.

The Python twin of ``claim_dest`` and ``run_stage`` in ``data_prep/lib/common.sh`` (same owner
mark, same rules): a recipe writes only into a destination that is absent, empty, marked as its
own, or holds nothing but entries it creates (a build made before the mark existed); it replaces
a directory only when that directory carries the recipe's completion stamp.
"""

import os
import shutil
from typing import Iterable

OWNER_MARK = ".run"  # every script's owner mark (scripts/lib/common.sh, claim_dir)
LEGACY_OWNER_MARK = ".data_prep_owner"  # the data recipes' mark before it: read, then renamed


class ForeignDestination(Exception):
    """The destination holds something this recipe did not create."""


def claim_dest(path: str, recipe: str, known: Iterable[str]) -> str:
    """Make ``path`` (created if absent) the output directory of ``recipe``; returns it absolute.

    ``known``: the names of the entries the recipe creates directly inside it.
    """
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise ForeignDestination("%s exists and is not a directory; choose another destination" % path)
    os.makedirs(path, exist_ok=True)
    mark, legacy = os.path.join(path, OWNER_MARK), os.path.join(path, LEGACY_OWNER_MARK)
    if not os.path.isfile(mark) and os.path.isfile(legacy):
        with open(legacy, encoding="utf-8") as f:
            owner = f.readline().strip()
        if owner != recipe:
            raise ForeignDestination("%s belongs to another recipe (%s, see %s); choose another destination"
                                     % (path, owner, legacy))
        os.replace(legacy, mark)
    if os.path.isfile(mark):
        with open(mark, encoding="utf-8") as f:
            owner = f.readline().strip()
        if owner != recipe:
            raise ForeignDestination("%s belongs to another recipe (%s, see %s); choose another destination"
                                     % (path, owner, mark))
        return path
    allowed = set(known) | {".lock"}
    foreign = sorted(e for e in os.listdir(path) if e not in allowed and _base(e) not in allowed)
    if foreign:
        raise ForeignDestination("%s already holds files this recipe did not create (%s%s); refusing to write "
                                 "there: choose another destination, or an empty one"
                                 % (path, " ".join(foreign[:5]), " ..." if len(foreign) > 5 else ""))
    with open(mark, "w", encoding="utf-8") as f:
        f.write(recipe + "\n")
    return path


def _base(entry: str) -> str:
    """The directory a temporary entry belongs to: ``X.tmp`` -> ``X``."""
    return entry[:-4] if entry.endswith(".tmp") else entry


def fresh_tmp(final: str) -> str:
    """An empty ``FINAL.tmp`` to build ``final`` in (a leftover of an interrupted run is removed:
    the name is this module's own, inside a claimed destination)."""
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    return tmp


def replace_dir(tmp: str, final: str, stamp: str) -> None:
    """Move the finished ``tmp`` (which holds ``stamp``) to ``final``. An existing ``final`` is
    replaced only if it holds ``stamp`` too, i.e. was built by the recipe; otherwise an error
    names it and nothing is touched."""
    if os.path.lexists(final):
        if not os.path.isfile(os.path.join(final, stamp)):
            raise ForeignDestination("%s exists but was not built by this recipe (no %s in it); move it away "
                                     "and run again" % (final, stamp))
        shutil.rmtree(final)
    os.replace(tmp, final)
