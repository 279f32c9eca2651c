"""The comparison of ``tools.paper_settings``: the settings read from a parsed command (batch per
update, head sizes, normalised values), set against the paper's, and the launcher's refusals."""

import ast
import math
from typing import Any, Callable, Dict, List

from .paper_recipes import GPU_FLAGS, DryRun, expected


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
