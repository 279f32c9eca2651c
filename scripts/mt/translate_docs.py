#!/usr/bin/env python3
"""Document-level translation with predicted target context (the ABC paper's IWSLT14 setting).

The model was trained on sliding windows: source = the current sentence and its (up to) W-1
preceding sentences, target likewise, joined by a separator token. At test time the target
context is not the reference but the model's own earlier output: sentences are translated in
document order, and for sentence i the decoder is forced to start with the model's translations
of sentences i-W+1 .. i-1 (each followed by the separator), then continues freely; only that
continuation - the current sentence, up to the first separator the model writes - is kept and
scored. Documents are processed in parallel:
step i translates sentence i of every document that has one.

The prefix is forced with fairseq's own ``prefix_tokens`` mechanism (right-padded, so every
document can have a context of a different length). Only one hypothesis survives the forced
steps (the other beams start at -inf on the first step), so the beam search proper starts from
the end of the prefix as if the decoder had been primed with it. fairseq switches its minimum
length rule off while any prefix is being forced, which would let a sentence end right after its
context (an empty translation); ``ContextPrefixGenerator`` puts that rule back: no end of
sentence on the first free step of each sentence. Scores include the prefix's log-probability,
the same constant for every hypothesis of a sentence; the length penalty counts the prefix too.

    python scripts/mt/translate_docs.py --data DATA_BIN --path CKPT --split test --output hyp.bpe \
        [--beam 5] [--lenpen 0.6] [--batch-size 64] [--cpu] [--user-dir abc_fairseq]

Reads DATA_BIN/eval/{split}.bpe.{src} and {split}.doc (written by the recipes) and writes one
hypothesis per source line (sentencepiece pieces, no separators), in corpus order.
"""

import argparse
import json
import os
import sys
import time


def build_generator_class():
    import torch
    from fairseq.sequence_generator import SequenceGenerator

    class ContextPrefixGenerator(SequenceGenerator):
        """SequenceGenerator that never ends a sentence on the first step after its forced
        prefix (fairseq's min_len=1 rule, which it skips while prefixes are forced). Callers pad
        prefix_tokens with one extra column so that this hook also runs on the step right after
        the longest prefix."""

        def _prefix_tokens(self, step, lprobs, scores, tokens, prefix_tokens, beam_size):
            lprobs, tokens, scores = super()._prefix_tokens(step, lprobs, scores, tokens, prefix_tokens, beam_size)
            free = prefix_tokens[:, step].eq(self.pad)
            first_free = free if step == 0 else free & prefix_tokens[:, step - 1].ne(self.pad)
            rows = first_free.repeat_interleave(beam_size)
            if bool(rows.any()):
                lprobs[rows, self.eos] = -torch.inf
            return lprobs, tokens, scores

    return ContextPrefixGenerator, torch


def read_documents(eval_dir, split, src):
    with open(os.path.join(eval_dir, "%s.bpe.%s" % (split, src)), encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f]
    with open(os.path.join(eval_dir, "%s.doc" % split), encoding="utf-8") as f:
        doc_ids = [line.rstrip("\n") for line in f]
    if len(sentences) != len(doc_ids):
        sys.exit("translate_docs: %s.bpe.%s and %s.doc differ in length" % (split, src, split))
    docs, order = {}, []
    for i, doc in enumerate(doc_ids):
        if doc not in docs:
            docs[doc] = []
            order.append(doc)
        elif order[-1] != doc:
            sys.exit("translate_docs: document %s is not contiguous in %s.doc" % (doc, split))
        docs[doc].append(i)
    return sentences, [docs[d] for d in order]


def context_window(items, i, window, sep):
    """The window ending at position i: items[i-window+1 .. i] joined by the separator."""
    joiner = " %s " % sep
    return joiner.join(items[max(0, i - window + 1):i + 1])


def target_prefix(predictions, i, window, sep):
    """Forced target prefix for sentence i: earlier predictions, each followed by the separator."""
    context = predictions[max(0, i - window + 1):i]
    return "".join("%s %s " % (p, sep) for p in context).strip()


def current_sentence(tokens, n_prefix, eos, pad, sep):
    """The token ids of the sentence being translated: what the model wrote after the forced
    prefix, up to (without) its first separator or end of sentence. A model that goes on past a
    separator has started a next sentence of its own, which is not part of this translation."""
    body = []
    for t in tokens[n_prefix:]:
        if t in (eos, sep):
            break
        if t != pad:
            body.append(t)
    return body


def translate(models, task, generator, torch, src_sentences, documents, window, sep, batch_size, use_cuda,
              log_every=20):
    src_dict, tgt_dict = task.source_dictionary, task.target_dictionary
    sep_index = tgt_dict.index(sep)
    if window > 1 and sep_index == tgt_dict.unk():
        sys.exit("translate_docs: the separator %r is not in the target dictionary" % sep)
    pad = tgt_dict.pad()
    hyps = [None] * len(src_sentences)
    doc_preds = [[] for _ in documents]  # per document: predictions so far (pieces)
    longest = max(len(d) for d in documents)
    t0 = time.time()
    for step in range(longest):
        active = [k for k, d in enumerate(documents) if step < len(d)]
        for start in range(0, len(active), batch_size):
            batch_docs = active[start:start + batch_size]
            src_items, prefixes = [], []
            for k in batch_docs:
                doc_src = [src_sentences[j] for j in documents[k][:step + 1]]
                src_line = context_window(doc_src, step, window, sep)
                src_items.append(src_dict.encode_line(src_line, add_if_not_exist=False, append_eos=True).long())
                prefix = target_prefix(doc_preds[k], step, window, sep) if window > 1 else ""
                prefixes.append(tgt_dict.encode_line(prefix, add_if_not_exist=False, append_eos=False).long()
                                if prefix else torch.LongTensor([]))
            dataset = task.build_dataset_for_inference(src_items, [t.numel() for t in src_items])
            sample = dataset.collater([dataset[i] for i in range(len(src_items))])
            # collater may sort by length; map back with sample["id"].
            ids = sample["id"].tolist()
            # One column more than the longest prefix: see ContextPrefixGenerator.
            width = 1 + max(p.numel() for p in prefixes)
            prefix_tokens = torch.full((len(ids), width), pad, dtype=torch.long)
            has_prefix = False
            for row, idx in enumerate(ids):
                p = prefixes[idx]
                if p.numel():
                    prefix_tokens[row, :p.numel()] = p
                    has_prefix = True
            if use_cuda:
                sample = {k: (v.cuda() if torch.is_tensor(v) else v) for k, v in sample.items()}
                sample["net_input"] = {k: (v.cuda() if torch.is_tensor(v) else v)
                                       for k, v in sample["net_input"].items()}
                prefix_tokens = prefix_tokens.cuda()
            with torch.no_grad():
                out = task.inference_step(generator, models, sample,
                                          prefix_tokens=prefix_tokens if has_prefix else None)
            for row, idx in enumerate(ids):
                k = batch_docs[idx]
                tokens = out[row][0]["tokens"].tolist()
                n_prefix = prefixes[idx].numel()
                body = current_sentence(tokens, n_prefix, tgt_dict.eos(), pad, sep_index)
                text = tgt_dict.string(torch.LongTensor(body)) if body else ""
                doc_preds[k].append(text)
                hyps[documents[k][step]] = text
        if log_every and (step + 1) % log_every == 0:
            print("translate_docs: sentence %d of %d per document done (%.0fs)" % (step + 1, longest, time.time() - t0),
                  file=sys.stderr)
    return hyps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="fairseq data directory (a recipe's DEST/bin)")
    parser.add_argument("--path", required=True, help="checkpoint to translate with")
    parser.add_argument("--split", default="test", help="valid or test (default test)")
    parser.add_argument("--output", required=True, help="hypotheses, one per source line (pieces)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--lenpen", type=float, default=0.6)
    parser.add_argument("--max-len-a", type=float, default=1.5,
                        help="maximum target length = a * source window length + b (default 1.5)")
    parser.add_argument("--max-len-b", type=int, default=20, help="(default 20)")
    parser.add_argument("--batch-size", type=int, default=64, help="documents decoded together (default 64)")
    parser.add_argument("--window", type=int, default=0, help="override the window size of prep.json")
    parser.add_argument("--max-docs", type=int, default=0,
                        help="translate only the first N documents (quick checks; the output then "
                             "covers only their sentences)")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--user-dir", default=None, help="fairseq plugin directory (default: <repo>/abc_fairseq)")
    args = parser.parse_args(argv)

    eval_dir = os.path.join(args.data, "eval")
    try:
        with open(os.path.join(eval_dir, "prep.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except OSError as e:
        sys.exit("translate_docs: cannot read %s/prep.json (%s); --data must be a recipe's DEST/bin" % (eval_dir, e))
    window = args.window or int(meta["window"])
    sep = meta.get("sep") or "<sep>"
    if args.beam < 1 or args.batch_size < 1:
        parser.error("--beam and --batch-size must be >= 1")

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    user_dir = args.user_dir or os.path.join(repo, "abc_fairseq")
    from fairseq import checkpoint_utils, utils

    utils.import_user_module(argparse.Namespace(user_dir=user_dir))
    Generator, torch = build_generator_class()
    use_cuda = torch.cuda.is_available() and not args.cpu
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [args.path], arg_overrides={"data": args.data})
    for model in models:
        model.eval()
        model.prepare_for_inference_(cfg)  # as fairseq-generate does
        if use_cuda:
            model.cuda()
    generator = Generator(models, task.target_dictionary, beam_size=args.beam, len_penalty=args.lenpen,
                          max_len_a=args.max_len_a, max_len_b=args.max_len_b)
    src_sentences, documents = read_documents(eval_dir, args.split, meta["src"])
    if args.max_docs:
        documents = documents[:args.max_docs]
        src_sentences = src_sentences[:documents[-1][-1] + 1]
    print("translate_docs: %d sentences in %d documents, window %d, beam %d, lenpen %g"
          % (len(src_sentences), len(documents), window, args.beam, args.lenpen), file=sys.stderr)
    hyps = translate(models, task, generator, torch, src_sentences, documents, window, sep,
                     args.batch_size, use_cuda)
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(h + "\n" for h in hyps)
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
