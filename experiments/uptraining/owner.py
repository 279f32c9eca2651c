"""The output folder's owner mark: the driver writes only into a folder it created.

A folder is accepted when it is absent or empty (it is then marked) or when it holds this driver's
mark ``.run`` (the repository's owner-mark name, with this driver's line in it). Anything else, a
folder of other files or another tool's run, is refused and left as it is.
"""

import os

MARK = ".run"
OWNER = "experiments.uptraining lm-uptraining-evidence"


class ForeignFolder(RuntimeError):
    """The folder holds files this driver did not write."""


def check(root: str, owner: str = OWNER) -> bool:
    """True when ``root`` is the driver ``owner``'s (marked), False when absent or empty; raises
    ForeignFolder otherwise. Writes nothing."""
    if not os.path.exists(root):
        return False
    if not os.path.isdir(root):
        raise ForeignFolder(f"{root} exists and is not a folder; choose another --root")
    mark = os.path.join(root, MARK)
    if os.path.isfile(mark):
        with open(mark, encoding="utf-8", errors="replace") as handle:
            have = handle.readline().strip()
        if have != owner:
            raise ForeignFolder(f"{root} holds another run ({have!r}, see {mark}); choose another --root")
        return True
    entries = sorted(os.listdir(root))
    if entries:
        raise ForeignFolder(f"{root} is not empty and was not created by {owner.split()[0]} (no {MARK}; it "
                            f"holds {', '.join(entries[:5])}); refusing to write into it: choose another --root")
    return False


def claim(root: str, owner: str = OWNER) -> None:
    """Mark ``root`` as the driver ``owner``'s (creating it), after ``check``."""
    if check(root, owner):
        return
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, MARK), "w", encoding="utf-8") as handle:
        handle.write(owner + "\n")
