"""Benchmarks for abc-fairseq, run as ``python -m abc_fairseq.benchmark <subcommand> ...``.

Subcommands live in their own modules and are listed in ``__main__.SUBCOMMANDS``:

- ``attention``: forward+backward time and peak memory of causal attention (ABC, SDPA, fairseq MHA).

To add a subcommand ``foo``: write ``abc_fairseq/benchmark/foo.py`` with ``DESCRIPTION`` (str),
``add_arguments(parser)`` and ``run(args) -> int``, and add ``"foo"`` to ``SUBCOMMANDS``.
Shared pieces a subcommand can reuse:

- ``cli_types``: argparse value types whose errors name the flag.
- ``timing``: median wall time of repeated calls, with a per-call time budget.
- ``memory``: peak memory probes (CPU resident set high-water mark, CUDA allocator peak).
- ``runner`` / ``_worker``: run one measurement in a fresh subprocess, survive its crashes.
- ``table``: Markdown tables.  ``environment``: versions, CPU, threads, date, command line.
- ``output``: JSON files.  ``plot``: PNG line plots (matplotlib, Agg backend).
"""
