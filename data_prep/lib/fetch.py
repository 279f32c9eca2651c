"""Fetch a file to a destination with resume, sha256 verification and an offline mirror.

Used by every data recipe, from Python (``fetch(...)``) or from bash::

    python -m data_prep.lib.fetch URL DEST --sha256 HEX
    python -m data_prep.lib.fetch URL DEST --checksums data_prep/glue/SHA256SUMS  # the recipe's pins
    python -m data_prep.lib.fetch URL DEST --record-sha256 [--md5 HEX]   # checksum not known yet
    python -m data_prep.lib.fetch URL DEST --sha256 HEX --mirror DIR     # no network: DIR/<name>

Behaviour
---------
- Idempotent: a destination that was verified before is not fetched again. Verification is
  remembered in ``DEST.verified`` (hash, size, mtime), so a re-run does not even re-hash large
  archives; if the file changed since, it is hashed again.
- Resumable: bytes go to ``DEST.part``; an interrupted download continues from where it stopped
  with an HTTP ``Range`` request (a server that ignores it sends the whole file again, which is
  detected and handled). ``DEST`` appears only once the complete file has passed verification.
- Verified: the complete file's sha256 must equal the value recorded in the recipe. On a mismatch
  the error names the file and both hashes; the bad bytes are kept as ``DEST.corrupt`` for
  inspection and nothing that was already verified is touched.
- Pinned (``--checksums FILE``, repeatable; see ``data_prep.lib.checksums``): the sha256 (and
  size) published for the URL's file name, from the first FILE listing it. A mismatch names FILE.
- Record-on-first-download (``--record-sha256``, or a name no ``--checksums`` file lists): for
  files whose checksum is not published, the first complete download is hashed (and, if a
  published ``--md5`` is given, checked against it first) and its sha256 written to
  ``DEST.sha256``; later runs verify against that record. Without an md5 this trusts the first
  bytes, so it prints a WARNING saying the hash was recorded, not verified, and which files to
  delete to fetch and record again; a later mismatch against a record says the same.
  A pinned or ``--sha256`` value always wins over a recorded one.
- Mirror (``--mirror DIR`` or the environment variable ``ABC_DATA_MIRROR``): the file is copied
  from ``DIR/<file name of the URL>`` instead of being downloaded, and verified the same way.
  Nothing touches the network in that mode; a file missing from the mirror is an error.

The CLI prints the verified sha256 on stdout; messages go to stderr.
Exit status of the CLI: 0 ok, 1 verification failure, 2 usage error, 3 download/mirror failure.
Standard library only.
"""

import hashlib
import json
import os
import shutil
import sys
import urllib.parse

from data_prep.lib.cli import module_parser
from data_prep.lib.errors import ChecksumMismatch, FetchError
from data_prep.lib.http_get import download

MIRROR_ENV = "ABC_DATA_MIRROR"
CHUNK = 1 << 20


def _log(msg):
    print("fetch: %s" % msg, file=sys.stderr, flush=True)


def _record(dest, actual, md5):
    """Write DEST.sha256 for a first download; loudly when nothing published vouched for it."""
    _write_atomic(dest + ".sha256", "%s  %s\n" % (actual, os.path.basename(dest)))
    if md5:
        _log("%s: matches the published md5; its sha256 %s is recorded in %s.sha256"
             % (os.path.basename(dest), actual, dest))
        return
    _log("WARNING: %s: no published checksum is pinned for this file, so its sha256 %s was "
         "RECORDED, NOT VERIFIED, in %s.sha256 (later runs check against that record). If this "
         "first copy may be truncated or not genuine, delete %s.sha256 and %s and run again to fetch "
         "and record it anew." % (os.path.basename(dest), actual, dest, dest, dest))


def _origin(dest, pinned_in, recorded):
    """Where the expected sha256 came from, and what to do about a mismatch (for the error)."""
    if recorded:
        return ("the expected value was recorded from an earlier first download in %s.sha256, not "
                "verified against a published checksum: if that first download was bad, delete "
                "%s.sha256 and run again to re-verify" % (dest, dest))
    if pinned_in:
        return "the expected value is the published sha256 pinned in %s" % pinned_in
    return None


def file_hash(path, algorithm="sha256"):
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _normalise_hex(value, name, length):
    value = value.strip().lower()
    if len(value) != length or any(c not in "0123456789abcdef" for c in value):
        raise ValueError("%s must be %d hex digits, got %r" % (name, length, value))
    return value


def _stat_key(path):
    st = os.stat(path)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _recorded_sha256(dest):
    try:
        with open(dest + ".sha256", encoding="utf-8") as f:
            return _normalise_hex(f.read().split()[0], dest + ".sha256", 64)
    except FileNotFoundError:
        return None
    except (IndexError, ValueError) as e:
        raise FetchError("cannot read the recorded checksum %s.sha256: %s" % (dest, e))


def _is_verified(dest, sha256):
    """True if DEST exists and its verification stamp matches the file as it is now."""
    stamp = _read_json(dest + ".verified")
    if not stamp or not os.path.isfile(dest):
        return False
    return stamp.get("sha256") == sha256 and stamp.get("stat") == _stat_key(dest)


def _mark_verified(dest, sha256):
    _write_atomic(dest + ".verified", json.dumps({"sha256": sha256, "stat": _stat_key(dest)}) + "\n")


def _check(path, dest, sha256, md5):
    """Hash PATH (the candidate for DEST); return its sha256 or raise ChecksumMismatch."""
    actual = file_hash(path, "sha256")
    if sha256 and actual != sha256:
        raise ChecksumMismatch(dest, "sha256", sha256, actual)
    if md5:
        actual_md5 = file_hash(path, "md5")
        if actual_md5 != md5:
            raise ChecksumMismatch(dest, "md5", md5, actual_md5)
    return actual


def mirror_dir(mirror=None):
    """The mirror directory in effect: the argument, else $ABC_DATA_MIRROR, else None."""
    return mirror or os.environ.get(MIRROR_ENV) or None


def fetch(url, dest, sha256=None, md5=None, record_sha256=False, mirror=None, size=None,
          retries=5, pinned_in=None):
    """Make DEST a verified copy of URL and return its sha256.

    Exactly one source of truth for the checksum is required: ``sha256`` (recorded in the
    recipe), or ``record_sha256=True`` (hash of the first complete download, stored in
    ``DEST.sha256``; optionally cross-checked against a published ``md5`` first).
    ``pinned_in`` names where ``sha256`` is pinned (a checksum file), for the mismatch message.
    """
    if sha256:
        sha256 = _normalise_hex(sha256, "sha256", 64)
    if md5:
        md5 = _normalise_hex(md5, "md5", 32)
    if not sha256 and not record_sha256:
        raise ValueError("fetch(%s): give the expected sha256, or record_sha256=True" % url)
    dest = os.path.abspath(dest)
    name = os.path.basename(urllib.parse.urlparse(url).path)
    if not name:
        raise ValueError("cannot derive a file name from the URL %r" % url)
    os.makedirs(os.path.dirname(dest), exist_ok=True)

    expected = sha256 or _recorded_sha256(dest)
    origin = _origin(dest, pinned_in if sha256 else None, recorded=bool(expected and not sha256))

    if os.path.exists(dest):
        if expected and _is_verified(dest, expected):
            _log("%s: already verified" % os.path.basename(dest))
            return expected
        # Present but not (or no longer) marked verified: check it, never delete it.
        try:
            actual = _check(dest, dest, expected, md5 if not expected else None)
        except ChecksumMismatch as e:
            raise e.again(detail="the existing file was left in place; remove it to download again",
                          origin=origin) from None
        if not expected:
            _record(dest, actual, md5)
        _mark_verified(dest, actual)
        _log("%s: verified existing file" % os.path.basename(dest))
        return actual

    part = dest + ".part"
    mirror = mirror_dir(mirror)
    if mirror:
        source = os.path.join(mirror, name)
        if not os.path.isfile(source):
            raise FetchError("mirror %s has no file %s (needed for %s)" % (mirror, name, url))
        _log("copying %s from the mirror %s" % (name, mirror))
        shutil.copyfile(source, part)
    else:
        _log("downloading %s -> %s" % (url, dest))
        download(url, part, expected_size=size, retries=retries)

    if size is not None and os.path.getsize(part) != size:
        got = os.path.getsize(part)
        if got < size and not mirror:
            raise FetchError("download of %s stopped at %d of %d bytes; re-run to resume" % (url, got, size))
        actual = file_hash(part, "sha256")
        bad = dest + ".corrupt"
        os.replace(part, bad)
        raise ChecksumMismatch(dest, "sha256", expected or "(not recorded yet)", actual, kept_as=bad,
                               detail="%d bytes, expected %d" % (got, size), origin=origin)
    try:
        actual = _check(part, dest, expected, md5 if not expected else None)
    except ChecksumMismatch as e:
        bad = dest + ".corrupt"
        os.replace(part, bad)
        raise e.again(kept_as=bad, origin=origin) from None
    os.replace(part, dest)
    if not expected:
        _record(dest, actual, md5)
    _mark_verified(dest, actual)
    _log("%s: ok (sha256 %s)" % (os.path.basename(dest), actual))
    return actual


def _resolve(args):
    """fetch() keyword arguments for the CLI's checksum options (given, pinned or recorded)."""
    from data_prep.lib.checksums import fetch_options

    if args.sha256 or args.record_sha256:
        return dict(sha256=args.sha256, md5=args.md5, record_sha256=args.record_sha256, size=args.size)
    name = os.path.basename(urllib.parse.urlparse(args.url).path)
    options = fetch_options(name, args.checksums)
    if args.size is not None:
        options["size"] = args.size
    return options


def main(argv=None):
    parser = module_parser("data_prep.lib.fetch", __doc__)
    parser.add_argument("url", help="where the file is published")
    parser.add_argument("dest", help="destination path of the file")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--sha256", help="expected sha256 (64 hex digits)")
    group.add_argument("--record-sha256", action="store_true",
                       help="checksum not known in advance: record the first download's sha256 in "
                            "DEST.sha256 (with a warning) and verify against it afterwards")
    group.add_argument("--checksums", action="append", metavar="FILE",
                       help="checksum file(s) of the recipe (data_prep/<recipe>/SHA256SUMS); the first "
                            "listing the URL's file name pins it, a name listed nowhere is recorded")
    parser.add_argument("--md5", help="published md5 to check the first download against "
                                      "(only with --record-sha256)")
    parser.add_argument("--size", type=int, help="expected size in bytes (optional extra check)")
    parser.add_argument("--mirror", help="take the file from this directory (same file name as the "
                                         "URL's) instead of the network; default $%s" % MIRROR_ENV)
    parser.add_argument("--retries", type=int, default=5, help="network retries (default 5)")
    args = parser.parse_args(argv)
    if args.md5 and not args.record_sha256:
        parser.error("--md5 is only used with --record-sha256 (with --sha256 the sha256 is checked)")
    try:
        digest = fetch(args.url, args.dest, mirror=args.mirror, retries=args.retries, **_resolve(args))
    except ValueError as e:
        print("fetch: ERROR: %s" % e, file=sys.stderr)
        return 2
    except ChecksumMismatch as e:
        print("fetch: ERROR: %s" % e, file=sys.stderr)
        return 1
    except FetchError as e:
        print("fetch: ERROR: %s" % e, file=sys.stderr)
        return 3
    print(digest)  # the verified sha256 on stdout (messages go to stderr), for recipes to use
    return 0


if __name__ == "__main__":
    sys.exit(main())
