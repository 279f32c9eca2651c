"""Triton's interpreter for the kernel tests: CPU tensors, no GPU (how CI tests the kernels)."""

import importlib
import sys

# The kernels' packages: what the families share, and each family's kernels.
KERNEL_PACKAGES = ("abc_fairseq.ops.triton", "abc_fairseq.ops.causal.triton", "abc_fairseq.ops.gsa.triton",
                   "abc_fairseq.ops.bidirectional.triton")
# Triton decorates its own library functions (tl.sum, tl.max, ...) when it is imported, as
# interpreted or compiled functions depending on TRITON_INTERPRET at that moment; its compiled
# extension (triton._C) is the same either way and cannot be loaded twice.
PURE_PYTHON = ("triton", *KERNEL_PACKAGES)


def _modules(*prefixes):
    return [name for name in sys.modules
            if any(name == p or name.startswith(p + ".") for p in prefixes)]


def interpret_kernels():
    """Import Triton and the kernels afresh under TRITON_INTERPRET=1, whatever imported them
    before (a GPU test, torch), and put the earlier modules and environment back afterwards (a
    generator: conftest's ``interpreted_kernels`` fixture, which test modules ask for).
    ``ops.backend`` imports no Triton and is kept: one copy holds the backend rules and the
    failures seen, as the op modules imported before see them."""
    # each family's package, imported here when nothing has yet (a kernel test file run alone)
    parents = {name: importlib.import_module(name.rsplit(".", 1)[0]) for name in KERNEL_PACKAGES}
    from abc_fairseq.ops.utils import scoped_environment

    saved_attributes = {name: parent.__dict__.get("triton") for name, parent in parents.items()}
    fresh = lambda: [m for m in _modules(*PURE_PYTHON) if not m.startswith("triton._C")]  # noqa: E731
    saved_modules = {name: sys.modules.pop(name) for name in fresh()}
    with scoped_environment(TRITON_INTERPRET="1"):
        for kernels in ("causal.triton.function", "causal.triton.recurrent", "gsa.triton.function",
                        "bidirectional.triton.function"):
            importlib.import_module(f"abc_fairseq.ops.{kernels}")
        yield
        # The interpreted modules go even when nothing used Triton before: left in place, a later
        # test that compiles for a GPU (tools.kernel_launches records JITFunction launches) would
        # get the interpreter's functions, which it cannot see.
        for name in fresh():
            del sys.modules[name]
        sys.modules.update(saved_modules)
        for name, parent in parents.items():
            if saved_attributes[name] is not None:
                parent.triton = saved_attributes[name]
