"""ABC, Attention with Bounded-memory Control (Peng et al.), as a fairseq ``--user-dir`` plugin.

- ``abc_fairseq.ops``: the math, plain PyTorch (no fairseq imports).
- ``abc_fairseq.layers``: ``ABCAttention``, the attention as a plain PyTorch layer (batch first, no fairseq).
- ``abc_fairseq.strategies``: the memory-control strategies (plain PyTorch), their registry and
  settings, W_phi (``PhiProjection``) and ``ABCAttentionSpec``, the built spec of one position.
- ``abc_fairseq.modules``: ``ABCMultiheadAttention`` (drop-in for fairseq's MultiheadAttention)
  and the transformer layers using it.
- ``abc_fairseq.models``: the options schema and the registered fairseq models (``abc_lm``,
  ``abc_transformer``, ``abc_roberta`` and their architectures). docs/architecture.md has the map.

Loading the fairseq plugin means importing ``abc_fairseq.models``: that registers the models and
calls ``abc_fairseq.plugin.install``, the one place that changes fairseq, torch and numpy (weights-only
checkpoint loading: ``checkpoint_compat``; a truncated checkpoint named with the newest intact
one: ``checkpoint_integrity``; the one numpy 1.x alias fairseq 0.12 still needs: ``numpy_compat``;
a gloo process group destroyed before the interpreter exits: ``process_group_exit``).
The rule: the plugin loads when ``abc_fairseq.models`` is imported, or when this package is
imported while fairseq already is (``--user-dir abc_fairseq``: fairseq's ``import_user_module``
imports the package after fairseq, then its ``models``). Otherwise importing ``ops``,
``strategies`` or ``layers`` imports no fairseq and changes nothing outside the package. A process
that imported one of them first and then hands ``--user-dir abc_fairseq`` to fairseq in the same
process must import ``abc_fairseq.models`` itself: fairseq skips a user dir already imported.
"""

import sys

if sys.modules.get("fairseq") is not None:  # loaded as fairseq's --user-dir (or after fairseq): the plugin
    from . import models  # noqa: F401 (registers the models; plugin.install)
