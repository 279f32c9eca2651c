"""Fetch a file to a destination with resume, sha256 verification and an offline mirror.

Used by every data recipe, from Python (``fetch(...)``) or from bash::

    python -m data_prep.lib.fetch URL DEST --sha256 HEX
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
- Record-on-first-download (``--record-sha256``): for files whose checksum cannot be known in
  advance, the first complete download is hashed (and, if ``--md5`` is given, checked against
  that published md5 first) and its sha256 written to ``DEST.sha256``. Later runs verify against
  that file. ``--sha256`` always wins over a recorded value.
- Mirror (``--mirror DIR`` or the environment variable ``ABC_DATA_MIRROR``): the file is copied
  from ``DIR/<file name of the URL>`` instead of being downloaded, and verified the same way.
  Nothing touches the network in that mode; a file missing from the mirror is an error.

The CLI prints the verified sha256 on stdout; messages go to stderr.
Exit status of the CLI: 0 ok, 1 verification failure, 2 usage error, 3 download/mirror failure.
Standard library only.
"""

import argparse
import hashlib
import http.client
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

MIRROR_ENV = "ABC_DATA_MIRROR"
CHUNK = 1 << 20
USER_AGENT = "abc-fairseq-data-prep/1 (python urllib)"


class FetchError(Exception):
    """Download or mirror failure (network, missing mirror file, HTTP error)."""


class ChecksumMismatch(FetchError):
    """The file's hash differs from the expected one."""

    def __init__(self, path, algorithm, expected, actual, kept_as=None, detail=None):
        self.path, self.algorithm, self.expected, self.actual = path, algorithm, expected, actual
        msg = "%s mismatch for %s: expected %s, got %s" % (algorithm, path, expected, actual)
        if detail:
            msg += " (%s)" % detail
        if kept_as:
            msg += " (the bad bytes are kept as %s for inspection)" % kept_as
        super().__init__(msg)


def _log(msg):
    print("fetch: %s" % msg, file=sys.stderr, flush=True)


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


def _download(url, part, expected_size=None, retries=5, timeout=60):
    """Append the rest of URL to PART (resuming), retrying transient failures."""
    attempt = 0
    while True:
        have = os.path.getsize(part) if os.path.exists(part) else 0
        if expected_size is not None and have == expected_size:
            return
        if expected_size is not None and have > expected_size:
            _log("%s is larger than the expected %d bytes; starting over" % (part, expected_size))
            os.remove(part)
            have = 0
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        if have:
            request.add_header("Range", "bytes=%d-" % have)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status = getattr(response, "status", 200)
                if have and status == 206:
                    mode = "ab"
                    _log("resuming %s at byte %d" % (url, have))
                else:
                    if have:  # the server ignored the Range header: it is sending everything
                        _log("server did not resume %s; downloading it from the start" % url)
                    mode, have = "wb", 0
                total = response.headers.get("Content-Length")
                total = int(total) + have if total is not None else expected_size
                done = _copy_stream(response, part, mode, have, total, url)
            if total is None or done >= total:
                return
            # The connection ended early without an error: resume like after a failure.
            err = OSError("connection closed after %d of %d bytes" % (done, total))
        except urllib.error.HTTPError as e:
            if e.code == 416 and have:  # range not satisfiable: the part file is already complete
                return
            if e.code in (404, 403, 410):
                raise FetchError("HTTP %d for %s" % (e.code, url))
            err = e
        except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError) as e:
            err = e
        attempt += 1
        if attempt > retries:
            raise FetchError("giving up on %s after %d attempts: %s (the partial file %s is kept; "
                             "re-run to resume)" % (url, attempt, err, part))
        wait = min(60, 2 ** attempt)
        _log("%s: %s; retrying in %ds" % (url, err, wait))
        time.sleep(wait)


def _copy_stream(response, part, mode, have, total, label):
    done, last_report = have, time.monotonic()
    with open(part, mode) as out:
        for block in iter(lambda: response.read(CHUNK), b""):
            out.write(block)
            done += len(block)
            now = time.monotonic()
            if now - last_report > 10:
                last_report = now
                pct = " (%.1f%%)" % (100.0 * done / total) if total else ""
                _log("%s: %.1f MB%s" % (label, done / 1e6, pct))
    return done


def mirror_dir(mirror=None):
    """The mirror directory in effect: the argument, else $ABC_DATA_MIRROR, else None."""
    return mirror or os.environ.get(MIRROR_ENV) or None


def fetch(url, dest, sha256=None, md5=None, record_sha256=False, mirror=None, size=None,
          retries=5):
    """Make DEST a verified copy of URL and return its sha256.

    Exactly one source of truth for the checksum is required: ``sha256`` (recorded in the
    recipe), or ``record_sha256=True`` (hash of the first complete download, stored in
    ``DEST.sha256``; optionally cross-checked against a published ``md5`` first).
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

    if os.path.exists(dest):
        if expected and _is_verified(dest, expected):
            _log("%s: already verified" % os.path.basename(dest))
            return expected
        # Present but not (or no longer) marked verified: check it, never delete it.
        try:
            actual = _check(dest, dest, expected, md5 if not expected else None)
        except ChecksumMismatch as e:
            raise ChecksumMismatch(e.path, e.algorithm, e.expected, e.actual,
                                   detail="the existing file was left in place; remove it to download "
                                          "again") from None
        if not expected:
            _write_atomic(dest + ".sha256", "%s  %s\n" % (actual, os.path.basename(dest)))
            _log("%s: recorded sha256 %s (first verification)" % (os.path.basename(dest), actual))
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
        _download(url, part, expected_size=size, retries=retries)

    if size is not None and os.path.getsize(part) != size:
        got = os.path.getsize(part)
        if got < size and not mirror:
            raise FetchError("download of %s stopped at %d of %d bytes; re-run to resume" % (url, got, size))
        actual = file_hash(part, "sha256")
        bad = dest + ".corrupt"
        os.replace(part, bad)
        raise ChecksumMismatch(dest, "sha256", expected or "(not recorded yet)", actual, kept_as=bad,
                               detail="%d bytes, expected %d" % (got, size))
    try:
        actual = _check(part, dest, expected, md5 if not expected else None)
    except ChecksumMismatch as e:
        bad = dest + ".corrupt"
        os.replace(part, bad)
        raise ChecksumMismatch(e.path, e.algorithm, e.expected, e.actual, kept_as=bad) from None
    os.replace(part, dest)
    if not expected:
        _write_atomic(dest + ".sha256", "%s  %s\n" % (actual, os.path.basename(dest)))
        _log("%s: sha256 %s recorded in %s.sha256 (record-on-first-download)"
             % (os.path.basename(dest), actual, os.path.basename(dest)))
    _mark_verified(dest, actual)
    _log("%s: ok (sha256 %s)" % (os.path.basename(dest), actual))
    return actual


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m data_prep.lib.fetch", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url", help="where the file is published")
    parser.add_argument("dest", help="destination path of the file")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--sha256", help="expected sha256 (64 hex digits), as recorded in the recipe")
    group.add_argument("--record-sha256", action="store_true",
                       help="checksum not known in advance: record the first download's sha256 in "
                            "DEST.sha256 and verify against it afterwards")
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
        digest = fetch(args.url, args.dest, sha256=args.sha256, md5=args.md5,
                       record_sha256=args.record_sha256, mirror=args.mirror, size=args.size,
                       retries=args.retries)
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
