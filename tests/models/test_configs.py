"""Every Hydra config under configs/ composes the way fairseq-hydra-train composes it and builds
its model (same model class and attention choice, sizes shrunk by overrides) on a tiny dictionary;
the WikiText-103 configs equal the bash recipe (scripts/lm/train_wiki103.sh) field by field."""

import glob
import os
import shlex
import subprocess

import pytest
import torch
from fairseq import options, tasks
from fairseq.data import Dictionary
from fairseq.dataclass.initialize import add_defaults, hydra_init
from fairseq.dataclass.utils import omegaconf_no_object_check
from fairseq.modules import MultiheadAttention
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf, open_dict

import abc_fairseq.models  # noqa: F401 (registers the models, as common.user_dir does)
from abc_fairseq.modules import ABCMultiheadAttention

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_DIR = os.path.join(ROOT, "configs")
CONFIGS = sorted(os.path.relpath(p, CONFIG_DIR) for p in glob.glob(os.path.join(CONFIG_DIR, "*", "*.yaml")))
LM_ROWS = [line.split("\t")[0] for line in open(os.path.join(ROOT, "scripts", "lm", "rows.tsv"))
           if line.strip() and not line.startswith("#")][1:]

LM_TINY = ["model.decoder_layers=2", "model.decoder_embed_dim=32", "model.decoder_input_dim=32",
           "model.decoder_output_dim=32", "model.decoder_ffn_embed_dim=64", "model.decoder_attention_heads=2"]
# argparse models have no schema in Hydra: their fields are added (++) rather than overridden.
MT_TINY = ["++model.encoder_layers=1", "++model.decoder_layers=1", "++model.encoder_embed_dim=32",
           "++model.decoder_embed_dim=32", "++model.encoder_ffn_embed_dim=64", "++model.decoder_ffn_embed_dim=64",
           "++model.encoder_attention_heads=2", "++model.decoder_attention_heads=2"]


def write_dict(path, size=300):
    d = Dictionary()
    for i in range(size):
        d.add_symbol("w%d" % i, n=size - i)
    d.save(path)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """dict.txt for language modelling and dict.{en,de,es}.txt for translation."""
    d = tmp_path_factory.mktemp("config_data")
    for name in ("dict.txt", "dict.en.txt", "dict.de.txt", "dict.es.txt"):
        write_dict(str(d / name))
    return str(d)


def compose_config(relpath, overrides=()):
    """What fairseq-hydra-train --config-dir DIR --config-name NAME hands to training: FairseqConfig
    stored under the config's name (the file then fills it), model/task defaults added, enums
    resolved, struct mode on."""
    group, name = os.path.split(relpath)
    name = os.path.splitext(name)[0]
    hydra_init(name)
    # No version_base, like fairseq-hydra-train's @hydra.main: Hydra 1.1 semantics. (Asking for a
    # newer base would also switch off the hydra.experimental API fairseq itself still calls.)
    with initialize_config_dir(config_dir=os.path.join(CONFIG_DIR, group)):
        cfg = compose(config_name=name, overrides=list(overrides))
    add_defaults(cfg)
    with omegaconf_no_object_check():
        cfg = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True, enum_to_str=True))
    OmegaConf.set_struct(cfg, True)
    return cfg


def build(cfg):
    task = tasks.setup_task(cfg.task)
    return task.build_model(cfg.model)


def self_attention_kinds(layers):
    return {type(layer.self_attn) for layer in layers}


def test_every_lm_row_has_a_config():
    assert sorted(LM_ROWS) == sorted(os.path.splitext(os.path.basename(c))[0]
                                     for c in CONFIGS if c.startswith("lm/") and "wiki" not in c
                                     and "default_corpus" not in c)


BUILT_GROUPS = ("lm", "mt")  # RoBERTa configs (mlm/, glue/) are composed below; their models are
# built and trained by tests/models/test_roberta.py and tests/recipes/test_glue_prep.py.


@pytest.mark.parametrize("relpath", [c for c in CONFIGS if c.split(os.sep)[0] in BUILT_GROUPS])
def test_config_composes_and_builds(relpath, data_dir):
    group = relpath.split(os.sep)[0]
    tiny = {"lm": LM_TINY, "mt": MT_TINY}[group]
    full = compose_config(relpath)
    assert full.common.user_dir == "abc_fairseq"
    cfg = compose_config(relpath, ["task.data=" + data_dir] + tiny)
    if group == "lm" and "adaptive" in str(full.criterion):
        with open_dict(cfg):  # cutoffs below the tiny vocabulary; everything else as configured
            cfg.model.adaptive_input_cutoff = cfg.model.adaptive_softmax_cutoff = "100,200"
    torch.manual_seed(0)
    model = build(cfg)
    if group == "lm":
        assert full.model._name == "abc_lm"
        attn = full.model.decoder_self_attn
        kinds = self_attention_kinds(model.decoder.layers)
        assert kinds == ({MultiheadAttention} if attn == "softmax" else {ABCMultiheadAttention})
        if attn != "softmax":
            assert {layer.self_attn.strategy.name for layer in model.decoder.layers} == {attn}
    else:
        assert full.model._name.startswith("abc_transformer_")
        assert self_attention_kinds(model.encoder.layers) == {MultiheadAttention}
        assert self_attention_kinds(model.decoder.layers) == {ABCMultiheadAttention}
        assert {type(layer.encoder_attn) for layer in model.decoder.layers} == {ABCMultiheadAttention}


# Fields of the bash recipe that are paths or hardware-dependent by design.
NOT_COMPARED = {"data", "save_dir", "tensorboard_logdir", "user_dir", "update_freq", "max_tokens",
                "distributed_world_size", "distributed_num_procs", "nprocs_per_node", "device_id",
                "distributed_rank",
                # How the processes meet: the launcher's (torchrun's env:// rendezvous), not the config's.
                "distributed_init_method", "distributed_no_spawn",
                # Only read with base_layers > 0 (none here); fairseq's base_lm_architecture sets
                # False where its dataclass says 1.
                "base_shuffle"}
SECTIONS = ("common", "distributed_training", "task", "dataset", "model", "criterion", "optimizer",
            "lr_scheduler", "optimization", "checkpoint")


@pytest.mark.parametrize("row", LM_ROWS)
def test_lm_config_equals_bash_recipe(row, data_dir):
    """The bash recipe on 4 GPUs (dry run), parsed by fairseq-train's own parser, against the
    composed config: every field both define must agree (argparse flattens the sections)."""
    line = subprocess.run(
        ["bash", os.path.join(ROOT, "scripts", "lm", "train_wiki103.sh"), "--row", row, "--nproc-per-node", "4",
         "--data", data_dir, "--dry-run"], check=True, capture_output=True, text=True).stdout
    argv = shlex.split(line)
    argv = argv[argv.index("fairseq-train") + 1:]
    # 4 x 8192 tokens is the paper's 32768-token batch without accumulation, as the configs assume.
    assert argv[argv.index("--update-freq") + 1] == "1" and argv[argv.index("--max-tokens") + 1] == "8192"
    args = vars(options.parse_args_and_arch(options.get_training_parser(), argv))
    cfg = compose_config(os.path.join("lm", row + ".yaml"), ["task.data=" + data_dir])
    compared, diff = 0, {}
    for section in SECTIONS:
        for key, value in cfg[section].items():
            if key in NOT_COMPARED or key.startswith("_") or key not in args or OmegaConf.is_dict(value):
                continue
            bash = args[key]
            value = OmegaConf.to_container(value) if OmegaConf.is_list(value) else value
            if bash != value and str(bash) != str(value):
                diff["%s.%s" % (section, key)] = (bash, value)
            compared += 1
    assert not diff, "bash recipe vs config (bash, hydra): %s" % diff
    assert compared > 100
    assert args["arch"].startswith("abc_lm_wiki103") and cfg.model._name == "abc_lm"


@pytest.mark.parametrize("relpath", [c for c in CONFIGS if c.split(os.sep)[0] in ("mlm", "glue")])
def test_roberta_config_composes(relpath):
    cfg = compose_config(relpath)
    assert cfg.common.user_dir == "abc_fairseq"
    assert cfg.model._name.startswith("abc_roberta")
    expected_task = "masked_lm" if relpath.startswith("mlm") else "sentence_prediction"
    assert cfg.task._name == expected_task


def load_make_configs():
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("make_configs", os.path.join(ROOT, "scripts", "lm", "make_configs.py"))
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lm_configs_are_generated_from_the_rows(tmp_path, monkeypatch):
    """configs/lm/<row>.yaml is what make_configs.py writes from rows.tsv and the presets; a config
    edited by hand (or a row changed without regenerating) is caught by --check."""
    make_configs = load_make_configs()
    assert make_configs.main(["--check"]) == 0
    for row in make_configs.read_rows():
        assert open(os.path.join(CONFIG_DIR, "lm", row["row"] + ".yaml")).read() == make_configs.render(row)
    # --check fails on a stale config and names it; without --check the file is rewritten.
    stale = tmp_path / "lm"
    stale.mkdir()
    for name in os.listdir(os.path.join(CONFIG_DIR, "lm")):
        (stale / name).write_text(open(os.path.join(CONFIG_DIR, "lm", name)).read())
    (stale / "abc_n32.yaml").write_text((stale / "abc_n32.yaml").read_text().replace(
        "decoder_self_memory: 32", "decoder_self_memory: 48"))
    monkeypatch.setattr(make_configs, "CONFIG_DIR", str(stale))
    assert make_configs.main(["--check"]) == 1
    assert "decoder_self_memory: 48" in (stale / "abc_n32.yaml").read_text()
    assert make_configs.main([]) == 0 and make_configs.main(["--check"]) == 0
    assert "decoder_self_memory: 32" in (stale / "abc_n32.yaml").read_text()


def test_lm_rows_agree_with_the_presets_and_the_evaluation_contexts():
    """rows.tsv's n is the memory the row's preset and flags build (the ELU row has none: its n is
    the paper's entry), its label the strategy built (from the flags or the preset), and the
    evaluation contexts of evaluate_wiki103.sh are those of the results collector."""
    make_configs = load_make_configs()
    strategy_of_label = {"BASE": "softmax", "Linformer": "linformer", "ABC_RD": "random", "ABC_MLP": "abc",
                         "GSA": "gsa", "ELU": "elu", "RFA": "rfa", "T2R": "t2r"}
    for row in make_configs.read_rows():
        args = make_configs.model_args(row)
        assert args.decoder_self_attn == strategy_of_label[row["label"]], row["row"]
        if args.decoder_self_attn not in ("softmax", "elu"):
            assert args.decoder_self_memory == int(row["n"]), row["row"]
        else:
            assert (row["n"] == "-") == (args.decoder_self_attn == "softmax"), row["row"]
        assert args.decoder_layers == {"16l": 16, "32l": 32}[row["setting"]], row["row"]
    for setting, (_, contexts) in make_configs.SETTINGS.items():
        bash = subprocess.run(["bash", "-c", '. "$1"; lm_contexts "$2"', "x",
                               os.path.join(ROOT, "scripts", "lm", "common.sh"), setting],
                              capture_output=True, text=True, check=True).stdout.split()
        assert [int(c) for c in bash] == list(contexts), setting
