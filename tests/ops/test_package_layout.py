"""The package's layout rules, read from the source (no imports): no import cycle, op families with
the same file names, one module (``ops.backend``) that knows both the kernels and the PyTorch
path, no fairseq flag named below the fairseq layer, and small files."""

import ast
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "abc_fairseq"
OPS = PACKAGE / "ops"
FAMILIES = ("causal", "bidirectional", "gsa", "linear")
PYTORCH_FORMS = {"causal": "chunk.py", "bidirectional": "parallel.py", "gsa": "chunk.py", "linear": "chunk.py"}
MAX_LINES = 350
LONGER_ALLOWED = {"abc_fairseq/ops/causal/chunk_math.py"}  # the chunk math, one derivation


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path):
    """The abc_fairseq modules ``path`` imports (at module level or inside functions): for
    ``from X import a``, X and X.a (a submodule or a name; callers keep the modules)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def _graph():
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        # A module's own ancestors are imported before it whatever it says: not an edge.
        ancestors = {name.rsplit(".", i)[0] for i in range(1, name.count(".") + 1)}
        graph[name] = {d for d in _imports(path) if d in paths and d != name and d not in ancestors}
    return graph, paths


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_package_folder_has_an_init():
    """find_packages installs only folders with an __init__.py: a namespace folder works in a
    checkout and is missing from an installed plugin."""
    folders = {p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists()) == []


def test_no_import_cycle_in_the_package():
    graph, _ = _graph()
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_op_family_has_the_same_files(family):
    files = {p.name for p in (OPS / family).iterdir()}
    assert {"__init__.py", "naive.py", PYTORCH_FORMS[family]} <= files
    # Kernels and a backend choice come together: op.py hands both paths to ops.backend.
    assert ("op.py" in files) == ("triton" in files), files
    if "triton" in files:
        assert (OPS / family / "triton" / "function.py").exists()


def _imports_triton(path: Path) -> bool:
    """Whether ``path`` imports the triton package when it is imported (a module-level import)."""
    return any(isinstance(node, (ast.Import, ast.ImportFrom))
               and any((getattr(node, "module", None) or alias.name).split(".")[0] == "triton"
                       for alias in node.names)
               for node in ast.parse(path.read_text()).body)


def test_only_the_backend_knows_both_paths():
    """The kernels import neither the PyTorch path nor the backend; nothing outside a ``triton``
    folder imports a module that imports Triton (``ops.backend`` imports the kernels by name,
    when they run)."""
    graph, paths = _graph()
    pytorch_paths = {f"abc_fairseq.ops.{family}.{form[:-3]}" for family, form in PYTORCH_FORMS.items()}
    pytorch_paths |= {f"abc_fairseq.ops.{family}.{part}" for family in FAMILIES for part in ("op", "recurrent")}
    kernels = {name for name, path in paths.items() if _imports_triton(path)}
    assert "abc_fairseq.ops.causal.triton.forward" in kernels  # the rule sees the kernels
    for name, deps in graph.items():
        if ".triton" in name:
            assert not deps & (pytorch_paths | {"abc_fairseq.ops.backend"}), name
        else:
            assert not deps & kernels, name


def test_ops_and_layers_name_no_fairseq_flag():
    sources = [*OPS.rglob("*.py"), PACKAGE / "layers.py"]
    for path in sources:
        text = path.read_text()
        assert "--abc-backend" not in text and "ABC_BACKEND" not in text, path


def test_no_source_file_is_longer_than_the_bound():
    tracked = subprocess.run(["git", "ls-files", "*.py", "*.sh"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "*.py", "*.sh"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split()
    long = {name: n for name in tracked + untracked if os.path.exists(ROOT / name)
            and (n := len((ROOT / name).read_text().splitlines())) > MAX_LINES}
    assert set(long) <= LONGER_ALLOWED, long
