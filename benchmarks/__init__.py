"""Benchmarks for abc-fairseq, run as ``python -m benchmarks <suite>`` from the repository root (not
part of the installed plugin). The harness: ``harness`` (what a suite declares and the one run
path), ``worker`` (one case in a fresh process: timing and memory probes), ``report`` (Markdown,
targets, PNG), ``flags`` (shared flags), ``fairseq_models`` (models built by fairseq's own parser),
``environment``. Each suite is a module whose ``SUITE`` declares its flags, cases, worker side and
report. Methods, probes and results: docs/benchmarks.md."""

SUITES = ("attention", "decode", "encode", "generate", "train")
