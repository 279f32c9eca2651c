"""Every figure on the README's front page is read from a named field of its saved file.

Each README table is known here by its first header cell. For a table of figures, ``CELLS`` names,
for every (row, column), the file, the field (a function of the file's parsed content) and the
format: the README cell must equal the field's value in that format, so a file that changes under
the README fails this test, and a figure that happens to appear elsewhere in a file does not pass
it. Every other cell of such a table must hold no figure ("not run", words, names). The caption of a
table (the line above it) states once, for each file it draws on, the machine, threads and commit
that file records, built here from the file's own fields (``caption_record``). The paper's figures
are read from the collectors that print them beside ours (``scripts/*/collect_*.py``), and the
figures of the status box and the two commands from their files too (``PROSE``). These bindings
live in ``tests/readme_figures_helpers.py`` (tables, captions) and ``tests/readme_prose_helpers.py``
(prose). Pure: reads files.
"""

import re

import pytest
from readme_figures_helpers import CAPTION_RECORD, CELLS, FIGURE_FREE, ROOT, caption_record, linked, load
from readme_prose_helpers import PROSE

README = ROOT / "README.md"
MAX_LINES = 160  # "at most about 150"
# A figure: a number with a fraction, a comma-grouped number or a ratio (3.1x); plain small integers
# (Table 2a, n = 64, 32/8) are names of settings, not results.
FIGURE = re.compile(r"(?<![\w.:])(?:\d+\.\d+|\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?x)(?![\w.]*\d)")


# ----------------------------------------------------------------------------- reading the README
def readme_lines():
    return README.read_text(encoding="utf-8").splitlines()


def split_row(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def readme_tables():
    """{first header cell: (caption line, header cells, {row label: cells})} of every README table."""
    lines, tables, i = readme_lines(), {}, 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$", lines[i + 1]):
            header, rows, j = split_row(lines[i]), {}, i + 2
            while j < len(lines) and lines[j].startswith("|"):
                cells = split_row(lines[j])
                assert len(cells) == len(header), f"README.md:{j + 1}: {len(cells)} cells, {len(header)} columns"
                assert cells[0] not in rows, f"README.md:{j + 1}: the row {cells[0]!r} twice in one table"
                rows[cells[0]] = cells
                j += 1
            caption = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            assert header[0] not in tables, f"two README tables headed {header[0]!r}"
            tables[header[0]] = (caption, header, rows)
            i = j
        else:
            i += 1
    return tables


def shown_figures(text):
    """The figures in README text, code spans and link targets left out."""
    return FIGURE.findall(re.sub(r"`[^`]*`|\]\([^)]*\)", "", text))


# ----------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("table", sorted(CELLS))
def test_each_figure_is_its_files_field(table):
    tables = readme_tables()
    assert table in tables, f"the README has no table headed {table!r}"
    caption, header, rows = tables[table]
    for (label, column), (path, field, fmt) in CELLS[table].items():
        assert label in rows, f"{table}: no row {label!r}"
        assert column in header, f"{table}: no column {column!r}"
        value = field(load(path))
        expected = fmt.format(*value) if isinstance(value, tuple) else fmt.format(value)
        shown = rows[label][header.index(column)]
        assert shown == expected, f"{table}, {label}, {column}: README {shown!r}, {path} says {expected!r}"


@pytest.mark.parametrize("table", sorted(CELLS))
def test_each_caption_states_the_record_of_every_file_it_draws_on(table):
    caption = readme_tables()[table][0]
    for path in sorted({path for path, _, _ in CELLS[table].values()} & set(CAPTION_RECORD)):
        stated = f"]({linked(path)}): {caption_record(path)}"
        assert stated in caption, f"{table}: the caption must link {linked(path)} and state {caption_record(path)!r}:" \
                                  f" {caption!r}"


def test_no_figure_without_its_field():
    tables = readme_tables()
    unknown = set(tables) - set(CELLS) - FIGURE_FREE
    assert not unknown, f"README tables this test does not know: {sorted(unknown)}"
    for name, (_, header, rows) in tables.items():
        known = CELLS.get(name, {})
        for label, cells in rows.items():
            for column, cell in zip(header[1:], cells[1:]):
                if (label, column) not in known:
                    assert not shown_figures(cell), f"{name}, {label}, {column}: figures {shown_figures(cell)} " \
                                                    f"with no file field behind them"


def test_feature_table_links_evidence_in_every_cell():
    _, header, rows = readme_tables()["feature"]
    assert header[1:] == ["abc-fairseq", "fla's ABC / GSA layers", "fairseq's linformer example", "the paper's code"]
    for label, cells in rows.items():
        for column, cell in zip(header[1:], cells[1:]):
            assert cell == "-" or re.search(r"\]\([^)]+\)", cell), f"feature table, {label}, {column}: no link"


def test_paper_rows_say_not_run():
    """Nothing was run at the paper's scale: every paper table's "ours" reads "not run"."""
    for name, (_, header, rows) in readme_tables().items():
        if name.startswith("Table ") and "miniature" not in name:
            assert header[-1] == "ours", f"{name}: the last column must be 'ours'"
            for label, cells in rows.items():
                assert re.fullmatch(r"not run(: `[^`]+`)?", cells[-1]), \
                    f"{name}, {label}: ours must read 'not run' (and may name the recipe), not {cells[-1]!r}"


def prose():
    """The README without its tables and code blocks."""
    text = re.sub(r"^```.*?^```$", "", README.read_text(encoding="utf-8"), flags=re.S | re.M)
    return "\n".join(line for line in text.splitlines() if not line.startswith("|"))


def test_figures_outside_the_tables_come_from_their_files():
    """The status box, the commands' times, the captions: each figure is a file's field."""
    text = README.read_text(encoding="utf-8")
    quoted = []
    for path, field, template in PROSE:
        sentence = template.format(*field(load(path)))
        assert sentence in text, f"the README must say {sentence!r} ({path})"
        quoted += shown_figures(sentence)
    quoted += [f for path in CAPTION_RECORD for f in shown_figures(caption_record(path))]
    unknown = [f for f in shown_figures(prose()) if f not in quoted]
    assert not unknown, f"figures in the README's text with no file field behind them: {unknown}"


def test_first_screen_what_status_commands_contents():
    lines = readme_lines()
    assert len(lines) <= MAX_LINES, f"the README has {len(lines)} lines (at most about 150)"
    text = "\n".join(lines)
    first_screen = text[:text.index("\n## ")]
    status = [line for line in first_screen.splitlines() if line.startswith("> - ")]
    assert 4 <= len(status) <= 5, f"the status box has {len(status)} lines, not 4 or 5"
    for words in ("CPU", "checkpoints", "H100", "--abc-backend", "GSA"):
        assert any(words in line for line in status), f"the status box never mentions {words!r}"
    commands = re.search(r"```bash\n(.*?)```", first_screen, re.S).group(1).splitlines()
    assert [c.split("#")[0].strip() for c in commands] == ["bash scripts/quickstart.sh", "bash scripts/run_tests.sh"]
    assert "## Contents" in first_screen or "**Contents" in first_screen
    after = text[text.index("```bash"):]
    assert after.index("```python") < after.index("\n| "), "the layer snippet comes before the first table"


def test_toc_links_its_sections():
    text = README.read_text(encoding="utf-8")
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^## (.+)$", text, re.M)}
    for anchor in re.findall(r"\]\(#([^)]+)\)", text):
        assert anchor in anchors, f"the contents link #{anchor}, which no heading makes"


def test_linked_files_exist():
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(((?!https?:|#)[^)\s#]+)", text):
        assert (ROOT / target).exists(), f"the README links {target}, which does not exist"


def test_no_machine_paths():
    text = README.read_text(encoding="utf-8")
    assert not re.search(r"(?<![\w.])/(?:work|tmp|home|root|mnt)/", text), "a machine path in README.md"



def bibtex_field(entry, name):
    """The value of ``name = {...}`` in a BibTeX entry (braces balanced, whitespace collapsed)."""
    start = re.search(r"\b" + name + r"\s*=\s*\{", entry).end()
    depth, end = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(entry[end], 0)
        end += 1
    return " ".join(entry[start:end - 1].split())


def test_bibtex_agrees_with_citation_cff():
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    bibtex = re.search(r"```bibtex\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    paper, software = re.split(r"\n(?=@software)", bibtex)
    assert bibtex_field(software, "title") == cff["title"]
    assert bibtex_field(software, "version") == str(cff["version"])
    assert bibtex_field(software, "author") == "{" + cff["authors"][0]["name"] + "}"
    cited = cff["preferred-citation"]
    assert bibtex_field(paper, "title").replace("{ABC}", "ABC") == cited["title"]
    assert bibtex_field(paper, "year") == str(cited["year"])
    assert bibtex_field(paper, "eprint") == cited["identifiers"][0]["value"].removeprefix("arXiv:")
    authors = [f"{a['family-names']}, {a['given-names']}" for a in cited["authors"]]
    assert bibtex_field(paper, "author").split(" and ") == authors
