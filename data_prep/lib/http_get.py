"""Resumable HTTP(S) download into a ``.part`` file (the network half of ``data_prep.lib.fetch``)."""

import http.client
import os
import sys
import time
import urllib.error
import urllib.request

from data_prep.lib.errors import FetchError

CHUNK = 1 << 20
USER_AGENT = "abc-fairseq-data-prep/1 (python urllib)"


def _log(msg):
    print("fetch: %s" % msg, file=sys.stderr, flush=True)


def download(url, part, expected_size=None, retries=5, timeout=60):
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
