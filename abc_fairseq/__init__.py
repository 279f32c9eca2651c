"""ABC, Attention with Bounded-memory Control (Peng et al.), as a fairseq ``--user-dir`` plugin.

- ``abc_fairseq.ops``: the math, plain PyTorch (no fairseq imports).
- ``abc_fairseq.layers``: ``ABCAttention``, the attention as a plain PyTorch layer (batch first, no fairseq).
- ``abc_fairseq.strategies``: the memory-control strategies (plain PyTorch), their registry and
  settings, W_phi (``PhiProjection``) and ``ABCAttentionSpec``, the built spec of one position.
- ``abc_fairseq.modules``: ``ABCMultiheadAttention`` (drop-in for fairseq's MultiheadAttention)
  and the transformer layers using it.
- ``abc_fairseq.models``: the options schema and the registered fairseq models (``abc_lm``,
  ``abc_transformer``, ``abc_roberta`` and their architectures). docs/architecture.md has the map.

Importing the package (``--user-dir abc_fairseq`` does) registers the models, lets fairseq
load checkpoints under torch's weights-only ``torch.load`` (``checkpoint_compat``), names the
newest intact checkpoint when one is truncated (``checkpoint_integrity``), restores
the one numpy 1.x alias fairseq 0.12 still needs (``numpy_compat``) and destroys a gloo process
group before the interpreter exits (``process_group_exit``). Without fairseq (not installed,
or not importable) only the plain PyTorch parts are available: ``ops``, ``strategies``, ``layers``.
"""


def _fairseq_importable() -> bool:
    try:
        import fairseq  # noqa: F401
    except ImportError:
        return False
    return True


if _fairseq_importable():
    from . import models, modules  # noqa: F401 (registers the models)
    from .checkpoint_compat import allow_fairseq_checkpoints
    from .checkpoint_integrity import guard_checkpoint_loading
    from .numpy_compat import restore_numpy_compat_long
    from .process_group_exit import destroy_gloo_group_at_exit

    allow_fairseq_checkpoints()
    guard_checkpoint_loading()
    restore_numpy_compat_long()
    destroy_gloo_group_at_exit()
