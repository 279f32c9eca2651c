"""The per-recipe checksum files (``data_prep/<recipe>/SHA256SUMS``) and what they pin.

Format, one file a line (``#`` starts a comment; blank lines are ignored)::

    <sha256>      <file name>  [<size in bytes>]
    md5=<md5>     <file name>  [<size in bytes>]

The file name is the last component of the download URL (also the name looked up in a mirror
directory). A ``sha256`` line pins the published value: the file is refused unless it matches.
An ``md5=`` line is for archives whose publisher gives only an md5: the first download is
checked against it and its sha256 recorded next to the download (``NAME.sha256``). A file a
recipe fetches that is listed in none of its checksum files is recorded on first use, with a
warning (see ``data_prep.lib.fetch``). Each pinned value carries a comment saying where it was
published.
"""

import os
from typing import Dict, NamedTuple, Optional, Sequence


class Pin(NamedTuple):
    """What a checksum file says about one file: exactly one of sha256 / md5 is set."""

    sha256: Optional[str]
    md5: Optional[str]
    size: Optional[int]
    source: str  # the checksum file and line, for messages


def _hex(value: str, length: int, where: str) -> str:
    value = value.strip().lower()
    if len(value) != length or any(c not in "0123456789abcdef" for c in value):
        raise ValueError("%s: expected %d hex digits, got %r" % (where, length, value))
    return value


def load(path: str) -> Dict[str, Pin]:
    """{file name: Pin} of one checksum file; a malformed line is a ValueError naming it."""
    pins = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            where = "%s:%d" % (path, number)
            if len(fields) not in (2, 3):
                raise ValueError("%s: expected '<sha256>  <name>  [size]', got %r" % (where, line.strip()))
            digest, name = fields[0], fields[1].lstrip("*")
            size = int(fields[2]) if len(fields) == 3 else None
            if digest.startswith("md5="):
                pins[name] = Pin(None, _hex(digest[4:], 32, where), size, where)
            else:
                pins[name] = Pin(_hex(digest, 64, where), None, size, where)
    return pins


def lookup(name: str, paths: Sequence[str]) -> Optional[Pin]:
    """The pin of ``name`` in the first of ``paths`` that lists it (None: listed nowhere)."""
    for path in paths:
        if not os.path.isfile(path):
            raise ValueError("checksum file %s does not exist" % path)
        pin = load(path).get(name)
        if pin is not None:
            return pin
    return None


def fetch_options(name: str, paths: Sequence[str]) -> dict:
    """``data_prep.lib.fetch.fetch`` keyword arguments for ``name`` given the checksum files:
    the pinned sha256 (or published md5 to check before recording), else record-on-first-use."""
    pin = lookup(name, paths)
    if pin is None:  # a file no checksum file knows (e.g. a user's URL): recorded, with a warning
        return dict(record_sha256=True)
    return dict(sha256=pin.sha256, md5=pin.md5, record_sha256=pin.sha256 is None, size=pin.size,
                pinned_in=pin.source)
