"""The download helper (data_prep/lib/fetch.py): mirrors, pinned and recorded checksums, and resume
over HTTP against a local server (with Range, and a server that ignores it)."""

import hashlib
import http.server
import os
import re
import sys
import threading

import pytest
from mt_helpers import _run, _sha256

from data_prep.lib import fetch as fetch_mod
from data_prep.lib import http_get

# --- the download helper --------------------------------------------------------------------------

def test_fetch_mirror_verifies_and_is_idempotent(tmp_path, capsys):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "a.tgz").write_bytes(b"payload" * 1000)
    digest = _sha256(mirror / "a.tgz")
    dest = tmp_path / "dl" / "a.tgz"
    assert fetch_mod.fetch("https://example.invalid/x/a.tgz", dest, sha256=digest, mirror=mirror) == digest
    assert dest.read_bytes() == (mirror / "a.tgz").read_bytes()
    mtime = dest.stat().st_mtime_ns
    capsys.readouterr()
    # Second call: nothing is copied or re-hashed (the mirror could even be gone).
    (mirror / "a.tgz").unlink()
    assert fetch_mod.fetch("https://example.invalid/x/a.tgz", dest, sha256=digest, mirror=mirror) == digest
    assert "already verified" in capsys.readouterr().err
    assert dest.stat().st_mtime_ns == mtime


def test_fetch_mismatch_names_file_and_both_hashes_and_keeps_verified_files(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "good.tgz").write_bytes(b"good")
    (mirror / "bad.tgz").write_bytes(b"corrupted")
    good = fetch_mod.fetch("https://h/good.tgz", tmp_path / "dl" / "good.tgz", sha256=_sha256(mirror / "good.tgz"),
                           mirror=mirror)
    expected = hashlib.sha256(b"original").hexdigest()
    proc = _run([sys.executable, "-m", "data_prep.lib.fetch", "https://h/bad.tgz", tmp_path / "dl" / "bad.tgz",
                 "--sha256", expected, "--mirror", mirror], check=False)
    assert proc.returncode == 1
    assert "bad.tgz" in proc.stderr and expected in proc.stderr and _sha256(mirror / "bad.tgz") in proc.stderr
    assert not (tmp_path / "dl" / "bad.tgz").exists()
    assert (tmp_path / "dl" / "bad.tgz.corrupt").exists()
    assert _sha256(tmp_path / "dl" / "good.tgz") == good  # untouched


def test_fetch_record_on_first_download_then_verify(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "r.tgz").write_bytes(b"first")
    dest = tmp_path / "dl" / "r.tgz"
    md5 = hashlib.md5(b"first").hexdigest()
    digest = fetch_mod.fetch("https://h/r.tgz", dest, record_sha256=True, md5=md5, mirror=mirror)
    assert (tmp_path / "dl" / "r.tgz.sha256").read_text().split()[0] == digest
    # A later download of different bytes is checked against the recorded value.
    dest.unlink()
    (mirror / "r.tgz").write_bytes(b"second")
    with pytest.raises(fetch_mod.ChecksumMismatch) as err:
        fetch_mod.fetch("https://h/r.tgz", dest, record_sha256=True, mirror=mirror)
    assert digest in str(err.value) and "r.tgz" in str(err.value)
    # A published md5 that does not match stops the first recording.
    with pytest.raises(fetch_mod.ChecksumMismatch, match="md5"):
        fetch_mod.fetch("https://h/r.tgz", tmp_path / "other" / "r.tgz", record_sha256=True, md5=md5, mirror=mirror)
    assert not (tmp_path / "other" / "r.tgz.sha256").exists()


def test_fetch_missing_mirror_file_is_a_clear_error(tmp_path):
    proc = _run([sys.executable, "-m", "data_prep.lib.fetch", "https://h/none.tgz", tmp_path / "none.tgz",
                 "--record-sha256"], check=False, ABC_DATA_MIRROR=str(tmp_path))
    assert proc.returncode == 3 and "none.tgz" in proc.stderr and str(tmp_path) in proc.stderr


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    payload = b""
    honour_range = True
    cut_first_response = False  # send half of the first response, then close the connection
    requests = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        rng = self.headers.get("Range")
        type(self).requests.append(rng)
        data, status = self.payload, 200
        if rng and self.honour_range:
            start = int(re.match(r"bytes=(\d+)-", rng).group(1))
            data, status = self.payload[start:], 206
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.cut_first_response and len(type(self).requests) == 1:
            self.wfile.write(data[:len(data) // 2])
            self.close_connection = True
            return
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_fetch_resumes_a_connection_closed_early(tmp_path, monkeypatch):
    monkeypatch.setattr(http_get.time, "sleep", lambda s: None)  # no back-off wait in the test
    payload = os.urandom(200_000)
    handler = type("H", (_RangeHandler,), {"payload": payload, "cut_first_response": True, "requests": []})
    server = _serve(handler)
    try:
        url = "http://127.0.0.1:%d/x/early.bin" % server.server_address[1]
        fetch_mod.fetch(url, tmp_path / "early.bin", sha256=hashlib.sha256(payload).hexdigest())
    finally:
        server.shutdown()
    assert (tmp_path / "early.bin").read_bytes() == payload
    assert handler.requests == [None, "bytes=100000-"]


@pytest.mark.parametrize("honour_range", [True, False])
def test_fetch_resumes_over_http(tmp_path, honour_range):
    payload = os.urandom(300_000)
    handler = type("H", (_RangeHandler,), {"payload": payload, "honour_range": honour_range, "requests": []})
    server = _serve(handler)
    try:
        dest = tmp_path / "big.bin"
        (tmp_path / "big.bin.part").write_bytes(payload[:123_456])  # an interrupted download
        url = "http://127.0.0.1:%d/files/big.bin" % server.server_address[1]
        digest = fetch_mod.fetch(url, dest, sha256=hashlib.sha256(payload).hexdigest())
    finally:
        server.shutdown()
    assert digest == hashlib.sha256(payload).hexdigest() and dest.read_bytes() == payload
    assert handler.requests == ["bytes=123456-"]
    assert not (tmp_path / "big.bin.part").exists()
