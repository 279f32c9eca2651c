"""Benchmarks for abc-fairseq, ``python -m benchmarks <suite>`` from the repository root (not part of
the installed plugin): each suite module's ``SUITE`` declares its flags, cases and report, and
``harness`` runs it (map: docs/architecture.md; methods and results: docs/benchmarks.md)."""

SUITES = ("attention", "decode", "encode", "generate", "train")
