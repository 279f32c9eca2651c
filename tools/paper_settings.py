"""The paper's hyperparameters against the training recipes: writes docs/paper_settings.md.

    python -m tools.paper_settings [--table configs/paper_settings.yaml] [--output docs/paper_settings.md]
    python -m tools.paper_settings --check

The table (configs/paper_settings.yaml) quotes the paper's settings with their source and, where a
recipe departs from the paper or the paper is silent, the recipe's value and the reason. This tool
dry-runs every recipe of the table (no data, no GPU: bash and the launcher) for every variant at the
paper's layout, and the reference variant at every layout of the table, parses each printed command
with fairseq-train's own parser (architecture defaults applied), reads the settings from it and
writes the Markdown page: per recipe, setting, paper value, our value (read from the recipe's
command, never from the table), source and note; the runs of the paper's tables; and the batch per
update at every GPU layout, or the launcher's refusal. Settings that differ from the table are
listed as drift and make the tool exit 1. --check writes nothing and exits 1 when the page on disk
is not what the table and the recipes give now (tests/recipes/test_paper_settings.py holds both).
"""


import argparse
import os
import shlex
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .paper_compare import _update_freq, _world, drift, per_update, read, refusal_problems, same, show  # noqa: F401
from .paper_recipes import (  # noqa: F401
    DOC,
    NOT_STATED,
    ROOT,
    TABLE,
    DryRun,
    Layout,
    checked_layouts,
    dry_run,
    dry_run_argv,
    expected,
    field_of,
    layout_name,
    load_table,
    observe,
    runs,
)


def _cell(text: Any) -> str:
    return show(text).replace("|", "\\|")


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> List[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def batch_cell(recipe: Dict[str, Any], run: DryRun, refusals: List[str]) -> str:
    """'32768 = 8 x 4096 x 1' (per update = processes x per process x update-freq), or 'refused (k)',
    the launcher's k-th message (1-based) of ``refusals``, which collects them."""
    if run.refused:
        if run.refusal() not in refusals:
            refusals.append(run.refusal())
        return "refused (%d)" % (refusals.index(run.refusal()) + 1)
    args, unit = run.args, recipe["batch"]["unit"]
    per_process = args.max_tokens if unit == "tokens" else args.batch_size
    return "%d = %d x %d x %d" % (per_update(args, unit), _world(args), per_process, _update_freq(args))


def recipe_section(name: str, recipe: Dict[str, Any], table: Dict[str, Any],
                   observed: Dict[Tuple[str, str, Layout], DryRun]) -> List[str]:
    paper_layout, reference = table["paper_layout"], recipe["reference"]
    ref = observed[(name, reference, paper_layout)]
    command = " ".join(shlex.quote(w) for w in dry_run_argv(recipe, reference, paper_layout)[:-1])
    lines = ["## %s" % recipe["title"], "",
             "`%s` (the paper's hardware: %s). Settings of the run `%s`, at %s GPUs:" % (
                 command, recipe["hardware"], reference, layout_name(paper_layout)), ""]
    rows = []
    for setting_name, setting in recipe["settings"].items():
        where, value = expected(recipe, reference, setting_name)
        if where is None:
            ours = "(not in the training command)"
        else:  # '-' where the setting does not apply (the softmax encoder's memory)
            ours = None if value is None else read(ref.args, where, recipe["batch"]["unit"])
        rows.append([setting_name, setting["paper"], ours, setting["source"], setting.get("note", "")])
    lines += _table(["setting", "paper", "ours", "source", "note"], rows)

    columns = [s for s in recipe["settings"] if any(s in v.get("values", {}) for v in recipe["variants"].values())]
    rows = []
    for variant, spec in recipe["variants"].items():
        args = observed[(name, variant, paper_layout)].args
        cells = [None if expected(recipe, variant, s)[1] is None
                 else read(args, field_of(recipe, variant, s), recipe["batch"]["unit"]) for s in columns]
        rows.append([variant, spec["source"], " ".join(map(str, spec["argv"])) or "(none)", *cells])
    lines += ["", "The paper's runs (read from each run's command; '-': not applicable):", ""]
    lines += _table(["run", "paper", "flags", *columns], rows)

    unit = recipe["batch"]["unit"]
    lines += ["", "%s per update (processes x per process x --update-freq) on every layout:" % unit.capitalize(), ""]
    variants = [v for v in recipe["variants"] if len(checked_layouts(recipe, v, table)) > 1]
    refusals: List[str] = []
    rows = [[layout_name(layout), *(batch_cell(recipe, observed[(name, v, layout)], refusals) for v in variants)]
            for layout in table["layouts"]]
    lines += _table(["GPUs", *variants], rows)
    if refusals:
        lines += ["", "The launcher's refusals:", ""]
        lines += ["%d. %s" % (i, message) for i, message in enumerate(refusals, 1)]
    return lines + [""]


def render(table: Dict[str, Any], observed: Dict[Tuple[str, str, Layout], DryRun]) -> str:
    """The page, from the table and the parsed dry runs."""
    lines = ["# The paper's settings against the recipes", "",
             "Generated by `python -m tools.paper_settings` from `%s` and the recipes' dry runs "
             "(do not edit; `tests/recipes/test_paper_settings.py` fails when this page is stale or a "
             "recipe drifts from the table)." % TABLE, "",
             "Paper: %s. *paper*: the paper's value (\"not stated\" where it gives none); *ours*: the "
             "value read from the recipe's dry-run command, parsed by fairseq-train's parser with the "
             "architecture's defaults applied; *note*: why ours differs or where it comes from. "
             "Sources: tables and sections of the paper's arXiv version; Liu et al. (2019) for GLUE "
             "finetuning, which the paper follows (§C.3)." % table["paper"], ""]
    for name, recipe in table["recipes"].items():
        lines += recipe_section(name, recipe, table, observed)
    return "\n".join(lines).rstrip("\n") + "\n"


def problems(table: Dict[str, Any], observed: Dict[Tuple[str, str, Layout], DryRun]) -> List[str]:
    """Drift and bad refusals of every run, one line each."""
    found = []
    for (name, variant, layout), run in observed.items():
        recipe, where = table["recipes"][name], "%s %s at %s GPUs" % (name, variant, layout_name(layout))
        if run.refused:
            found += ["%s: refusal %s" % (where, p) for p in refusal_problems(recipe, run)]
        else:
            found += ["%s: %s" % (where, d) for d in drift(recipe, variant, run.args)]
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.paper_settings", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default=TABLE, help="the settings table (default %(default)s)")
    parser.add_argument("--output", default=DOC, help="the page to write (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when --output is stale")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(ROOT, args.table)):
        parser.error("--table %s: no such file" % args.table)
    table = load_table(args.table)
    observed = observe(table)
    page = render(table, observed)
    for line in problems(table, observed):
        print("drift: " + line, file=sys.stderr)
    output = os.path.join(ROOT, args.output)
    if args.check:
        current = open(output).read() if os.path.isfile(output) else None
        if current != page:
            print("%s is stale: run python -m tools.paper_settings" % args.output, file=sys.stderr)
            return 1
        return 1 if problems(table, observed) else 0
    with open(output, "w") as f:
        f.write(page)
    print("wrote %s" % args.output)
    return 1 if problems(table, observed) else 0


if __name__ == "__main__":
    sys.exit(main())
