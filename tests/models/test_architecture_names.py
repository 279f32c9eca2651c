"""abc_fairseq.architectures (the names a recipe checks without importing fairseq) against
fairseq's own registry once the plugin is loaded, and scripts/mt/train.sh's refusals that use it."""

import subprocess
import sys

import pytest

import abc_fairseq.models  # noqa: F401 (the plugin: registers its architectures)
from abc_fairseq.architectures import architecture_names
from abc_fairseq.models.abc_options import attention_choices as model_choices
from abc_fairseq.strategies import attention_choices

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
PLUGIN_MODELS = ("abc_lm", "abc_transformer", "abc_roberta")


def test_the_names_read_from_source_are_fairseqs_registry():
    from fairseq.models import ARCH_MODEL_NAME_REGISTRY

    registered = sorted(arch for arch, model in ARCH_MODEL_NAME_REGISTRY.items() if model in PLUGIN_MODELS)
    assert sorted(architecture_names()) == registered
    assert len(set(architecture_names())) == len(architecture_names())


def test_a_decorator_without_a_literal_name_is_refused(tmp_path):
    (tmp_path / "odd.py").write_text("NAME = 'x'\n@register_model_architecture('abc_lm', NAME)\ndef f(a):\n    pass\n")
    with pytest.raises(ValueError, match=r"odd\.py:2: register_model_architecture needs a literal name"):
        architecture_names(tmp_path)


def test_the_choices_are_one_function():
    assert model_choices is attention_choices
    assert attention_choices()[:2] == ("abc", "softmax")


def test_the_module_runs_without_fairseq():
    code = ("import sys; from abc_fairseq.architectures import architecture_names; "
            "from abc_fairseq.strategies import attention_choices; architecture_names(); attention_choices(); "
            "assert 'fairseq' not in sys.modules, 'fairseq was imported'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.parametrize("args,message", [
    (["--arch", "abc_transformer_nope"], "architecture 'abc_transformer_nope' is not registered"),
    (["--model", "nope"], "--model must be one of: abc softmax"),
])
def test_train_sh_refuses_an_unknown_architecture_or_model(tmp_path, args, message):
    proc = subprocess.run(["bash", "scripts/mt/train.sh", "--dataset", "tiny", "--data", str(tmp_path),
                           "--save-dir", str(tmp_path / "ckpt"), "--dry-run", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr[-2000:]
