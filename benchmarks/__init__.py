"""Benchmarks for abc-fairseq, run as ``python -m benchmarks <suite> ...`` from the repository
root. Not part of the plugin (``abc_fairseq``, not installed with it): it imports the plugin.

Harness (one job each):

- ``__main__``: the command line, one sub-parser per suite in ``SUITES``.
- ``suite``: how a suite is declared (``Suite``: flags, cases, columns, ratios, notes, targets, plot).
- ``harness``: the one path of every suite (``run_suite``): one fresh worker process per case,
  interleaved ``--rounds``, the JSON record rewritten after each case, report, Markdown and PNG.
- ``report`` / ``plot``: the Markdown report and the PNG of any ``Suite``, and target checks.
- ``cli``: value types whose errors name the flag, the flags every suite shares, device checks.
- ``runner`` / ``_worker``: run one case in a fresh subprocess and survive its crashes.
- ``probes``: wall time of repeated calls and peak memory (CPU resident set, tensors, CUDA).
- ``environment``: versions, CPU, command; ``synthetic``: the model suites' dictionary.

Suites, each a module whose ``SUITE`` declares it, with its worker side in another module:
``attention`` (``attention_methods``), ``decode`` (``decode_model``), ``generate``
(``generate_model``), ``encode`` (``encode_model``), ``train`` (``train_model``). To add one, write
its module with a ``SUITE`` and add its name to ``__main__.SUITES``.
"""
