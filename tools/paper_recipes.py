"""The recipe side of ``tools.paper_settings``: the table of the paper's settings
(configs/paper_settings.yaml), each recipe's dry run at a GPU layout, and the printed
fairseq-train command parsed with fairseq's own parser."""

import os
import shlex
import subprocess
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
