"""The quickstart's models side by side (softmax, ABC, and GSA when it ran): test perplexity and tokens/s.

Reads a QUICKSTART_DIR written by ``scripts/quickstart.sh`` (each model's train.log, eval_*.log,
train_seconds, train_args.txt and done) and writes
results.json, results.md and results.png to --out, with the commit, CPU, torch version, threads
and date of the run. Tokens/s: training words per second as fairseq-train logs them (its last
``wps``), and the scoring speed fairseq-eval-lm reports on the test set.

    bash scripts/quickstart.sh
    python scripts/quickstart_report.py work_dirs/quickstart --threads 2 --models softmax abc --out docs/quickstart
    QUICKSTART_MODELS="gsa abc softmax" bash scripts/quickstart.sh
    python scripts/quickstart_report.py work_dirs/quickstart --threads 2 --out docs/gsa

It writes only its own three files and refuses to replace files it did not write.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.environment import environment_info  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"softmax": "transformer_lm (softmax)", "abc": "abc_lm_small (ABC)", "gsa": "abc_lm_small (GSA)"}
MARK = "gsa_quickstart_report"  # the name it had when docs/gsa was written: its files stay its own


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def _last(pattern, text, cast=str):
    found = re.findall(pattern, text)
    return cast(found[-1].replace(",", "")) if found else None


def _repo_relative(arg):
    """An absolute path inside the repository as a path relative to its root (the saved results
    name no machine's folders); any other argument unchanged."""
    return os.path.relpath(arg, ROOT) if os.path.isabs(arg) and arg.startswith(ROOT + os.sep) else arg


def model_row(run_dir, name):
    """One model's numbers from its quickstart folder (None where a log lacks them)."""
    folder = os.path.join(run_dir, name)
    train = _read(os.path.join(folder, "train.log"))
    test = _read(os.path.join(folder, "eval_test.log"))
    seconds = _read(os.path.join(folder, "train_seconds")).strip()
    return {
        "model": MODELS[name],
        "params": _last(r"num\. shared model params: ([\d,]+)", train, int),
        "updates": _last(r"num_updates[ =|]+(\d+)", train, int),
        "valid_ppl": _last(r"Perplexity: ([\d.]+)", _read(os.path.join(folder, "eval_valid.log")), float),
        "test_ppl": _last(r"Perplexity: ([\d.]+)", test, float),
        "test_ppl_context": _last(r"Perplexity: ([\d.]+)", _read(os.path.join(folder, "eval_test_ctx.log")), float),
        "train_tokens_per_s": _last(r"\bwps[ =|]+([\d.]+)", train, float),
        "eval_tokens_per_s": _last(r"\(([\d.]+) tokens/s\)", test, float),
        "train_seconds": int(seconds) if seconds.isdigit() else None,
        "budget": _read(os.path.join(folder, "done")).strip() or None,
        "train_args": [_repo_relative(a) for a in _read(os.path.join(folder, "train_args.txt")).split()],
    }


def markdown(record):
    head = ("| model | params | updates | valid ppl | test ppl | test ppl (context) | train tokens/s "
            "| test scoring tokens/s | train time |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in record["rows"]:
        cells = [row["model"], f"{row['params']:,}" if row["params"] else "?", row["updates"], row["valid_ppl"],
                 row["test_ppl"], row["test_ppl_context"], row["train_tokens_per_s"], row["eval_tokens_per_s"],
                 f"{row['train_seconds']} s" if row["train_seconds"] is not None else "?"]
        lines.append("| " + " | ".join("?" if c is None else str(c) for c in cells) + " |")
    env = record["environment"]
    lines += ["", f"Run: commit {record['commit']}, {env['cpu_model']}, torch {env['torch']}, "
              f"{record['threads']} threads, {env['date']}; budget: {record['rows'][0]['budget']}."]
    return "\n".join(lines) + "\n"


def plot(record, path):
    import logging

    import matplotlib
    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # importing fairseq left the root logger verbose
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in record["rows"] if r["test_ppl"] is not None]
    names = [r["model"].split("(")[-1].rstrip(")") for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    axes[0].bar(names, [r["test_ppl"] for r in rows], color="tab:blue")
    axes[0].set_title("test perplexity (lower is better)")
    axes[1].bar(names, [r["train_tokens_per_s"] or 0 for r in rows], color="tab:orange")
    axes[1].set_title("training tokens/s (fairseq wps)")
    fig.suptitle(f"quickstart corpus, {rows[0]['updates'] if rows else '?'} updates, {record['threads']} threads")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="the QUICKSTART_DIR of a quickstart run")
    parser.add_argument("--out", default=os.path.join("work_dirs", "quickstart_report"),
                        help="folder for results.json, results.md, results.png (default: %(default)s; the saved "
                             "runs are docs/quickstart and docs/gsa)")
    parser.add_argument("--threads", type=int, required=True, help="OMP_NUM_THREADS the run used (recorded)")
    parser.add_argument("--models", nargs="+", choices=list(MODELS),
                        help="rows, in order (default: every model the run trained)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.run_dir):
        parser.error(f"run_dir: {args.run_dir} is not a folder")
    if args.models is None:
        args.models = [m for m in MODELS if os.path.isfile(os.path.join(args.run_dir, m, "train.log"))] or list(MODELS)
    missing = [m for m in args.models if not os.path.isfile(os.path.join(args.run_dir, m, "train.log"))]
    if missing:
        parser.error(f"run_dir: no train.log for {', '.join(missing)} under {args.run_dir}")
    paths = {ext: os.path.join(args.out, f"results.{ext}") for ext in ("json", "md", "png")}
    previous = _read(paths["json"])
    if any(os.path.exists(p) for p in paths.values()) and MARK not in previous:
        parser.error(f"--out: {args.out} holds results this script did not write; choose another folder")
    env = environment_info("python scripts/quickstart_report.py", sys.argv[1:] if argv is None else argv)
    record = {"written_by": MARK, "commit": env["commit"], "threads": args.threads, "run_dir": args.run_dir,
              "environment": env, "rows": [model_row(args.run_dir, m) for m in args.models]}
    os.makedirs(args.out, exist_ok=True)
    with open(paths["json"], "w") as handle:
        json.dump(record, handle, indent=2)
    with open(paths["md"], "w") as handle:
        handle.write(markdown(record))
    plot(record, paths["png"])
    print(markdown(record))


if __name__ == "__main__":
    main()
