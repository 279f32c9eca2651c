"""Undo a recipe's preprocessing on model output, for scoring against raw references.

A recipe's ``bin/eval/prep.json`` says which pipeline produced the data:

- ``spm`` (WMT14): sentencepiece pieces -> text (sentencepiece is lossless on raw text);
- ``moses-truecase-spm`` (IWSLT14 documents, the Bible corpus): pieces -> Moses tokens ->
  detruecase (capitalise the sentence start) -> Moses detokenisation (which also unescapes
  ``&amp;`` and friends).

Window separators are dropped first: a hypothesis for the current sentence should not contain
one, and if it does the text on both sides is kept (rather than guessing which part is which).
"""

import json
import os


class Postprocessor:
    def __init__(self, eval_dir):
        with open(os.path.join(eval_dir, "prep.json"), encoding="utf-8") as f:
            self.meta = json.load(f)
        import sentencepiece as spm

        self.spm = spm.SentencePieceProcessor(model_file=os.path.join(eval_dir, "spm.model"))
        self.pipeline = self.meta["pipeline"]
        self.sep = self.meta.get("sep")
        if self.pipeline not in ("spm", "moses-truecase-spm"):
            raise ValueError("unknown preprocessing pipeline %r in %s/prep.json" % (self.pipeline, eval_dir))
        self.tgt = self.meta["tgt"]
        self._detok = None

    def strip_separators(self, pieces_line):
        return " ".join(p for p in pieces_line.split() if p != self.sep) if self.sep else pieces_line

    def __call__(self, pieces_lines):
        """Model output (space-separated pieces, one sentence per item) -> detokenised text."""
        texts = [self.spm.decode(self.strip_separators(line).split()) for line in pieces_lines]
        if self.pipeline == "moses-truecase-spm":
            from .moses_prep import detokenize_lines

            texts = detokenize_lines(texts, self.tgt)
        return texts
