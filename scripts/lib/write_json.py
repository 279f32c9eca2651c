#!/usr/bin/env python3
"""Write a JSON object from the command line (the recipes' records, e.g. scripts/mt/train.sh's
SAVE_DIR/run.json), so that no shell builds JSON by pasting strings.

  python3 scripts/lib/write_json.py FILE KEY=TEXT KEY:=JSON ...

KEY=TEXT stores TEXT as a string; KEY:=JSON stores a JSON value (32, null, true, [1, 2]). The keys
keep their order. FILE is replaced as a whole (written aside, then renamed), so a reader never
sees half of it; FILE '-' prints the object on stdout instead (for a flag that takes JSON).
"""

import argparse
import json
import os
import sys


def field(text):
    """argparse type: KEY=TEXT or KEY:=JSON -> (key, value)."""
    key, sep, value = text.partition("=")
    if not sep or not key or key == ":":
        raise argparse.ArgumentTypeError("expects KEY=TEXT or KEY:=JSON, got %r" % text)
    if not key.endswith(":"):
        return key, value
    try:
        return key[:-1], json.loads(value)
    except ValueError:
        raise argparse.ArgumentTypeError("%s: %r is no JSON value" % (key[:-1], value)) from None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="write_json.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="the JSON file to write ('-': stdout)")
    parser.add_argument("fields", nargs="+", type=field, metavar="KEY=TEXT|KEY:=JSON")
    args = parser.parse_args(argv)
    if args.file == "-":
        print(json.dumps(dict(args.fields)))
        return 0
    tmp = "%s.tmp.%d" % (args.file, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(args.fields), f)
        f.write("\n")
    os.replace(tmp, args.file)


if __name__ == "__main__":
    sys.exit(main())
