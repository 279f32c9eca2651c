"""What a suite declares (``Suite``) and the one path every suite runs (``run_suite``): flags
checked, one fresh worker process per case, the JSON rewritten after each case (an interrupted run
keeps its results), then the report, its Markdown copy and the plot. ``--rounds`` R runs every case
once per round and pools the timed calls, so that every case sees the same machine drift."""

import argparse
import collections
import importlib
import json
import math
import os
import statistics
import subprocess
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

from . import SUITES, flags, report
from .environment import environment_info
from .report import MIB, Column, Plot, Relative, Row

MARKER = "@@bench "  # prefixes the worker's result line on its stdout
SETUP_SECONDS = 300.0  # a worker's imports, priming run and inputs


class Measurement(NamedTuple):
    """One case: its progress ``label``, the ``params`` its worker builds it from and the
    ``fields`` that identify it in its row (method, N, ...)."""

    label: str
    params: dict
    fields: dict


class Case(NamedTuple):
    """What a worker measures: ``run``, the work once (inputs already exist); ``info``, JSON facts
    reported with the measurement (shapes, ...; ``run`` may add to them)."""

    run: Callable[[], None]
    info: Dict[str, Any]


class CaseUnavailable(Exception):
    """The case cannot be built here (no such kernel on this device, ...): reported as skipped."""


class Suite:
    """A subcommand: its flags (``add_arguments``, ``validate``: ``parser.error`` names the flag),
    its cases (``measurements``), the worker side (``build_case``; ``prime`` first runs it with the
    ``tiny`` params, so that thread pools and lazy kernels exist before the memory baseline) and the
    report: ``derive(row, seconds)`` adds the suite's numbers (``seconds``: the median timed call or
    None), ``progress`` formats a measured row (missing keys read as 0), ``columns``, ``relative``
    (ratios to a reference row of the same ``group``), ``header``, ``notes``, ``targets``, ``plot``.
    ``call`` names one timed call; ``baseline`` says what exists when memory is baselined; ``cpu_peak``:
    False where one call makes too many allocations for the CPU probe's log (docs/benchmarks.md)."""

    name = description = progress = ""
    call, baseline, group, cpu_peak = "call", "the inputs exist", "N", True
    columns: Sequence[Column] = ()
    relative: Sequence[Relative] = ()
    tiny: Dict[str, Any] = {}
    plot: Optional[Plot] = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    def validate(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
        """Check flags that depend on each other."""

    def measurements(self, args: argparse.Namespace) -> List[Measurement]:
        raise NotImplementedError

    def build_case(self, params: dict, device) -> Case:
        raise NotImplementedError

    def prime(self, params: dict, device) -> None:
        if self.tiny:
            self.build_case(dict(params, **self.tiny), device).run()

    def derive(self, row: Row, seconds: Optional[float]) -> None:
        """Add the suite's numbers (speeds, per-token times) to ``row``."""

    def header(self, config: dict) -> str:
        return ""

    def notes(self, config: dict, rows: List[Row]) -> List[str]:
        return []

    def targets(self, rows: List[Row], config: dict) -> List[dict]:
        return []


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_worker(spec: dict, timeout: float) -> dict:
    """One case in ``python -m benchmarks.worker`` (spec on stdin, result on stdout); a worker
    still running after ``timeout`` seconds is killed (timeout), one that dies is ``crashed``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    env.setdefault("MPLBACKEND", "Agg")
    try:
        proc = subprocess.run([sys.executable, "-m", f"{__package__}.worker"], input=json.dumps(spec), env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"worker killed after {timeout:.0f} s"}
    tail = proc.stderr[-1500:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if lines:
        result = json.loads(lines[-1][len(MARKER):])
        return result if result.get("status") in ("ok", "skipped") else dict(result, stderr_tail=tail)
    code, why = proc.returncode, f"worker exited with code {proc.returncode} before reporting a result"
    if code < 0:  # SIGKILL: most often the system's out-of-memory killer
        why = f"worker killed by signal {-code}" + (" (SIGKILL: likely out of memory)" if -code == 9 else "")
    last = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
    return {"status": "crashed", "message": why + (f": {last}" if last else ""), "stderr_tail": tail}


def pool_rounds(earlier: Optional[dict], later: dict) -> dict:
    """One case's results over rounds: the timed calls of every round that measured, the rest from
    the first; a failed round is counted, not pooled; a case failed in its first round stays failed."""
    if earlier is None:
        return {**later, "rounds": 1}
    if earlier.get("status") != "ok":
        return earlier
    if later.get("status") != "ok":
        return {**earlier, "failed_rounds": earlier.get("failed_rounds", 0) + 1}
    return {**earlier, "times_s": earlier["times_s"] + later["times_s"], "rounds": earlier["rounds"] + 1}


def make_row(suite: Suite, item: Measurement, result: dict) -> Row:
    """The case's fields, the worker's result and the suite's numbers."""
    row = {**item.fields, **result}
    if "peak_bytes" in result:
        row["peak_mib"] = result["peak_bytes"] / MIB
    times = result.get("times_s")
    suite.derive(row, statistics.median(times) if row.get("status") == "ok" and times else None)
    return row


def measure(suite: Suite, args: argparse.Namespace, record: dict) -> None:
    """Every case in its own worker, ``--rounds`` times over, rewriting the JSON after each."""
    items, rows = suite.measurements(args), record["results"]
    pooled: List[Optional[dict]] = [None] * len(items)
    rounds, total = args.rounds, len(items)
    calls = args.warmup + max(args.repeats, 1) + 1 + args.profile  # the memory call, the profiled one
    budget = SETUP_SECONDS + calls * (args.max_seconds + 30)
    shared = {key: getattr(args, key) for key in ("device", "threads", "seed", "repeats", "warmup", "max_seconds",
                                                  "profile")}
    for r in range(rounds):
        for i, item in enumerate(items):
            if pooled[i] is not None and pooled[i].get("status") != "ok":
                continue  # failed in its first round: not retried
            tag = f"[{i + 1}/{total}]" if rounds == 1 else f"[round {r + 1}/{rounds}, {i + 1}/{total}]"
            progress(f"{tag} {item.label} ...")
            result = run_worker({"suite": suite.name, "params": item.params, **shared}, budget)
            pooled[i] = pool_rounds(pooled[i], result)
            rows[i:i + 1] = [make_row(suite, item, pooled[i])]
            done = (suite.progress.format_map(collections.defaultdict(int, rows[i])) if result.get("status") == "ok"
                    else f"{result.get('status')}: {report.one_line(result.get('message'), 200)}")
            progress(f"{tag} {item.label}: {done}")
            write_json(os.path.join(args.out_dir, f"{suite.name}.json"), record)


def prepare(suite: Suite, args: argparse.Namespace) -> None:
    """The checks every suite shares, then the suite's own; errors name the flag."""
    flags.check_common_flags(args, args._parser)
    suite.validate(args, args._parser)


def run_suite(suite: Suite, args: argparse.Namespace) -> int:
    """Check the flags, measure, print the report, write ``<suite>.json``, ``.md`` and ``.png``."""
    prepare(suite, args)
    env = environment_info("python -m benchmarks", args.argv, args.device)
    config = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "argv"}
    record = {"benchmark": suite.name, "complete": False, "config": config, "environment": env, "results": []}
    measure(suite, args, record)
    rows = record["results"]
    for reference, pairs in suite.relative:
        report.add_relative(rows, reference, pairs, suite.group)
    probes = sorted({row["memory_probe"] for row in rows if row.get("memory_probe")})
    record.update(complete=True, targets=suite.targets(rows, config), memory_probes=probes)
    text = report.render(suite, record)
    print(text)
    paths = {ext: os.path.join(args.out_dir, f"{suite.name}.{ext}") for ext in ("json", "md", "png")}
    write_json(paths["json"], record)
    with open(paths["md"], "w") as handle:
        handle.write(text)
    drawn, written = [row for row in rows if suite.plot and suite.plot.select(row)], [paths["json"], paths["md"]]
    if drawn and not args.no_plot:
        report.save_plot(paths["png"], suite, drawn, config)
        written.append(paths["png"])
    progress("wrote " + ", ".join(written))
    return 0


def _finite(value):
    """JSON has no NaN/inf: None instead, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return [_finite(v) for v in value] if isinstance(value, (list, tuple)) else value


def write_json(path: str, data) -> None:
    """``data`` as indented JSON, atomically (a crash never leaves half a file)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as handle:
            json.dump(_finite(data), handle, indent=2, allow_nan=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows defaults other than None and False (whose help says what happens), keeps description paragraphs."""

    def _get_help_string(self, action):
        return action.help if action.default in (None, False) else super()._get_help_string(action)

    def _fill_text(self, text, width, indent):
        return "\n\n".join(super(_HelpFormatter, self)._fill_text(part, width, indent) for part in text.split("\n\n"))


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per suite of ``SUITES``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description="Benchmarks for abc-fairseq (ABC, "
                                     "Attention with Bounded-memory Control). docs/benchmarks.md.")
    subparsers = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", required=True)
    for name in SUITES:
        suite = importlib.import_module(f"{__package__}.{name}").SUITE
        sub = subparsers.add_parser(name, help=suite.description.splitlines()[0], description=suite.description,
                                    formatter_class=_HelpFormatter)
        suite.add_arguments(sub)
        sub.set_defaults(_suite=suite, _parser=sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m benchmarks <suite> [flags]``: parse ``argv`` (default: ``sys.argv[1:]``), run the suite."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    return run_suite(args._suite, args)
