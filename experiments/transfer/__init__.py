"""Attention-transfer evidence at CPU scale (issue 46 item 3): a softmax language model trained
well (P = 1,200 updates, four times the quickstart's budget), converted to ABC-64 and GSA-64 with
and without attention transfer (``python -m abc_fairseq.convert``, then ``python -m
abc_fairseq.transfer``), and to a sliding window of 64 plus 4 sink tokens (no training at all),
each continued for U = 100 updates (``scripts/lm/uptrain.sh``), against ABC-64 and GSA-64 trained
from scratch to the same total updates and the source continued. Two seeds, the quickstart's model,
data and optimiser.

Modules, one job each:

- ``settings``: the budgets, the transfer stage's settings, the variants and the run names.
- ``plan``: the ordered steps and their commands (``experiments.uptraining``'s steps, checkpoints
  and executor, with a transfer step added).
- ``run``: the command line that plans and runs the steps (``python -m experiments.transfer.run``).
- ``report``: writes ``docs/uptraining/transfer_results.*`` (``python -m experiments.transfer.report``).
"""
