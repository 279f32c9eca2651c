"""Write the uptraining comparison (docs/uptraining/results.{md,json,png}) and the seeds' table of
softmax, ABC and GSA at the quickstart's budget (docs/gsa/seeds.{md,json,png}) from the run folders
of ``python -m experiments.uptraining.run``.

    python -m experiments.uptraining.report --root /path/to/runs --threads 1

Only the numbers the logs hold are written: a run or evaluation that did not finish shows as
``n/a`` and is listed as missing. Each file records the commits the runs used, the machine (CPU
model, threads, load averages the steps saw) and the commands. It replaces only files it wrote.
"""

import argparse
import json
import os
import shlex
import sys
from typing import List, Optional, Sequence

from . import logs
from . import settings as S
from . import tables as T
from .run import REPO, _seeds

MARK = "experiments.uptraining.report"


def _provenance(root: str, runs: List[dict], threads: int) -> dict:
    """The machine, the commits per run and the load the steps saw."""
    sys.path.insert(0, REPO)
    from benchmarks.environment import cpu_model

    steps = logs.steps(root)
    loads = [s["load_before"][0] for s in steps] + [s["load_after"][0] for s in steps]
    return {"cpu_model": cpu_model(), "threads": threads,
            "commits": sorted({r["commit"] for r in runs if r["commit"]}),
            "load_1min": {"min": min(loads), "max": max(loads)} if loads else None,
            "first_step": steps[0]["started"] if steps else None, "last_step": steps[-1]["started"] if steps else None}


def _run_rows(runs: List[dict]) -> List[dict]:
    keep = ("name", "kind", "model", "seed", "commit", "budget", "last_update", "train_seconds", "params")
    return [{k: r[k] for k in keep} for r in runs]


def _runs_markdown(rows: List[dict]) -> str:
    lines = ["| run | seed | updates reached | finished | commit | train time |", "|---|---:|---:|---|---|---:|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['seed']} | {r['last_update'] if r['last_update'] is not None else 'n/a'} | "
                     f"{'yes' if r['budget'] else 'no'} | {(r['commit'] or 'n/a')[:12]} | "
                     f"{str(r['train_seconds']) + ' s' if r['train_seconds'] is not None else 'n/a'} |")
    return "\n".join(lines)


def portable(text: str, root: str, code_dirs: Sequence[str]) -> str:
    """``text`` with the machine's folders named as the commands read anywhere: the runs folder
    ``root`` as RUNS, each checkout the runs used as the repository root (``.``)."""
    folders = [(os.path.abspath(root), "RUNS")] + [(os.path.abspath(c), ".") for c in code_dirs]
    for folder, name in sorted(folders, key=lambda pair: len(pair[0]), reverse=True):  # /a/wt_gsa before /a/wt
        text = text.replace(folder + os.sep, name + "/").replace(folder, name)
    return text


def _commands(root: str, runs: List[dict], kinds: Sequence[str]) -> List[str]:
    """One literal command per kind of step, model and training budget, as it ran (of ``runs``),
    with ``portable`` folder names."""
    names = {r["name"] for r in runs}
    code_dirs = sorted({r["code_dir"] for r in logs.all_runs(root) if r.get("code_dir")})
    out, seen = [], set()
    for run in runs:  # the trainings, from their folders (also those started before the driver's records)
        key = ("train", run["model"], run["budget"])
        if run["kind"] == "scratch" and "train" in kinds and key not in seen and run["command"]:
            seen.add(key)
            out.append(portable(shlex.join(run["command"]), root, code_dirs))
    for step in logs.steps(root):
        key = (step["kind"], step["model"], step["kind"] == "eval" and step.get("updates") == 0)
        if (step["kind"] in kinds and step["kind"] != "train" and step["run"] in names and key not in seen
                and step["status"] == "ok"):
            seen.add(key)
            out.append(portable(shlex.join(step["command"]), root, code_dirs))
    return out


def variant_record(root: str) -> dict:
    """The converted runs of another --root run with another continued-training schedule (a
    diagnostic): its --lr and --warmup (from its uptraining commands) and each run's perplexities."""
    schedule = {}
    for step in logs.steps(root):
        if step["kind"] == "uptrain":
            words = step["command"]
            schedule = {"lr": words[words.index("--lr") + 1], "warmup": int(words[words.index("--warmup") + 1])}
    runs = [r for r in logs.all_runs(root) if r["kind"] == "converted"]
    return {"root": os.path.basename(os.path.normpath(root)), **schedule,
            "runs": [{"name": r["name"], "model": r["model"], "seed": r["seed"], "commit": r["commit"],
                      "budget": r["budget"], "evals": _jsonable(r["evals"])} for r in runs]}


def _variants_markdown(record: dict) -> List[str]:
    """The diagnostic runs beside the main schedule's, test and valid perplexity per continued update."""
    if not record.get("variants"):
        return []
    points = list(range(0, S.CONTINUE_UPDATES + 1, S.EVAL_EVERY))
    main = {(r["model"], int(r["seed"])): r for r in record["main_converted"]}
    lines = ["Diagnostic: the same conversions continued with another learning-rate schedule (valid / test "
             "perplexity after k continued updates):", "",
             "| model | seed | lr | warm-up | " + " | ".join(f"k = {k}" for k in points) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(points)]

    def cells(evals):
        return " | ".join(f"{T.fmt(evals.get(str(k), {}).get('valid', {}).get('ppl'))} / "
                          f"{T.fmt(evals.get(str(k), {}).get('test', {}).get('ppl'))}" for k in points)

    for variant in record["variants"]:
        for run in variant["runs"]:
            base = main.get((run["model"], int(run["seed"])))
            if base:
                lines.append(f"| {T.LABEL[run['model']]} | {run['seed']} | {S.UPTRAIN_LR} | {S.UPTRAIN_WARMUP} | "
                             f"{cells(base['evals'])} |")
            lines.append(f"| {T.LABEL[run['model']]} | {run['seed']} | {variant.get('lr', '?')} | "
                         f"{variant.get('warmup', '?')} | {cells(run['evals'])} |")
        lines += ["", f"(runs under {variant['root']}; commits "
                  f"{', '.join(sorted({(r['commit'] or 'n/a')[:12] for r in variant['runs']}))})"]
    return lines + [""]


def _guard(paths: Sequence[str]) -> Optional[str]:
    """An error when a file to write exists and was not written by this report."""
    for path in paths:
        if os.path.exists(path):
            json_path = os.path.splitext(path)[0] + ".json"
            if MARK not in logs.read(json_path):
                return f"{path} exists and was not written by {MARK}; choose another folder"
    return None


def _plot_curves(record: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"softmax": "tab:gray", "converted ABC-64": "tab:blue", "converted GSA-64": "tab:green"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, split in zip(axes, T.SPLITS):
        for name, per_seed in record["curves"].items():
            for seed, points in per_seed.items():
                xs = [int(u) for u in points if points[u][split] is not None]
                ax.plot(xs, [points[str(u) if str(u) in points else u][split] for u in xs], color=colours[name],
                        alpha=0.35, lw=1)
            mean = {int(u): v for u, v in record["curve_means"][name][split].items() if v is not None}
            if mean:
                ax.plot(sorted(mean), [mean[u] for u in sorted(mean)], color=colours[name], lw=2, marker="o",
                        label=f"{name} (mean of seeds)")
        for row in record["endpoints"]:
            if row["kind"] == "scratch" and row["attention"] in S.CONVERTED and row[split]["mean"] is not None:
                colour = "tab:blue" if row["attention"] == "abc" else "tab:green"
                ax.scatter([row["total_updates"]], [row[split]["mean"]], marker="s", s=60, color=colour,
                           edgecolors="black", zorder=3)
        ax.scatter([], [], marker="s", color="white", edgecolors="black", label="from scratch (ABC blue, GSA green)")
        ax.set_xlabel("total updates (softmax pretraining + continued)")
        ax.set_ylabel(f"{split} perplexity")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"softmax at {S.PRETRAIN_UPDATES} updates converted and continued vs from scratch (quickstart corpus)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _plot_seeds(record: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, split in zip(axes, T.SPLITS):
        for i, row in enumerate(record["rows"]):
            values = [v for v in row[split]["per_seed"].values() if v is not None]
            ax.scatter([i] * len(values), values, color="tab:blue", zorder=3)
            if row[split]["mean"] is not None:
                ax.hlines(row[split]["mean"], i - 0.3, i + 0.3, color="black")
        ax.set_xticks(range(len(record["rows"])), [T.LABEL[r["model"]] for r in record["rows"]])
        ax.set_ylabel(f"{split} perplexity")
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"{S.PRETRAIN_UPDATES} updates, one point per seed, bar: mean")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _jsonable(obj):
    """Integer keys (updates, seeds) as strings, as JSON keeps them."""
    return json.loads(json.dumps(obj))


def uptraining_record(root: str, runs: List[dict], seeds: Sequence[int], threads: int,
                      variants: Sequence[str] = ()) -> dict:
    curves = T.curves(runs, seeds)
    return {"written_by": MARK, "setting": _setting(), "provenance": _provenance(root, runs, threads),
            "seeds": list(seeds), "curves": _jsonable(curves),
            "curve_means": {n: {sp: _jsonable(T.curve_mean(c, sp)) for sp in T.SPLITS} for n, c in curves.items()},
            "endpoints": _jsonable(T.endpoints(runs, seeds)), "recovery": T.recovery(runs, seeds),
            "runs": _run_rows([r for r in runs if r["seed"] in seeds]),
            "commands": _commands(root, runs, ("train", "convert", "uptrain", "eval")),
            "main_converted": [{"model": r["model"], "seed": r["seed"], "evals": _jsonable(r["evals"])}
                               for r in runs if r["kind"] == "converted" and r["seed"] in seeds],
            "variants": [variant_record(v) for v in variants]}


def seeds_record(root: str, runs: List[dict], seeds: Sequence[int], threads: int) -> dict:
    return {"written_by": MARK, "setting": _setting(), "provenance": _provenance(root, runs, threads),
            "seeds": list(seeds), "updates": S.PRETRAIN_UPDATES,
            "rows": _jsonable(T.seeds_table(runs, seeds)),
            "runs": _run_rows([r for r in runs if r["kind"] == "scratch" and r["seed"] in seeds]),
            "commands": _commands(root, [r for r in runs if r["kind"] == "scratch"], ("train", "eval"))}


def _setting() -> dict:
    return {"pretrain_updates": S.PRETRAIN_UPDATES, "continue_updates": S.CONTINUE_UPDATES, "memory": S.MEMORY,
            "uptrain_lr": S.UPTRAIN_LR, "uptrain_warmup": S.UPTRAIN_WARMUP}


def _footer(record: dict) -> List[str]:
    prov = record["provenance"]
    load = prov["load_1min"]
    return ["", f"Machine: {prov['cpu_model']}, {prov['threads']} thread(s) per run (OMP_NUM_THREADS), one run at a "
            f"time; 1-minute load average seen by the steps {load['min']:.2f}-{load['max']:.2f}" if load else
            f"Machine: {prov['cpu_model']}, {prov['threads']} thread(s) per run",
            f"Commits: {', '.join(prov['commits']) or 'n/a'}; steps from {prov['first_step']} to {prov['last_step']}.",
            "", "Commands, one per kind of step, model and budget, as they ran (the other seeds differ only in --seed "
            "and the folder names):", ""]\
        + ["    " + c for c in record["commands"]] + [""]


def _first_within(row: dict) -> str:
    if row["first_within"] is not None:
        return str(row["first_within"])
    return f"not within by {S.CONTINUE_UPDATES}" if row["all_evaluated"] else "n/a (not all evaluated)"


def uptraining_markdown(record: dict) -> str:
    seeds = record["seeds"]
    curves = {n: {int(s): {int(u): v for u, v in pts.items()} for s, pts in per.items()}
              for n, per in record["curves"].items()}
    endpoints = [{**row, "per_seed": {sp: {int(s): v for s, v in row["per_seed"][sp].items()} for sp in T.SPLITS}}
                 for row in record["endpoints"]]
    lines = [f"# Uptraining at the quickstart's scale: results (generated by {MARK})", ""]
    for split in T.SPLITS:
        lines += [f"{split} perplexity over the continued updates (total updates; converted at "
                  f"{S.PRETRAIN_UPDATES}, lr {S.UPTRAIN_LR}, {S.UPTRAIN_WARMUP} warm-up updates):", "",
                  T.curve_markdown(curves, split), ""]
    lines += ["At equal total updates:", "", T.endpoints_markdown(endpoints, seeds), ""]
    lines += ["Recovery (test perplexity within 5% of the softmax source at its conversion point):", "",
              "| model | seed | source test ppl | converted, 0 updates | first continued update within 5% |",
              "|---|---:|---:|---:|---:|"]
    for r in record["recovery"]:
        lines.append(f"| {T.LABEL[r['model']]} | {r['seed']} | {T.fmt(r['source_test_ppl'])} | {T.fmt(r['at_0'])} | "
                     f"{_first_within(r)} |")
    lines += [""] + _variants_markdown(record)
    lines += ["Runs:", "", _runs_markdown(record["runs"])] + _footer(record)
    return "\n".join(lines)


def seeds_markdown(record: dict) -> str:
    rows = [{**row, **{sp: {**row[sp], "per_seed": {int(s): v for s, v in row[sp]["per_seed"].items()}}
                       for sp in T.SPLITS}} for row in record["rows"]]
    lines = [f"# Softmax, ABC-64 and GSA-64 at the quickstart's budget, per seed (generated by {MARK})", "",
             "std: the sample standard deviation (n - 1) over the seeds.", "", T.seeds_markdown(rows, record["seeds"]),
             "Runs:", "", _runs_markdown(record["runs"])] + _footer(record)
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.uptraining.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", required=True, help="the --root of python -m experiments.uptraining.run")
    p.add_argument("--seeds", type=_seeds, default=[1, 2], help="seeds of the uptraining comparison (default: 1,2)")
    p.add_argument("--seed-table-seeds", type=_seeds, default=[1, 2, 3],
                   help="seeds of the per-seed table at the quickstart's budget (default: 1,2,3)")
    p.add_argument("--threads", type=int, default=1, help="the threads each run used (recorded; default %(default)s)")
    p.add_argument("--variant-root", action="append", default=[],
                   help="the --root of a run of the same conversions with another --lr / --warmup (a diagnostic, "
                        "e.g. --only conv_gsa_s1): shown beside the main schedule; repeatable")
    p.add_argument("--uptraining-out", default=os.path.join(REPO, "docs", "uptraining"),
                   help="folder of results.{md,json,png} (default: docs/uptraining)")
    p.add_argument("--seeds-out", default=os.path.join(REPO, "docs", "gsa"),
                   help="folder of seeds.{md,json,png} (default: docs/gsa)")
    args = p.parse_args(argv)
    if not os.path.isdir(os.path.join(args.root, "runs")):
        p.error(f"--root: {args.root} holds no runs/ folder (python -m experiments.uptraining.run writes it)")
    runs = logs.all_runs(args.root)
    jobs = [(args.uptraining_out, "results",
             uptraining_record(args.root, runs, args.seeds, args.threads, args.variant_root),
             uptraining_markdown, _plot_curves),
            (args.seeds_out, "seeds", seeds_record(args.root, runs, args.seed_table_seeds, args.threads),
             seeds_markdown, _plot_seeds)]
    for folder, stem, _, _, _ in jobs:
        error = _guard([os.path.join(folder, f"{stem}.{ext}") for ext in ("json", "md", "png")])
        if error:
            p.error(error)
    for folder, stem, record, markdown, plot in jobs:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{stem}.json"), "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
        text = markdown(record)
        with open(os.path.join(folder, f"{stem}.md"), "w", encoding="utf-8") as handle:
            handle.write(text)
        plot(record, os.path.join(folder, f"{stem}.png"))
        print(f"wrote {folder}/{stem}.{{json,md,png}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
