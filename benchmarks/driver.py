"""The one path of every suite (``run_suite``): flags validated, one fresh worker process per case with
progress lines, a JSON record rewritten after each case (partial results survive an interrupted
run), then the printed report, the Markdown copy and the plot.

With ``rounds`` > 1 every case runs once per round, round after round, and its timed calls are
pooled: on shared machines whose speed drifts by 10-30% over minutes, a case timed in one stretch
can land in a fast or a slow phase, while interleaved rounds expose every case to the same drift,
which is what ratios between cases need."""

import argparse
import json
import math
import os
import sys
from typing import Callable, List, NamedTuple, Optional

from .environment import environment_info
from .runner import run_worker

PROG = "python -m benchmarks"


class Measurement(NamedTuple):
    """One worker run: ``label`` for progress lines, the worker ``spec`` and how its result
    becomes a row of the record (not to be confused with ``_worker.Case``, what a worker builds)."""

    label: str
    spec: dict
    to_row: Callable[[dict], dict]


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def config_of(args: argparse.Namespace) -> dict:
    """The flags as recorded in the JSON (internal attributes left out)."""
    return {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "argv"}


def worker_spec(args: argparse.Namespace, builder: str, params: dict) -> dict:
    """A worker spec with the flags every subcommand shares (device, threads, timing, memory)."""
    return {
        "builder": builder, "params": params,
        "device": args.device, "threads": args.threads, "seed": args.seed,
        "repeats": args.repeats, "warmup": args.warmup, "max_seconds": args.max_seconds,
        "cpu_memory_probe": args.cpu_memory_probe,
        "max_memory_bytes": int(args.max_memory_gib * 2 ** 30) if args.max_memory_gib else None,
    }


def failure(row: dict) -> str:
    """'status: message' of a case that did not measure."""
    return f"{row.get('status')}: {' '.join(str(row.get('message', '')).split())[:200]}"


def pool_rounds(earlier: Optional[dict], later: dict) -> dict:
    """One case's worker results over rounds: the timed calls of every round that measured,
    everything else (memory, info) from the first. A round that fails is counted, not pooled; a
    case that failed in its first round stays failed."""
    if earlier is None:
        return {**later, "rounds": 1}
    if earlier.get("status") != "ok":
        return earlier
    if later.get("status") != "ok":
        return {**earlier, "failed_rounds": earlier.get("failed_rounds", 0) + 1}
    return {**earlier, "times_s": earlier["times_s"] + later["times_s"], "rounds": earlier["rounds"] + 1}


def measure(benchmark: str, args: argparse.Namespace, env: dict, measurements: List[Measurement],
            describe: Callable[[dict], str], rounds: int = 1) -> dict:
    """Run every measurement in its own worker, ``rounds`` times over (see the module notes);
    returns the record {benchmark, complete, config, environment, results}, written to
    ``<out-dir>/<benchmark>.json`` after each case."""
    rows: List[dict] = []
    record = {"benchmark": benchmark, "complete": False, "config": config_of(args), "environment": env,
              "results": rows}
    json_path = os.path.join(args.out_dir, f"{benchmark}.json")
    total = len(measurements)
    pooled: List[Optional[dict]] = [None] * total
    for r in range(rounds):
        for i, item in enumerate(measurements):
            tag = f"[{i + 1}/{total}]" if rounds == 1 else f"[round {r + 1}/{rounds}, {i + 1}/{total}]"
            if pooled[i] is not None and pooled[i].get("status") != "ok":
                continue  # failed in its first round: not retried
            progress(f"{tag} {item.label} ...")
            result = run_worker(item.spec, call_seconds=args.max_seconds * 1.5 + 30)
            pooled[i] = pool_rounds(pooled[i], result)
            row = item.to_row(pooled[i])
            if i < len(rows):
                rows[i] = row
            else:
                rows.append(row)
            ok = result.get("status") == "ok"
            progress(f"{tag} {item.label}: {describe(row) if ok else failure(result)}")
            write_json(json_path, record)
    return record


def publish(benchmark: str, args: argparse.Namespace, record: dict, text: str, targets: List[dict],
            plot: Optional[Callable[[str], None]]) -> None:
    """Print the report, complete the record and write ``<benchmark>.{json,md,png}``."""
    print(text)
    rows = record["results"]
    record.update(complete=True, targets=targets, memory_probes=memory_probes(rows))
    written = [os.path.join(args.out_dir, f"{benchmark}.{ext}") for ext in ("json", "md")]
    write_json(written[0], record)
    write_text(written[1], text)
    if plot is not None and not args.no_plot:
        png_path = os.path.join(args.out_dir, f"{benchmark}.png")
        try:
            plot(png_path)
            written.append(png_path)
        except ImportError as exc:
            progress(f"warning: no plot written, matplotlib is not importable: {exc}")
    progress("wrote " + ", ".join(written))


def memory_probes(rows: List[dict]) -> List[str]:
    """The CPU/GPU memory probes the rows were measured with."""
    return sorted({row["memory_probe"] for row in rows if row.get("memory_probe")})


class Summary(NamedTuple):
    """What a suite makes of its measured rows: the printed report (targets included), the
    targets for the JSON record, and a function drawing the PNG (None: no plot)."""

    text: str
    targets: List[dict]
    plot: Optional[Callable[[str], None]]


def run_suite(suite, args: argparse.Namespace) -> int:
    """The one path of every subcommand: validate the flags, measure every case of the suite
    in its own worker, print and write the report. ``suite`` is a module with ``NAME``,
    ``validate(args, parser)``, ``measurements(args)``, ``describe(row)`` and
    ``summarise(rows, env, config, memory_probes) -> Summary``."""
    suite.validate(args, args._parser)
    env = environment_info(PROG, args.argv, args.device)
    record = measure(suite.NAME, args, env, suite.measurements(args), suite.describe,
                     rounds=getattr(args, "rounds", 1))
    rows = record["results"]
    summary = suite.summarise(rows, env, record["config"], memory_probes(rows))
    publish(suite.NAME, args, record, summary.text, summary.targets, summary.plot)
    return 0


def header_timing(config: dict) -> str:
    """How the report's times were taken: 'median of R after W warmup[, rounds]'."""
    rounds = config.get("rounds", 1)
    pooled = f" per round, {rounds} interleaved rounds pooled" if rounds > 1 else ""
    return f"median of {config['repeats']} after {config['warmup']} warmup{pooled}"


def _finite(value):
    """JSON has no NaN/inf: turn them into None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_json(path: str, data) -> None:
    """Write ``data`` as indented JSON, atomically (a crash never leaves half a file)."""
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


def write_text(path: str, text: str) -> None:
    """Write a text file, creating its directory."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
