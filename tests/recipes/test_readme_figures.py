"""Every figure in the README's result tables comes from the saved file its row links, and the row
states the machine, thread count and commit that file records, with its marks.

A result table is a README table whose last column is headed ``saved file: machine, threads,
commit``. Each of its rows ends in

    [name](docs/<path>.json|.md): <machine>, <N> thread(s), commit <hash>[, <mark>]...

where the machine, the threads and the commit may each read "... not recorded" when the file holds
no such record, and the marks are exactly those the file calls for:

- ``dirty tree``: the recorded commit ends in ``-dirty`` (uncommitted changes at run time);
- ``loaded machine``: a recorded 1-minute load average (at the start, or at a case's start or end)
  is above the machine's recorded core count;
- ``load not recorded``: the file records no load average or no core count;
- ``old harness``: the file was written by the earlier ``python -m abc_fairseq.benchmark``.

Every number in the other cells (the first, the row's label, excepted; code spans are names, not
figures) must equal, at the README's rounding, a value in the linked file: a number in its text or
JSON, or the length of one of its JSON lists (a count of records). A linked ``X.md`` is read with
its ``X.json`` beside it, which holds the environment record. The only other table allowed is the
paper-reproduction table, whose "ours" column holds no figures. Pure: reads files only.
"""

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ENV_HEADER = "saved file: machine, threads, commit"
MARKS = ("dirty tree", "loaded machine", "load not recorded", "old harness")
OLD_HARNESS = "python -m abc_fairseq.benchmark"
# A figure: digits (thousands may be comma-grouped), an optional fraction; not part of a word
# (fp16, sm_90, H100) but may end in "x" (3.24x). Trailing "x" ratios and ranges (30-32) split.
FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?=x\b|[^\w]|$)")
FILE_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
ENV_CELL = re.compile(r"^\[[^\]]+\]\((docs/[^)\s]+\.(?:json|md))\): (.+)$")


def split_row(line):
    """The cells of a Markdown table row (no '|' inside cells in this README)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def readme_tables():
    """(line number, header cells, [(line number, cells)]) of every table in the README."""
    lines = README.read_text(encoding="utf-8").splitlines()
    tables, i = [], 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$", lines[i + 1]):
            header, rows, j = split_row(lines[i]), [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append((j + 1, split_row(lines[j])))
                j += 1
            tables.append((i + 1, header, rows))
            i = j
        else:
            i += 1
    return tables


def figures(cell):
    """The numbers shown in a cell, as strings without thousands commas; code spans skipped."""
    text = re.sub(r"`[^`]*`", "", cell)
    return [whole.replace(",", "") + ("." + frac if frac else "") for whole, frac in FIGURE.findall(text)]


def walk(value):
    """Every number a JSON value holds: numeric values, numbers inside strings, list lengths."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield float(value)
    elif isinstance(value, str):
        yield from (float(n.replace(",", "")) for n in FILE_NUMBER.findall(value))
    elif isinstance(value, list):
        yield float(len(value))
        for item in value:
            yield from walk(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from walk(key)
            yield from walk(item)


class Saved:
    """A saved result: its numbers, and its environment record (None where it has none)."""

    def __init__(self, relpath):
        path = ROOT / relpath
        assert path.is_file(), f"{relpath} is linked from the README but does not exist"
        json_path = path if path.suffix == ".json" else path.with_suffix(".json")
        self.data = json.loads(json_path.read_text(encoding="utf-8")) if json_path.is_file() else {}
        numbers = list(walk(self.data))
        if path.suffix == ".md":
            numbers += [float(n.replace(",", "")) for n in FILE_NUMBER.findall(path.read_text(encoding="utf-8"))]
        self.shown = {}  # decimals -> every value formatted at that many decimals
        for decimals in range(5):
            quantum = Decimal(1).scaleb(-decimals)
            self.shown[decimals] = ({f"{v:.{decimals}f}" for v in numbers}
                                    | {str(Decimal(repr(v)).quantize(quantum, ROUND_HALF_UP)) for v in numbers})

    def holds(self, figure):
        decimals = len(figure.partition(".")[2])
        return decimals in self.shown and figure in self.shown[decimals]

    @property
    def _env(self):
        env = self.data.get("environment")
        return env if isinstance(env, dict) else {}

    @property
    def _machine_record(self):
        machine = self.data.get("machine")
        return machine if isinstance(machine, dict) else {}

    def commit(self):
        return self._env.get("commit") or self._machine_record.get("commit") or self.data.get("commit")

    def machine(self):
        config = self.data.get("config") if isinstance(self.data.get("config"), dict) else None
        gpu = self._env.get("cuda_device") or (self._env.get("device") if "capability" in self._env else None)
        if gpu and (config is None or config.get("device") == "cuda"):
            return gpu
        return self._env.get("cpu_model") or self._machine_record.get("cpu")

    def threads(self):
        config = self.data.get("config") if isinstance(self.data.get("config"), dict) else {}
        for value in (config.get("threads"), self._env.get("threads"), self._machine_record.get("threads"),
                      self.data.get("threads"), self._env.get("torch_default_threads")):
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def loaded(self):
        """True / False when the file records loads and a core count, None when it does not."""
        cores = self._env.get("usable_cpus")
        loads = []
        if isinstance(self._env.get("load_average"), list) and self._env["load_average"]:
            loads.append(self._env["load_average"][0])
        for result in self.data.get("results") or []:
            info = result.get("info") if isinstance(result, dict) else None
            for key in ("load_average_start", "load_average_end"):
                if isinstance(info, dict) and isinstance(info.get(key), list) and info[key]:
                    loads.append(info[key][0])
        if not cores or not loads:
            return None
        return max(loads) > cores

    def old_harness(self):
        return str(self._env.get("command", "")).startswith(OLD_HARNESS)


def words(machine):
    return re.sub(r"\((?:R|TM)\)", " ", machine).lower().split()


def check_environment(where, cell, saved):
    """The README's machine / threads / commit / marks for a row against the file's record."""
    fields = cell.split(", ")
    assert len(fields) >= 3, f"{where}: expected 'machine, N threads, commit X[, marks]', got {cell!r}"
    machine, threads, commit, marks = fields[0], fields[1], fields[2], fields[3:]

    recorded = saved.machine()
    if machine == "machine not recorded":
        assert not recorded, f"{where}: the file records the machine {recorded!r}"
    else:
        assert recorded, f"{where}: README names the machine {machine!r}, the file records none"
        assert set(words(machine)) <= set(words(recorded)), f"{where}: README says {machine!r}, file {recorded!r}"

    recorded = saved.threads()
    if threads == "threads not recorded":
        assert recorded is None, f"{where}: the file records {recorded} threads"
    else:
        match = re.fullmatch(r"(\d+) threads?", threads)
        assert match, f"{where}: unrecognised thread count {threads!r}"
        assert int(match.group(1)) == recorded, f"{where}: README says {threads}, the file records {recorded}"

    recorded = saved.commit()
    if commit == "commit not recorded":
        assert not recorded, f"{where}: the file records commit {recorded}"
    else:
        match = re.fullmatch(r"commit ([0-9a-f]{7,40})", commit)
        assert match, f"{where}: unrecognised commit {commit!r}"
        assert recorded, f"{where}: README names commit {match.group(1)}, the file records none"
        assert recorded.removesuffix("-dirty").startswith(match.group(1)), \
            f"{where}: README says commit {match.group(1)}, the file records {recorded}"

    unknown = [m for m in marks if m not in MARKS]
    assert not unknown, f"{where}: unrecognised mark(s) {unknown}; known: {MARKS}"
    assert len(set(marks)) == len(marks), f"{where}: a mark is repeated"
    due = {
        "dirty tree": bool(saved.commit()) and saved.commit().endswith("-dirty"),
        "loaded machine": saved.loaded() is True,
        "load not recorded": saved.loaded() is None,
        "old harness": saved.old_harness(),
    }
    for mark, needed in due.items():
        assert (mark in marks) == needed, \
            f"{where}: the mark {mark!r} must be {'present' if needed else 'absent'} (the file says so)"


def result_rows():
    rows = []
    for line, header, body in readme_tables():
        if header[-1] == ENV_HEADER:
            rows += [pytest.param(header, cells, id=f"README.md:{n}") for n, cells in body]
    return rows


@pytest.mark.parametrize("header,cells", result_rows())
def test_every_figure_is_in_the_file_the_row_links(header, cells, request):
    where = f"{request.node.callspec.id} ({cells[0]!r})"
    assert len(cells) == len(header), f"{where}: {len(cells)} cells under a {len(header)}-column header"
    match = ENV_CELL.match(cells[-1])
    assert match, f"{where}: unrecognised figure row: its last cell must be '[name](docs/...json|md): " \
                  f"machine, threads, commit[, marks]', got {cells[-1]!r}"
    saved = Saved(match.group(1))
    check_environment(where, match.group(2), saved)
    shown = [figure for cell in cells[1:-1] for figure in figures(cell)]
    assert shown, f"{where}: a result row without figures"
    missing = [figure for figure in shown if not saved.holds(figure)]
    assert not missing, f"{where}: {missing} not found (at the README's rounding) in {match.group(1)}"


def test_every_table_is_a_result_table_or_the_paper_table():
    tables = readme_tables()
    assert sum(header[-1] == ENV_HEADER for _, header, _ in tables) >= 3
    for line, header, body in tables:
        if header[-1] == ENV_HEADER:
            continue
        assert header[0] == "paper" and header[-1] == "ours", \
            f"README.md:{line}: a table with neither a '{ENV_HEADER}' column nor the paper's layout: {header}"
        figure_free = [i for i, name in enumerate(header) if i and name != "paper's figure"]
        for n, cells in body:
            assert len(cells) == len(header), f"README.md:{n}: {len(cells)} cells under {len(header)} columns"
            for i in figure_free:
                assert not figures(cells[i]), \
                    f"README.md:{n} ({cells[0]!r}): figures {figures(cells[i])} in {header[i]!r} with no saved file"


def test_the_first_screen_says_what_was_and_was_not_run():
    text = README.read_text(encoding="utf-8")
    first_screen = text[:text.index("\n|")]
    assert "King James Bible" in first_screen and "data_prep/default_corpus" in first_screen
    not_run = first_screen[first_screen.index("Not reproduced at full"):]
    for name in ("WikiText-103", "WMT14", "GLUE"):
        assert name in not_run.split("\n\n")[0], f"the first screen must say {name} was not reproduced"
    commands = re.search(r"```bash\n(.*?)```", text, re.S).group(1).splitlines()
    assert [c.split("#")[0].strip() for c in commands] == ["bash scripts/quickstart.sh", "bash scripts/run_tests.sh"]


def test_no_machine_paths():
    text = README.read_text(encoding="utf-8")
    assert not re.search(r"(?<![\w.])/(?:work|tmp|home|root|mnt)/", text), "a machine path in README.md"
