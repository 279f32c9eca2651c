"""Benchmarks for abc-fairseq, run as ``python -m benchmarks <suite> ...`` from the repository
root. Not part of the plugin (``abc_fairseq``, not installed with it): it imports the plugin.

A small harness and one module per suite (``generate`` reuses ``decode``'s methods and sizes).

Harness:

- ``__main__``: the command line, one sub-parser per suite listed in ``SUBCOMMANDS``.
- ``cli``: value types whose errors name the flag, the flags every suite shares, device checks.
- ``driver``: the one path of every suite (``run_suite``): one fresh worker process per case,
  interleaved rounds, the JSON record rewritten after each case, then report, Markdown and plot.
- ``runner`` / ``_worker``: run one ``Case`` in a fresh subprocess and survive its crashes.
- ``probes``: wall time of repeated calls and peak memory (CPU resident set, tensors, CUDA).
- ``report``: rows from worker results, number cells, Markdown tables, header and note lines,
  failure notes, ratios to a reference, targets.
- ``plot``: PNG line and bar plots (matplotlib, Agg backend); ``environment``: versions, CPU, command;
  ``synthetic``: the synthetic dictionary of the model suites.

Suites (the worker side of each in its ``*_methods`` / ``*_model`` module):

- ``attention``: forward+backward time and peak memory of causal attention (ABC, SDPA, fairseq
  MHA, flash-linear-attention's ABC, every strategy) and its targets.
- ``decode``: greedy decoding speed and attention state, softmax vs ABC, RFA, T2R (Figures 1-2).
- ``generate``: end-to-end translation with fairseq's ``SequenceGenerator`` (beam search and
  greedy on the Bible test set's sentence lengths, long outputs), softmax vs ABC, RFA, T2R;
  worker side in ``generate_model``.
- ``encode``: RoBERTa-base text encoding, softmax (fused, unfused) vs Linformer vs ABC (Table 4).
- ``train``: whole-model training throughput and memory through fairseq's trainer, ABC vs softmax
  (WikiText-103 LM and WMT MT architectures; issue 14), worker side in ``train_model``.

To add a suite ``foo``: write ``benchmarks/foo.py`` with ``NAME``, ``DESCRIPTION``,
``add_arguments(parser)``, ``validate(args, parser)``, ``measurements(args)`` (the cases, each a
worker spec naming a builder ``module:function`` that returns a ``_worker.Case``),
``describe(row)`` and ``summarise(rows, env, config, memory_probes) -> driver.Summary``, and add
``"foo"`` to ``__main__.SUBCOMMANDS``.
"""
