"""The recipes' records are JSON written by Python (scripts/lib/write_json.py), never pasted
together in the shell: MT's SAVE_DIR/run.json and the settings evaluate.sh hands to score.py."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITE_JSON = ROOT / "scripts" / "lib" / "write_json.py"


def write_json(*args, check=True):
    return subprocess.run([sys.executable, str(WRITE_JSON), *map(str, args)], capture_output=True, text=True,
                          check=check)


def test_fields_keep_their_order_and_types(tmp_path):
    path = tmp_path / "run.json"
    write_json(path, "dataset=tiny", 'model=a "quoted" name', "cross_memory:=16", "encoder_memory:=null",
               "data=dir with spaces/bin")
    text = path.read_text()
    assert json.loads(text) == {"dataset": "tiny", "model": 'a "quoted" name', "cross_memory": 16,
                                "encoder_memory": None, "data": "dir with spaces/bin"}
    assert text.startswith('{"dataset": "tiny", "model": ') and not list(tmp_path.glob("*.tmp.*"))
    assert json.loads(write_json("-", "beam:=5", "lenpen:=0.6").stdout) == {"beam": 5, "lenpen": 0.6}


def test_bad_fields_are_named_and_nothing_is_written(tmp_path):
    proc = write_json(tmp_path / "x.json", "beam:=five", check=False)
    assert proc.returncode == 2 and "beam" in proc.stderr and not (tmp_path / "x.json").exists()
    proc = write_json(tmp_path / "x.json", "no-separator", check=False)
    assert proc.returncode == 2 and "KEY=TEXT" in proc.stderr
    assert "usage" in write_json("--help").stdout


def test_no_recipe_pastes_json_in_the_shell():
    for script in ("scripts/mt/train.sh", "scripts/mt/evaluate.sh"):
        text = (ROOT / script).read_text()
        assert "write_json.py" in text and not re.search(r"""['"]\{\\?["']""", text), script
