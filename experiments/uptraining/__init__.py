"""Uptraining evidence at CPU scale (issues 36 and 37): a softmax language model trained for P updates,
converted to ABC-64 and GSA-64 (``python -m abc_fairseq.convert``) and continued for U updates
(``scripts/lm/uptrain.sh``), against ABC-64, GSA-64 and softmax trained from scratch, with several
seeds, at the quickstart's model, data and optimiser. The translation part (Bible ES-EN) is
``experiments.bible_mt.uptrain``, beside the Bible study it shares its setting with.

Modules, one job each:

- ``settings``: the fixed setting (the quickstart's model and optimiser, budgets, seeds, the
  uptraining learning rate) and the run names.
- ``plan``: the ordered list of steps (train, convert, uptrain, evaluate) and their commands.
- ``owner``: the output folder's owner mark (a folder this driver did not create is refused).
- ``execute``: runs one step (worktree, environment, timing, resume, the record it leaves).
- ``run``: the command line that plans and runs the steps (``python -m experiments.uptraining.run``).
- ``logs``: reads the runs' records and fairseq-eval-lm logs back.
- ``tables``: the numbers the report shows (curves, per-seed tables, mean and spread) and their
  markdown.
- ``report``: writes ``docs/uptraining/results.*`` and ``docs/gsa/seeds.*``
  (``python -m experiments.uptraining.report``).
"""
