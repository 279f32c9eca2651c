"""Benchmarks for abc-fairseq, run as ``python -m benchmarks <suite>`` from the repository root (not
part of the installed plugin). Harness: ``__main__`` (the command line), ``suite`` (how a suite is
declared), ``harness`` (the one run path), ``_worker`` (one case in a fresh process), ``report``
(Markdown, targets, PNG), ``cli`` (shared flags), ``probes`` (time, peak memory), ``environment``,
``synthetic``. Suites, each a module whose ``SUITE`` declares it, the worker side in another:
``attention`` (``attention_methods``), ``decode``, ``encode``, ``generate``, ``train`` (``*_model``);
a new one is added to ``__main__.SUITES``. Methods, probes and results: docs/benchmarks.md."""
