"""A strategy from outside the package: the example of docs/architecture.md ("Adding a strategy"),
written to a folder and imported as fairseq imports ``--user-dir``, after abc_fairseq. It becomes a
flag choice with its setting's flag, passes the generic tests the built-in strategies pass (every
form against its naive form, decoding, padding, dropout, the attention module, abc_lm and
abc_transformer), and a model fairseq-train trains with it decodes as it scores and reloads from its
checkpoint, in this process and in fairseq-eval-lm."""

import random
import re
import sys
from argparse import Namespace
from pathlib import Path

import pytest
import test_strategies
import test_strategies_dropout
import test_strategies_each
import test_strategies_lm
import test_strategies_module
import test_strategies_mt
import torch
from fairseq import checkpoint_utils, utils
from fairseq_helpers import fairseq, parse, parse_error

from abc_fairseq.models.abc_options import attention_choices
from abc_fairseq.strategies import STRATEGIES, Setting, SlotStrategy, register

pytestmark = pytest.mark.usefixtures("one_thread")

ROOT = Path(__file__).resolve().parents[2]
NAME, MODULE = "skip-global", "my_strategies"
LM = ["--task", "language_modeling", "--arch", "abc_lm", "--decoder-layers", "2", "--decoder-embed-dim", "32",
      "--decoder-ffn-embed-dim", "32", "--decoder-attention-heads", "2", "--decoder-self-memory", "4",
      "--tokens-per-sample", "32", "--decoder-self-attn", NAME]


def example_module() -> str:
    """The Python block of docs/architecture.md's section "Adding a strategy"."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    return re.search(r"```python\n(.*?)```", text[text.index("## Adding a strategy"):], re.S).group(1)


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    """The example as a ``--user-dir`` module, imported as fairseq-train imports it; afterwards the
    registry, ``sys.modules`` and fairseq's record of imported user dirs as they were (abc_lm's config
    keeps the unused ``skip_global_offset`` field it gained: config fields are never removed)."""
    folder = tmp_path_factory.mktemp("user") / MODULE
    folder.mkdir()
    (folder / "__init__.py").write_text(example_module())
    assert NAME not in attention_choices()
    before = dict(STRATEGIES)
    utils.import_user_module(Namespace(user_dir=str(folder)))
    yield folder
    STRATEGIES.clear()
    STRATEGIES.update(before)
    sys.modules.pop(MODULE, None)
    utils.import_user_module.memo.discard(str(folder))
    sys.path.remove(str(folder.parent))


def test_registered_after_import_it_is_a_choice_with_its_setting(user_dir, lm_dir, capsys):
    assert issubclass(STRATEGIES[NAME], SlotStrategy) and NAME in attention_choices()
    args = parse([lm_dir, "--user-dir", user_dir, *LM, "--skip-global-offset", "0"])
    assert (args.decoder_self_attn, args.skip_global_offset) == (NAME, 0)
    error = parse_error([lm_dir, "--user-dir", user_dir, *LM, "--skip-global-offset", "-1"], capsys)
    assert "argument --skip-global-offset: must be an integer in [0, 1024] (tokens), got -1" in error


def test_a_setting_may_not_take_the_name_of_a_model_option(user_dir):
    class Clash(STRATEGIES[NAME]):
        name = "clash"
        settings = (Setting("decoder_layers", "layers", "clashes with abc_lm's --decoder-layers"),)

    with pytest.raises(ValueError, match="--decoder-layers would take the place of ABCLanguageModelConfig's"):
        register(Clash)
    assert "clash" not in STRATEGIES


CAUSAL_CHECKS = [
    test_strategies.test_parallel_equals_recurrent_with_padding, test_strategies.test_future_does_not_leak,
    test_strategies.test_causal_padding_is_never_written, test_strategies.test_gradients_are_finite_with_padding,
    test_strategies.test_decoding_state_has_constant_size, test_strategies.test_parallel_equals_naive_reference,
    test_strategies_module.test_causal_module_full_equals_incremental_and_reorders,
]
BIDIRECTIONAL_CHECKS = [
    test_strategies.test_bidirectional_padding_is_never_written,
    test_strategies.test_bidirectional_equals_naive_reference,
    test_strategies.test_bidirectional_sees_the_whole_sequence,
]
EVERY_MODE_CHECKS = [
    test_strategies_dropout.test_fixed_mask_equals_the_reference_with_that_mask,
    test_strategies_dropout.test_evaluation_and_rate_zero_change_nothing,
    test_strategies_dropout.test_drawn_masks_are_unbiased, test_strategies_dropout.test_gradients_with_a_fixed_mask,
    test_strategies_each.test_training_cost_is_linear_in_length,
]


def _name(check):
    return check.__name__


@pytest.mark.parametrize("check", CAUSAL_CHECKS, ids=_name)
def test_the_generic_causal_tests(user_dir, check):
    check(NAME)


@pytest.mark.parametrize("mode", ["encoder", "cross"])
@pytest.mark.parametrize("check", BIDIRECTIONAL_CHECKS, ids=_name)
def test_the_generic_bidirectional_tests(user_dir, check, mode):
    check(NAME, mode)


@pytest.mark.parametrize("mode", ["causal", "encoder", "cross"])
@pytest.mark.parametrize("check", EVERY_MODE_CHECKS, ids=_name)
def test_the_generic_tests_of_every_mode(user_dir, check, mode):
    check(NAME, mode)


def test_the_generic_module_and_model_tests(user_dir, lm_dir, mt_dir):
    test_strategies_module.test_cross_module_caches_the_memory_and_reorders(NAME)
    test_strategies_module.test_encoder_module_ignores_padding(NAME)
    test_strategies_lm.test_lm_with_each_strategy(lm_dir, NAME)
    test_strategies_mt.test_translation_model_with_each_strategy(mt_dir, NAME)


def _lm_data(folder: Path) -> Path:
    """A binarised language-modelling corpus of 20 words."""
    rng = random.Random(0)
    words = [f"w{i}" for i in range(20)]
    for split, count in (("train", 80), ("valid", 20)):
        (folder / f"{split}.txt").write_text(
            "".join(" ".join(rng.choice(words) for _ in range(rng.randint(5, 16))) + "\n" for _ in range(count)))
    fairseq("preprocess", "--only-source", "--trainpref", folder / "train.txt", "--validpref", folder / "valid.txt",
            "--destdir", folder / "bin", "--workers", "1")
    return folder / "bin"


def test_trained_by_fairseq_train_decoded_and_reloaded(user_dir, tmp_path):
    data = _lm_data(tmp_path)
    save = tmp_path / "checkpoints"
    fairseq("train", data, "--user-dir", user_dir, *LM, "--skip-global-offset", "2", "--optimizer", "adam", "--lr",
            "1e-3", "--max-tokens", "256", "--max-update", "2", "--no-epoch-checkpoints", "--num-workers", "0",
            "--seed", "3", "--cpu", "--save-dir", save)
    checkpoint = save / "checkpoint_last.pt"
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task([str(checkpoint)])
    assert cfg.optimization.max_update == 2 and (cfg.model.decoder_self_attn, cfg.model.skip_global_offset) == (NAME, 2)
    model = models[0].double().eval()
    strategies = [layer.self_attn.strategy for layer in model.decoder.layers]
    assert {(s.name, s.options.get(type(s).settings[0])) for s in strategies} == {(NAME, 2)}

    tokens = torch.randint(task.dictionary.nspecial, len(task.dictionary), (2, 12),
                           generator=torch.Generator().manual_seed(1))
    full = model(tokens)[0]
    state = {}
    stepped = torch.cat([model.decoder(tokens[:, :t + 1], incremental_state=state)[0][:, -1:] for t in range(12)], 1)
    torch.testing.assert_close(stepped, full, rtol=0, atol=1e-10)

    log = fairseq("eval_lm", data, "--user-dir", user_dir, "--path", checkpoint, "--cpu", "--tokens-per-sample", "32",
                  "--max-tokens", "256", "--gen-subset", "valid")
    loss = float(re.search(r"Loss \(base 2\): ([\d.]+)", log).group(1))
    assert 2.0 < loss < 8.0  # near-uniform over ~24 symbols after 2 updates: a real loss
