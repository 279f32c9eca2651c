"""Parent side of one measurement: start ``_worker`` in a fresh Python process, feed it the spec,
watch its progress lines, and turn hangs and crashes into result records instead of exceptions."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import Optional

from ._worker import MARKER

SETUP_SECONDS = 300.0  # from process start to the case being ready: imports, prime, inputs
STDERR_TAIL_CHARS = 1500


def _child_env() -> dict:
    """This environment with the repository root (``benchmarks`` and ``abc_fairseq``) importable."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _pump(stream, sink) -> None:
    """Feed each line of ``stream`` to ``sink``, then ``None`` at end of file."""
    for line in iter(stream.readline, ""):
        sink(line)
    stream.close()
    sink(None)


def _describe_exit(code: int) -> str:
    if code >= 0:
        return f"worker exited with code {code} before reporting a result"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"worker killed by {name}" + (" (likely out of memory)" if -code == signal.SIGKILL else "")


def run_worker(spec: dict, call_seconds: Optional[float], setup_seconds: float = SETUP_SECONDS) -> dict:
    """Run one measurement in a subprocess and return the worker's result fields.

    ``call_seconds``: the longest the worker may go without progress once its case is ready
    (one call, plus slack); None waits forever. A worker that goes silent longer is killed and
    reported with status ``timeout``; one that dies is reported with status ``crashed``.
    """
    proc = subprocess.Popen([sys.executable, "-m", f"{__package__}._worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env())
    events: "queue.Queue[Optional[dict]]" = queue.Queue()
    stderr_tail: deque = deque(maxlen=200)

    def on_stdout(line: Optional[str]) -> None:
        if line is None or line.startswith(MARKER):
            events.put(line and json.loads(line[len(MARKER):]))

    threads = [threading.Thread(target=_pump, args=(proc.stdout, on_stdout), daemon=True),
               threading.Thread(target=_pump, args=(proc.stderr, lambda line: line and stderr_tail.append(line)),
                                daemon=True)]
    for thread in threads:
        thread.start()
    try:
        proc.stdin.write(json.dumps(spec))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the worker died at once; reported below from its exit code
    result, timeout, stage, ended = None, setup_seconds, "setting up (imports, inputs)", False
    try:
        while True:
            try:
                event = events.get(timeout=timeout)
            except queue.Empty:
                return {"status": "timeout", "message": f"no progress for {timeout:.0f} s while {stage}; worker killed"}
            if event is None:  # end of the worker's stdout: it is exiting
                ended = True
                break
            if event["event"] == "result":
                result = {k: v for k, v in event.items() if k != "event"}
            elif event["event"] == "ready":
                timeout, stage = call_seconds, "running a call"
    finally:
        if not ended:  # timed out or interrupted (e.g. Ctrl-C): do not leave the worker behind
            proc.kill()
        proc.wait()
        for thread in threads:
            thread.join()
    tail = "".join(stderr_tail)[-STDERR_TAIL_CHARS:]
    if result is None:
        last = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
        return {"status": "crashed", "message": _describe_exit(proc.returncode) + (f": {last}" if last else ""),
                "stderr_tail": tail}
    if result.get("status") not in ("ok", "skipped"):
        result["stderr_tail"] = tail
    return result
