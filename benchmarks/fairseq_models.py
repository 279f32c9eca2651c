"""The models of the encode, decode, generate and train suites, built as ``fairseq-train`` builds
them: fairseq's own training parser reads a command line, and the task is made around a synthetic
dictionary, so that no data folder is read."""

from typing import List, Optional


def synthetic_dictionary(size: int):
    """A fairseq Dictionary of exactly ``size`` symbols (4 specials + ``w0``, ``w1``, ...)."""
    from fairseq.data import Dictionary

    dictionary = Dictionary()
    for i in range(size - len(dictionary)):
        dictionary.add_symbol(f"w{i}")
    return dictionary


def size_flags(sides, layers: Optional[int] = None, embed_dim: Optional[int] = None, heads: Optional[int] = None,
               ffn_dim: Optional[int] = None) -> List[str]:
    """``--{side}-layers`` and friends for each of ``sides`` ("encoder", "decoder"); None: the architecture's."""
    sizes = {"layers": layers, "embed-dim": embed_dim, "attention-heads": heads, "ffn-embed-dim": ffn_dim}
    return [word for side in sides for name, value in sizes.items() if value is not None
            for word in (f"--{side}-{name}", str(value))]


def fairseq_setup(argv: List[str], vocab: int):
    """(cfg, task) of ``fairseq-train <synthetic> ARGV``, the task's dictionary ``vocab`` symbols
    (``masked_lm``'s ``<mask>`` included)."""
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.tasks import TASK_REGISTRY

    import abc_fairseq.models  # noqa: F401  (registers the ABC architectures)

    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(options.get_training_parser(),
                                                                     ["<synthetic>", *argv]))
    task_class = TASK_REGISTRY[cfg.task._name]
    if cfg.task._name == "masked_lm":
        return cfg, task_class(cfg.task, synthetic_dictionary(vocab - 1))
    dictionary = synthetic_dictionary(vocab)
    return cfg, task_class(cfg.task, dictionary, dictionary)


def build_model(argv: List[str], vocab: int):
    """(model in eval mode, task) of ``fairseq-train <synthetic> ARGV``."""
    cfg, task = fairseq_setup(argv, vocab)
    return task.build_model(cfg.model).eval(), task
