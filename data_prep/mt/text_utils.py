"""Line-level helpers shared by the MT preparation modules."""

import io
import os
import re
import unicodedata

_SPACE_RE = re.compile(r"\s+")


def clean_line(text):
    """One line of plain text: control characters (including a stray carriage return, which
    Python's universal-newline reading in fairseq-preprocess would treat as a line break and so
    misalign source and target) become spaces, whitespace runs collapse, ends are stripped."""
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text):
        text = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text)
    return _SPACE_RE.sub(" ", text).strip()


def read_lines(path_or_file):
    """Lines of a UTF-8 text file (or a binary file object), split on '\\n' only."""
    if isinstance(path_or_file, (str, os.PathLike)):
        with open(path_or_file, "rb") as f:
            return read_lines(f)
    wrapper = io.TextIOWrapper(path_or_file, encoding="utf-8", errors="replace", newline="\n")
    try:
        return [line[:-1] if line.endswith("\n") else line for line in wrapper]
    finally:
        wrapper.detach()


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")
