"""Extract the three WikiText-103 token files from the archive into a directory.

    python -m data_prep.wikitext.extract ARCHIVE OUT_DIR

The archive must hold ``wikitext-103/wiki.{train,valid,test}.tokens`` (the layout of
``wikitext-103-v1.zip``); they are written as ``OUT_DIR/wiki.{split}.tokens``. Anything else in
the archive is ignored, and a missing member is an error naming it, so a wrong archive (e.g. the
``-raw`` character-level one) fails here instead of producing an odd vocabulary later.
"""

import os
import shutil
import sys

from data_prep.lib.archive import open_zip
from data_prep.lib.cli import module_parser
from data_prep.lib.outputs import refuse_existing

SPLITS = ("train", "valid", "test")
MEMBER = "wikitext-103/wiki.{}.tokens"


def extract(archive, out_dir):
    members = [MEMBER.format(split) for split in SPLITS]
    with open_zip(archive, members, "extract", "is it wikitext-103-v1.zip, the word-level archive?") as zf:
        for split in SPLITS:
            # Streamed copy: the train split is ~540 MB uncompressed.
            with zf.open(MEMBER.format(split)) as src, open("%s/wiki.%s.tokens" % (out_dir, split), "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)


def main(argv=None):
    parser = module_parser("data_prep.wikitext.extract", __doc__)
    parser.add_argument("archive", help="wikitext-103-v1.zip")
    parser.add_argument("out_dir", help="existing directory for wiki.{train,valid,test}.tokens")
    args = parser.parse_args(argv)
    refuse_existing([os.path.join(args.out_dir, "wiki.%s.tokens" % s) for s in SPLITS], "extract")
    extract(args.archive, args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
