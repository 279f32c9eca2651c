"""The names of the plugin's fairseq architectures, read from its source without importing fairseq.

A recipe checks a user's ``--arch`` before it launches anything (``scripts/mt/train.sh``). Asking
fairseq's registry means importing fairseq (seconds a call); the names are the second argument of
every ``@register_model_architecture(model, name)`` in ``abc_fairseq/models``, and the model's own
name for every ``@register_model(name, dataclass=...)`` (fairseq registers that as an architecture
too), which this reads with ``ast``. ``tests/models/test_architecture_names.py`` holds them equal to fairseq's registry.

    python -m abc_fairseq.architectures       # one name a line
"""

import ast
from pathlib import Path
from typing import Tuple

MODELS_DIR = Path(__file__).resolve().with_name("models")
DECORATOR = "register_model_architecture"
MODEL_DECORATOR = "register_model"


def _literal(node, path: Path, decorator: str) -> str:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise ValueError(f"{path}:{node.lineno}: {decorator} needs a literal name to be read here")
    return node.value


def architecture_names(models_dir: Path = MODELS_DIR) -> Tuple[str, ...]:
    """Every architecture name the plugin registers, by file, then line."""
    found = []
    for path in sorted(models_dir.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            called = getattr(node.func, "id", None) if isinstance(node, ast.Call) else None
            if called == DECORATOR:  # the call itself stands for a missing name: no literal
                name = node.args[1] if len(node.args) == 2 else node
                found.append((path.name, node.lineno, _literal(name, path, DECORATOR)))
            elif called == MODEL_DECORATOR and (len(node.args) > 1 or any(k.arg == "dataclass" for k in node.keywords)):
                found.append((path.name, node.lineno, _literal(node.args[0], path, MODEL_DECORATOR)))
    return tuple(name for *_, name in sorted(found))


if __name__ == "__main__":
    print("\n".join(architecture_names()))
