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
import ast
import math
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = "configs/paper_settings.yaml"
DOC = "docs/paper_settings.md"
NOT_STATED = "not stated"
GPU_FLAGS = ("--nproc-per-node", "--nnodes")

Layout = Tuple[int, int]  # (nodes, processes per node)


# --- the table ------------------------------------------------------------------------------------

def load_table(path: str = TABLE) -> Dict[str, Any]:
    """The YAML table (see its header for the schema), relative paths from the repository root."""
    with open(os.path.join(ROOT, path)) as f:
        table = yaml.safe_load(f)
    table["layouts"] = [tuple(layout) for layout in table["layouts"]]
    table["paper_layout"] = tuple(table["paper_layout"])
    return table


def layout_name(layout: Layout) -> str:
    """(1, 4) -> '4', (2, 4) -> '2x4': GPUs as a user counts them."""
    nodes, per_node = layout
    return str(per_node) if nodes == 1 else "%dx%d" % (nodes, per_node)


def checked_layouts(recipe: Dict[str, Any], variant: str, table: Dict[str, Any]) -> List[Layout]:
    """Every layout for the reference variant (all variants with ``layout_variants: all``), else
    only the paper's."""
    if variant == recipe["reference"] or recipe.get("layout_variants") == "all":
        return list(table["layouts"])
    return [table["paper_layout"]]


def runs(table: Dict[str, Any]) -> List[Tuple[str, str, Layout]]:
    """(recipe, variant, layout) of every dry run the table asks for."""
    return [(name, variant, layout) for name, recipe in table["recipes"].items()
            for variant in recipe["variants"] for layout in checked_layouts(recipe, variant, table)]


def per_variant(setting: Dict[str, Any]) -> bool:
    """A setting whose value the table gives per run (memory sizes, attention, per-task updates)."""
    return bool(setting.get("per_variant"))


def field_of(recipe: Dict[str, Any], variant: str, name: str) -> Optional[str]:
    """Where setting ``name`` is read from in a run of ``variant`` (the variant may name another field)."""
    return recipe["variants"][variant].get("fields", {}).get(name, recipe["settings"][name]["field"])


def expected(recipe: Dict[str, Any], variant: str, name: str) -> Tuple[Optional[str], Any]:
    """(field, value) a run of ``variant`` must show for setting ``name``: the variant's own value,
    else the recipe's (``ours`` where it departs from the paper, else ``paper``). A None field is a
    setting no training command holds; a None value is "not applicable" (softmax has no memory)."""
    setting, spec = recipe["settings"][name], recipe["variants"][variant]
    where = field_of(recipe, variant, name)
    if name in spec.get("values", {}):
        return where, spec["values"][name]
    if per_variant(setting):
        raise KeyError("%s: variant %s gives no value for the per-run setting %r" % (recipe["title"], variant, name))
    return where, setting.get("ours", setting["paper"])


# --- a recipe's dry run -----------------------------------------------------------------------------

@dataclass
class DryRun:
    """One dry run: its command line (argv), exit status, the printed command and stderr, and the
    command parsed by fairseq-train's parser (None when it refused)."""

    argv: List[str]
    returncode: int
    command: str
    stderr: str
    args: Any = field(default=None, repr=False)

    @property
    def refused(self) -> bool:
        return self.returncode != 0

    def refusal(self) -> str:
        """The launcher's error line(s), without the 'launch: ERROR: ' prefix."""
        lines = [line.split("ERROR:", 1)[1].strip() for line in self.stderr.splitlines() if "ERROR:" in line]
        return " ".join(lines) or self.stderr.strip()


def dry_run_argv(recipe: Dict[str, Any], variant: str, layout: Layout) -> List[str]:
    nodes, per_node = layout
    return [*recipe["command"], *map(str, recipe["variants"][variant]["argv"]),
            "--nnodes", str(nodes), "--nproc-per-node", str(per_node), "--dry-run"]


def dry_run(argv: Sequence[str]) -> DryRun:
    """Run a recipe with --dry-run from the repository root (no data, no GPU needed)."""
    env = dict(os.environ)
    for name in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID", "SLURM_JOB_NODELIST"):  # the layout is the flags'
        env.pop(name, None)
    proc = subprocess.run(list(argv), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return DryRun(list(argv), proc.returncode, proc.stdout.strip(), proc.stderr)


def parse_train_command(line: str):
    """A printed launcher command -> fairseq-train's namespace, parsed as fairseq-train does
    (``--user-dir`` imported, the architecture's defaults applied)."""
    from fairseq import options

    import abc_fairseq.models  # noqa: F401  (--user-dir skips a package already imported: register here)

    words = shlex.split(line)
    if "fairseq-train" not in words:
        raise ValueError("no fairseq-train in: %s" % line)
    argv = words[len(words) - words[::-1].index("fairseq-train"):]
    return options.parse_args_and_arch(options.get_training_parser(), argv)


def observe(table: Dict[str, Any], keys: Optional[Sequence[Tuple[str, str, Layout]]] = None,
            parse: Callable[[str], Any] = parse_train_command,
            workers: Optional[int] = None) -> Dict[Tuple[str, str, Layout], DryRun]:
    """The dry runs ``keys`` (default: every one of ``runs(table)``), each parsed by ``parse`` (the
    line -> fairseq's namespace). A dry run is bash and a short Python (the MT recipe's checks
    import fairseq: seconds); ``workers`` (default: the CPU count) run at a time."""
    keys = runs(table) if keys is None else list(keys)
    workers = workers or os.cpu_count() or 1
    argvs = [dry_run_argv(table["recipes"][r], v, layout) for r, v, layout in keys]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(dry_run, argvs))
    for result in results:
        if not result.refused:
            result.args = parse(result.command)
    return dict(zip(keys, results))


# --- settings read from a parsed command --------------------------------------------------------------

def _world(args) -> int:
    return int(args.distributed_world_size)


def _update_freq(args) -> int:
    return int(args.update_freq[0])


def per_update(args, unit: str) -> int:
    """Tokens (--max-tokens) or sentences (--batch-size) per update: processes x per process x update-freq."""
    per_process = args.max_tokens if unit == "tokens" else args.batch_size
    return _world(args) * int(per_process) * _update_freq(args)


def segments_per_update(args, unit: str) -> int:
    """Whole --tokens-per-sample segments per update: a process's batch of --max-tokens holds
    max_tokens // tokens_per_sample segments (LM data cut into equal segments)."""
    return _world(args) * (int(args.max_tokens) // int(args.tokens_per_sample)) * _update_freq(args)


def _head_size(side: str):
    def head_size(args, unit):
        embed, heads = getattr(args, side + "_embed_dim"), getattr(args, side + "_attention_heads")
        return embed // heads if embed % heads == 0 else embed / heads
    return head_size


DERIVED: Dict[str, Callable[[Any, str], Any]] = {
    "per_update": per_update,
    "segments_per_update": segments_per_update,
    "decoder_head_size": _head_size("decoder"),
    "encoder_head_size": _head_size("encoder"),
}


def normalise(value: Any) -> Any:
    """fairseq's namespace values as the table writes them: one-item lists as their item (--lr),
    numbers given as strings as numbers (--total-num-update), tuples as lists (--adam-betas)."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    if isinstance(value, (list, tuple)):
        value = [normalise(v) for v in value]
        return value[0] if len(value) == 1 else value
    return value


def read(args, where: str, unit: str) -> Any:
    """The value of ``where`` (a namespace attribute or a DERIVED name) in a parsed command."""
    if where in DERIVED:
        return DERIVED[where](args, unit)
    if not hasattr(args, where):
        raise KeyError("fairseq's namespace has no %r" % where)
    return normalise(getattr(args, where))


def same(ours: Any, paper: Any) -> bool:
    """Equal as settings: numbers to a relative 1e-9 (1e-5 == 0.00001), lists item by item."""
    if isinstance(ours, bool) or isinstance(paper, bool):
        return ours is paper
    if isinstance(ours, (int, float)) and isinstance(paper, (int, float)):
        return math.isclose(ours, paper, rel_tol=1e-9, abs_tol=0.0)
    if isinstance(ours, list) and isinstance(paper, list):
        return len(ours) == len(paper) and all(same(a, b) for a, b in zip(ours, paper))
    return ours == paper


def drift(recipe: Dict[str, Any], variant: str, args) -> List[str]:
    """Every setting of one parsed run that differs from the table: 'setting: table X, recipe Y'."""
    found = []
    for name in recipe["settings"]:
        where, value = expected(recipe, variant, name)
        if where is None or value is None:
            continue
        ours = read(args, where, recipe["batch"]["unit"])
        if not same(ours, value):
            found.append("%s (%s): table %s, recipe %s" % (name, where, show(value), show(ours)))
    return found


def refusal_problems(recipe: Dict[str, Any], run: DryRun) -> List[str]:
    """What is wrong with a refusal: it must be the launcher's error and name a flag to change."""
    problems = []
    if "launch: ERROR:" not in run.stderr:
        problems.append("no 'launch: ERROR:' line on stderr")
    flags = [*recipe["batch"]["flags"], *GPU_FLAGS]
    if not any(flag in run.refusal() for flag in flags):
        problems.append("names none of the flags to change (%s)" % ", ".join(flags))
    return problems


# --- the page ----------------------------------------------------------------------------------------

def show(value: Any) -> str:
    """A value as the page prints it."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "%g" % value
    if isinstance(value, list):
        return "[%s]" % ", ".join(show(v) for v in value)
    return str(value)


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
