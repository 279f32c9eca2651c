"""Download GLUE and prepare it in fairseq's sentence-prediction layout with RoBERTa's BPE.

    python -m data_prep.glue.prepare --dest data-bin/glue [--tasks MNLI QNLI QQP SST-2 ...] [--mirror DIR]
    bash data_prep/glue/prepare.sh ...     (the same)

For each task, in DEST:

- ``raw/``: the task's archive (fetched through ``data_prep.lib.fetch``: resume, verified against
  the published sha256 pinned in ``data_prep/glue/SHA256SUMS``; ``--mirror DIR`` copies files of
  the same names from DIR instead, e.g. for offline use) and its extracted TSV files;
- ``TASK/``: ``{train,dev}.input0``, ``.input1`` (pair tasks) and ``.label`` as text, one example
  a line (MNLI also ``dev_mismatched``);
- ``TASK-bin/``: ``input0/``, ``input1/`` (BPE-encoded with RoBERTa's GPT-2 BPE, binarised with
  RoBERTa's dict.txt) and ``label/`` (classification: labels binarised with their own dictionary;
  STS-B: ``{train,valid}.label`` text with the score / 5), splits ``train`` and ``valid``
  (``valid1``: MNLI mismatched). This is what ``fairseq-train --task sentence_prediction`` reads.

Columns are taken by their header names (CoLA has no header: by position). Rows with missing
fields are skipped and counted. Every finished step leaves a stamp; a re-run skips it.
DEST must be absent, empty or an earlier output of this recipe: nothing else is overwritten.
Test sets carry no labels and are not prepared (evaluation is on dev, as in the paper's Table 4).
"""

import argparse
import csv
import os
import shutil
import sys
import zipfile
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

GLUE_BASE_URL = "https://dl.fbaipublicfiles.com/glue/data/"
MRPC_BASE_URL = "https://dl.fbaipublicfiles.com/senteval/senteval_data/"


class Task(NamedTuple):
    """One GLUE task: archive, folder inside it, splits (fairseq split <- TSV file), columns.

    inputs: column names of the one or two sentences (ints: positions, for header-less files).
    label: column of the label; regression tasks have a float score.
    """

    archive: str
    folder: str
    splits: Tuple[Tuple[str, str], ...]
    inputs: Tuple
    label: object
    header: bool = True
    regression: bool = False


TASKS: Dict[str, Task] = {
    "MNLI": Task("MNLI.zip", "MNLI", (("train", "train.tsv"), ("valid", "dev_matched.tsv"),
                                      ("valid1", "dev_mismatched.tsv")), ("sentence1", "sentence2"), "gold_label"),
    "QNLI": Task("QNLIv2.zip", "QNLI", (("train", "train.tsv"), ("valid", "dev.tsv")),
                 ("question", "sentence"), "label"),
    "QQP": Task("QQP-clean.zip", "QQP", (("train", "train.tsv"), ("valid", "dev.tsv")),
                ("question1", "question2"), "is_duplicate"),
    "SST-2": Task("SST-2.zip", "SST-2", (("train", "train.tsv"), ("valid", "dev.tsv")), ("sentence",), "label"),
    "RTE": Task("RTE.zip", "RTE", (("train", "train.tsv"), ("valid", "dev.tsv")), ("sentence1", "sentence2"), "label"),
    "MRPC": Task("", "MRPC", (("train", "train.tsv"), ("valid", "dev.tsv")), ("#1 String", "#2 String"), "Quality"),
    "CoLA": Task("CoLA.zip", "CoLA", (("train", "train.tsv"), ("valid", "dev.tsv")), (3,), 1, header=False),
    "STS-B": Task("STS-B.zip", "STS-B", (("train", "train.tsv"), ("valid", "dev.tsv")),
                  ("sentence1", "sentence2"), "score", regression=True),
    "WNLI": Task("WNLI.zip", "WNLI", (("train", "train.tsv"), ("valid", "dev.tsv")),
                 ("sentence1", "sentence2"), "label"),
}
PAPER_TASKS = ("MNLI", "QNLI", "QQP", "SST-2")
RECIPE = "glue/prepare"
CHECKSUMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "SHA256SUMS")
DONE = ".done"  # the stamp of a finished directory (extracted task, text splits, binarised data)
MRPC_FILES = ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt")
MRPC_DEV_IDS = "mrpc_dev_ids.tsv"


def log(message: str) -> None:
    print(f"glue/prepare: {message}", file=sys.stderr, flush=True)


def _fetch(url: str, dest: str, mirror: Optional[str], checksums: Sequence[str] = ()) -> None:
    """Fetch with the sha256 pinned in ``checksums`` (a user's override first) + SHA256SUMS."""
    from data_prep.lib.checksums import fetch_options
    from data_prep.lib.fetch import fetch

    fetch(url, dest, mirror=mirror, **fetch_options(os.path.basename(dest), [*checksums, CHECKSUMS]))


def download(name: str, raw: str, mirror: Optional[str], checksums: Sequence[str] = ()) -> str:
    """Fetch and extract task ``name`` into ``raw``; returns the folder holding its TSV files."""
    from data_prep.lib.dest import fresh_tmp, replace_dir

    task = TASKS[name]
    folder = os.path.join(raw, task.folder)
    if any(os.path.exists(os.path.join(folder, stamp)) for stamp in (DONE, ".extracted")):  # (older stamp)
        return folder
    tmp = fresh_tmp(folder)
    if name == "MRPC":
        _build_mrpc(raw, tmp, mirror, checksums)
        inner = tmp
    else:
        archive = os.path.join(raw, task.archive)
        _fetch(GLUE_BASE_URL + task.archive, archive, mirror, checksums)
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
        # The archives hold one top folder (QQP-clean.zip: QQP/, QNLIv2.zip: QNLI/).
        entries = [e for e in os.listdir(tmp) if not e.startswith(("__MACOSX", "."))]
        one = len(entries) == 1 and os.path.isdir(os.path.join(tmp, entries[0]))
        inner = os.path.join(tmp, entries[0]) if one else tmp
    open(os.path.join(inner, DONE), "w").close()
    replace_dir(inner, folder, DONE)
    shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _build_mrpc(raw: str, folder: str, mirror: Optional[str], checksums: Sequence[str] = ()) -> None:
    """MRPC ships as Microsoft's paraphrase files; GLUE's dev set is a list of id pairs."""
    for name in MRPC_FILES:
        _fetch(MRPC_BASE_URL + name, os.path.join(raw, name), mirror, checksums)
    _fetch(GLUE_BASE_URL + MRPC_DEV_IDS, os.path.join(raw, MRPC_DEV_IDS), mirror, checksums)
    with open(os.path.join(raw, MRPC_DEV_IDS), encoding="utf-8-sig") as f:
        dev_ids = {tuple(line.rstrip("\n").split("\t")[:2]) for line in f if line.strip()}
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(raw, MRPC_FILES[0]), encoding="utf-8-sig") as f:
        header, *rows = f.read().splitlines()
    with open(os.path.join(folder, "train.tsv"), "w", encoding="utf-8") as train, \
            open(os.path.join(folder, "dev.tsv"), "w", encoding="utf-8") as dev:
        for out in (train, dev):
            out.write(header + "\n")
        for row in rows:
            fields = row.split("\t")
            if len(fields) >= 5:
                (dev if (fields[1], fields[2]) in dev_ids else train).write(row + "\n")


def read_examples(path: str, task: Task) -> Tuple[List[Tuple[List[str], str]], int]:
    """(sentences, label) for each row of a TSV file; returns them and the number of rows skipped."""
    examples, skipped = [], 0
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        if task.header:
            header = next(rows)
            try:
                columns = [header.index(c) for c in task.inputs] + [header.index(task.label)]
            except ValueError as e:
                raise ValueError(f"{path}: expected the columns {task.inputs + (task.label,)}, found {header}") from e
        else:
            columns = list(task.inputs) + [task.label]
        for row in rows:
            if len(row) <= max(columns) or any(not row[c].strip() for c in columns):
                skipped += 1
                continue
            values = [" ".join(row[c].split()) for c in columns]
            examples.append((values[:-1], values[-1]))
    return examples, skipped


def write_text_splits(name: str, folder: str, out: str) -> List[str]:
    """TASK/{split}.input0/.input1/.label from the TSV files; returns the fairseq splits written."""
    task = TASKS[name]
    os.makedirs(out, exist_ok=True)
    written = []
    for split, filename in task.splits:
        examples, skipped = read_examples(os.path.join(folder, filename), task)
        if not examples:
            raise ValueError(f"{name} {filename}: no usable rows")
        for i in range(len(task.inputs)):
            with open(os.path.join(out, f"{split}.input{i}"), "w", encoding="utf-8") as f:
                f.writelines(sentences[i] + "\n" for sentences, _ in examples)
        with open(os.path.join(out, f"{split}.label"), "w", encoding="utf-8") as f:
            for _, label in examples:
                f.write((f"{float(label) / 5.0}" if task.regression else label) + "\n")
        log(f"{name} {split}: {len(examples)} examples" + (f" ({skipped} malformed rows skipped)" if skipped else ""))
        written.append(split)
    return written


def _preprocess(args: Sequence[str], log_path: str) -> None:
    """fairseq-preprocess in this process (one fairseq import for all tasks); its own log goes to
    DESTDIR/preprocess.log, ``log_path`` records the arguments."""
    from fairseq import options
    from fairseq_cli.preprocess import main as preprocess_main

    with open(log_path, "w") as log_file:
        log_file.write("fairseq-preprocess " + " ".join(args) + "\n")
    try:
        preprocess_main(options.get_preprocessing_parser().parse_args(list(args)))
    except SystemExit as e:  # argparse errors
        raise RuntimeError(f"fairseq-preprocess {' '.join(args)} failed (exit {e.code})") from None


def binarise(name: str, text_dir: str, bin_dir: str, bpe_dir: str, splits: List[str], workers: int) -> None:
    """BPE-encode and binarise the text splits of ``name`` into ``bin_dir`` (built aside, then moved)."""
    from data_prep.glue.roberta_bpe import encode_files
    from data_prep.lib.dest import fresh_tmp, replace_dir

    task = TASKS[name]
    tmp = fresh_tmp(bin_dir)
    prefixes = {"train": "trainpref", "valid": "validpref"}
    for i in range(len(task.inputs)):
        inputs = [os.path.join(text_dir, f"{split}.input{i}") for split in splits]
        outputs = [p + ".bpe" for p in inputs]
        encode_files(bpe_dir, inputs, outputs, workers)
        args = ["--only-source", "--srcdict", os.path.join(bpe_dir, "dict.txt"), "--workers", str(workers),
                "--destdir", os.path.join(tmp, f"input{i}")]
        args += _split_args(text_dir, splits, f"input{i}.bpe", prefixes)
        _preprocess(args, os.path.join(tmp, f"preprocess_input{i}.log"))
    label_dir = os.path.join(tmp, "label")
    if task.regression:
        os.makedirs(label_dir)
        for split in splits:
            shutil.copyfile(os.path.join(text_dir, f"{split}.label"), os.path.join(label_dir, f"{split}.label"))
    else:
        args = ["--only-source", "--workers", "1", "--destdir", label_dir]
        args += _split_args(text_dir, splits, "label", prefixes)
        _preprocess(args, os.path.join(tmp, "preprocess_label.log"))
    open(os.path.join(tmp, DONE), "w").close()
    replace_dir(tmp, bin_dir, DONE)


def _split_args(text_dir: str, splits: List[str], suffix: str, prefixes: Dict[str, str]) -> List[str]:
    """fairseq-preprocess prefixes: train, valid and (MNLI) valid1 as a second valid set."""
    args = ["--trainpref", os.path.join(text_dir, f"train.{suffix}")]
    valid = [os.path.join(text_dir, f"{split}.{suffix}") for split in splits if split.startswith("valid")]
    args += ["--validpref", ",".join(valid)]
    return args


def prepare(names: List[str], dest: str, mirror: Optional[str] = None, workers: int = 1,
            bpe_dir: Optional[str] = None, checksums: Sequence[str] = ()) -> Dict[str, str]:
    """Prepare ``names`` under ``dest``; returns task -> binarised directory. ``checksums``:
    checksum files whose entries override the pinned ``SHA256SUMS`` (a repackaging mirror)."""
    from data_prep.glue.roberta_bpe import fetch_bpe_files
    from data_prep.lib.dest import claim_dest, fresh_tmp, replace_dir

    known = ["gpt2_bpe", "raw"] + [n for task in TASKS for n in (task, f"{task}-bin")]
    dest = claim_dest(dest, RECIPE, known)
    bpe_dir = bpe_dir or os.path.join(dest, "gpt2_bpe")
    fetch_bpe_files(bpe_dir, mirror, [*checksums, CHECKSUMS])
    raw = os.path.join(dest, "raw")
    os.makedirs(raw, exist_ok=True)
    done = {}
    for name in names:
        bin_dir = os.path.join(dest, f"{name}-bin")
        if os.path.exists(os.path.join(bin_dir, DONE)):
            log(f"{name}: already prepared in {bin_dir}")
            done[name] = bin_dir
            continue
        folder = download(name, raw, mirror, checksums)
        text_dir = os.path.join(dest, name)
        text_tmp = fresh_tmp(text_dir)
        splits = write_text_splits(name, folder, text_tmp)
        binarise(name, text_tmp, bin_dir, bpe_dir, splits, workers)
        open(os.path.join(text_tmp, DONE), "w").close()
        replace_dir(text_tmp, text_dir, DONE)
        log(f"{name}: ready in {bin_dir}")
        done[name] = bin_dir
    return done


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="bash data_prep/glue/prepare.sh", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", required=True, help="output directory (e.g. data-bin/glue)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), metavar="TASK",
                        help=f"tasks to prepare (default: all: {' '.join(TASKS)}; "
                             f"the paper's: {' '.join(PAPER_TASKS)})")
    parser.add_argument("--mirror", help="take every file from this directory (same names as in the URLs) "
                                         "instead of the network; default $ABC_DATA_MIRROR")
    parser.add_argument("--bpe-dir", help="directory of encoder.json / vocab.bpe / dict.txt (default DEST/gpt2_bpe)")
    parser.add_argument("--workers", type=int, default=2, help="BPE and binarisation processes")
    parser.add_argument("--checksum-file", action="append", default=[], metavar="FILE",
                        help="lines '<sha256>  <name>' overriding the pinned data_prep/glue/SHA256SUMS for "
                             "the files they name (a mirror that repackaged them; tests)")
    args = parser.parse_args(argv)
    unknown = [t for t in args.tasks if t not in TASKS]
    if unknown:
        parser.error(f"--tasks: unknown {', '.join(unknown)}; choose from {' '.join(TASKS)}")
    try:
        for name, path in prepare(args.tasks, args.dest, args.mirror, max(1, args.workers), args.bpe_dir,
                                   args.checksum_file).items():
            print(f"{name}\t{path}")
    except Exception as e:  # fetch errors, malformed files, preprocess failures: one clear line
        print(f"glue/prepare: ERROR: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
