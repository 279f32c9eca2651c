"""The training recipes against the paper's settings (configs/paper_settings.yaml).

Every recipe of the table is dry-run (no data, no GPU) and its printed command parsed by
fairseq-train's own parser, architecture defaults applied (tests/fairseq_helpers.parse_command);
the settings read from it (layers, heads, widths, head size = width / heads, FFN, dropout, layer
dropout, learning rate, warm-up, memory sizes, ...) must equal the table's: the paper's value, or
the recipe's documented departure. At every GPU layout of the table (1, 4, 8, 2 x 4, 4 x 8 and
16 x 8 GPUs) the update holds the paper's tokens (sentences) exactly, or the launcher refuses
with a message naming the flags to change. docs/paper_settings.md must be what
`python -m tools.paper_settings` writes now.

The dry runs are cached per module. Those of the LM, MLM and GLUE recipes (bash and the launcher:
milliseconds) are all in `core`, with the translation recipe's reference runs at the paper's layout.
Every dry run of the translation recipe imports fairseq for the recipe's own checks (seconds each, and
the table asks for 36), so its other layouts and runs (Tables 3, 5 and 7) and the page, which shows
them, are checked by the tests marked slow.
"""

import csv
import os
import shlex
import subprocess
import sys

import pytest
from fairseq_helpers import ROOT, parse_command

from tools import paper_settings as ps

TABLE = ps.load_table()
RECIPES = TABLE["recipes"]
# Recipes checked beyond their reference run at the paper's layout only by the slow tests (see the docstring).
SLOW = {"mt_wmt14", "mt_iwslt14"}


def parse_train(line):
    tool, args = parse_command(line)
    assert tool == "train", line
    return args


def core_keys():
    return [(name, variant, layout) for name, variant, layout in ps.runs(TABLE)
            if name not in SLOW or (variant, layout) == (RECIPES[name]["reference"], TABLE["paper_layout"])]


@pytest.fixture(scope="module")
def core():
    return ps.observe(TABLE, core_keys(), parse=parse_train)


@pytest.fixture(scope="module")
def everything(core):
    rest = [key for key in ps.runs(TABLE) if key not in core]
    return {**core, **ps.observe(TABLE, rest, parse=parse_train)}


# --- the table itself -----------------------------------------------------------------------------

# What Tables 9, 10 and 11 list, per recipe of the table: each must be there.
TABLE_ROWS = {
    "lm_16l": ["layers", "heads", "embedding size", "head size", "FFN size", "batch (segments per update)",
               "learning rate", "dropout", "layer dropout", "memory size"],
    "mt_wmt14": ["encoder layers", "decoder layers", "encoder heads", "decoder heads", "encoder embedding size",
                 "decoder embedding size", "encoder head size", "decoder head size", "encoder FFN size",
                 "decoder FFN size", "warm-up updates", "dropout", "cross attention memory size",
                 "causal attention memory size"],
    "mlm": ["layers", "heads", "embedding size", "head size", "FFN size", "dropout", "memory size"],
}
TABLE_ROWS["lm_32l"] = TABLE_ROWS["lm_16l"]
TABLE_ROWS["mt_iwslt14"] = TABLE_ROWS["mt_wmt14"]


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_table_is_whole_and_says_why(name):
    recipe = RECIPES[name]
    assert set(TABLE_ROWS.get(name, [])) <= set(recipe["settings"])
    assert recipe["reference"] in recipe["variants"]
    for setting_name, setting in recipe["settings"].items():
        assert setting.get("source"), setting_name
        if setting["paper"] == ps.NOT_STATED:
            assert "ours" in setting and setting.get("note"), "%s: a value the paper omits needs ours, and why" % (
                setting_name)
        if "ours" in setting:
            assert not ps.same(setting["ours"], setting["paper"]), "%s: ours equals the paper's" % setting_name
            assert setting.get("note"), "%s: a departure needs its reason" % setting_name
    for variant, spec in recipe["variants"].items():
        assert spec.get("source") and isinstance(spec["argv"], list), variant
        assert set(spec.get("values", {})) <= set(recipe["settings"]), variant
        for setting_name in recipe["settings"]:
            ps.expected(recipe, variant, setting_name)  # a per-run setting without the run's value raises


def test_every_paper_row_of_the_lm_recipe_is_in_the_table():
    with open(os.path.join(ROOT, "scripts/lm/rows.tsv")) as f:
        rows = list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))
    in_table = {spec["argv"][1]: name for name in ("lm_16l", "lm_32l")
                for spec in RECIPES[name]["variants"].values()}
    assert sorted(in_table) == sorted(r["row"] for r in rows if r["row"] not in TABLE["lm_rows_beyond_paper"])
    for row in rows:  # 16l rows are Table 2a's, 32l rows Table 2b's
        if row["row"] in in_table:
            assert in_table[row["row"]] == "lm_" + row["setting"]


# --- the recipes against the table ------------------------------------------------------------------

def assert_held_or_refused(observed, name, variant):
    """At every layout (of those ``observed``): the table's settings (the batch per update among
    them) on the right number of processes, or a refusal naming the flags to change; at the
    paper's layout, never a refusal."""
    recipe = RECIPES[name]
    layouts = [layout for layout in ps.checked_layouts(recipe, variant, TABLE) if (name, variant, layout) in observed]
    assert layouts, (name, variant)
    for layout in layouts:
        run = observed[(name, variant, layout)]
        where = "%s %s at %s GPUs" % (name, variant, ps.layout_name(layout))
        if run.refused:
            assert layout != TABLE["paper_layout"], "%s: refused at the paper's layout:\n%s" % (where, run.stderr)
            assert ps.refusal_problems(recipe, run) == [], "%s:\n%s" % (where, run.stderr)
            continue
        assert run.args.distributed_world_size == layout[0] * layout[1], where
        assert ps.drift(recipe, variant, run.args) == [], where


@pytest.mark.parametrize("name", sorted(set(RECIPES) - SLOW))
def test_every_run_of_the_papers_tables_holds_the_table(core, name):
    """Every run at the paper's layout, the reference run (GLUE: every task) at every layout."""
    for variant in RECIPES[name]["variants"]:
        assert_held_or_refused(core, name, variant)


@pytest.mark.parametrize("name", sorted(SLOW))
def test_the_translation_reference_run_holds_the_table(core, name):
    assert_held_or_refused(core, name, RECIPES[name]["reference"])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_every_translation_run_of_the_papers_tables_holds_the_table(everything, name):
    """Tables 3, 5 and 7 at the paper's layout, the reference run at every layout."""
    for variant in RECIPES[name]["variants"]:
        assert_held_or_refused(everything, name, variant)


def test_the_lm_batch_is_whole_segments(core):
    """A per-process --max-tokens that is not a multiple of the 512-token segment would hold fewer
    tokens than the arithmetic says: the segments per update are checked too (Table 9: 64)."""
    for (name, _, _), run in core.items():
        if name.startswith("lm_") and not run.refused:
            assert run.args.max_tokens % run.args.tokens_per_sample == 0, run.command


def test_a_single_process_run_pins_its_world_size(core):
    """fairseq's --distributed-world-size defaults to every visible GPU: a one-process command must
    say 1, or `--nproc-per-node 1` on an 8-GPU node trains on 8 with 8 times the batch (the parse
    here, on a machine without GPUs, cannot show it)."""
    for (name, variant, layout), run in core.items():
        if layout == (1, 1) and not run.refused:
            words = shlex.split(run.command)
            assert "--distributed-world-size" in words, "%s %s: %s" % (name, variant, run.command)
            assert words[words.index("--distributed-world-size") + 1] == "1"


@pytest.mark.parametrize("name", ["lm_16l", pytest.param("mt_wmt14", marks=pytest.mark.slow), "mlm", "glue"])
def test_a_batch_that_cannot_be_held_is_refused_naming_the_flags(name):
    """3 processes cannot split any of the paper's batches (powers of two) into whole passes."""
    recipe = RECIPES[name]
    run = ps.dry_run(ps.dry_run_argv(recipe, recipe["reference"], (1, 3)))
    assert run.refused and run.command == "", run.command
    assert ps.refusal_problems(recipe, run) == [], run.stderr


def test_drift_is_found():
    """The check itself: a recipe one setting away from the table is reported, setting by setting."""
    recipe = RECIPES["lm_16l"]
    line = ps.dry_run(ps.dry_run_argv(recipe, "abc_n64", (1, 4))).command
    args = parse_train(line + " --dropout 0.2 --decoder-self-memory 32")
    assert ps.drift(recipe, "abc_n64", args) == [
        "dropout (dropout): table 0.3, recipe 0.2", "memory size (decoder_self_memory): table 64, recipe 32"]
    args = parse_train(line.replace("--update-freq 1", "--update-freq 2"))
    assert [d.split(":")[0] for d in ps.drift(recipe, "abc_n64", args)] == [
        "batch (segments per update) (segments_per_update)", "batch (tokens per update) (per_update)"]


# --- the page ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_page_is_what_the_table_and_the_recipes_give(everything):
    with open(os.path.join(ROOT, ps.DOC)) as f:
        page = f.read()
    assert page == ps.render(TABLE, everything), "%s is stale: run python -m tools.paper_settings" % ps.DOC


def test_the_tool_answers_help_and_names_a_bad_flag():
    tool = [sys.executable, "-m", "tools.paper_settings"]
    proc = subprocess.run([*tool, "--help"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "--check" in proc.stdout and "docs/paper_settings.md" in proc.stdout
    proc = subprocess.run([*tool, "--table", "no/such.yaml"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "--table no/such.yaml" in proc.stderr
