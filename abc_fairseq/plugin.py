"""The fairseq plugin's fixes to fairseq 0.12, installed in one place: ``install()``.

Loading the plugin (``--user-dir abc_fairseq``, or ``import abc_fairseq.models``, whose import
calls ``install``) names the models' switches in the ops' kernel-fallback warning
(``ops.backend.switch_hint``: the ops know only their ``backend`` argument) and changes five things
outside the package, each a fix for fairseq 0.12 on today's torch and numpy, or for resuming:

- ``checkpoint_compat.allow_fairseq_checkpoints``: adds the data-holder classes fairseq checkpoints
  hold to torch's weights-only allowlist (``torch.serialization.add_safe_globals``);
- ``checkpoint_integrity.guard_checkpoint_loading``: wraps
  ``fairseq.checkpoint_utils.load_checkpoint_to_cpu`` so that a truncated checkpoint is named with
  the newest intact one beside it;
- ``numpy_compat.restore_numpy_compat_long``: ``numpy.compat.long = int`` when numpy lacks it;
- ``process_group_exit.destroy_gloo_group_at_exit``: one ``atexit`` hook destroying a gloo
  process group before the interpreter shuts down;
- ``data_position.keep_data_position_across_layouts``: the training iterator's saved position also
  records its layout, so that a run resumed on another process count reads on where it stopped.

Nothing else in the package does any of these on import: the plain PyTorch parts (``ops``,
``strategies``, ``layers``) import no fairseq and change nothing.
"""

_installed = False
# How a fairseq user turns the kernels off or makes their failure an error.
SWITCH_HINT = ("--abc-backend torch (or --model-overrides \"{'abc_backend': 'torch'}\" for a trained model, "
               "or ABC_BACKEND=torch) skips the kernels; --abc-backend triton makes this an error.")


def install() -> bool:
    """Install the fixes above (idempotent: a second call does nothing); returns whether this call
    installed them. Needs fairseq importable."""
    global _installed
    if _installed:
        return False
    from .checkpoint_compat import allow_fairseq_checkpoints
    from .checkpoint_integrity import guard_checkpoint_loading
    from .data_position import keep_data_position_across_layouts
    from .numpy_compat import restore_numpy_compat_long
    from .ops import backend
    from .process_group_exit import destroy_gloo_group_at_exit

    allow_fairseq_checkpoints()
    guard_checkpoint_loading()
    restore_numpy_compat_long()
    destroy_gloo_group_at_exit()
    keep_data_position_across_layouts()
    backend.switch_hint = SWITCH_HINT
    _installed = True
    return True


def installed() -> bool:
    """Whether ``install`` has run in this process."""
    return _installed
