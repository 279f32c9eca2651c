"""Triton's interpreter for the kernel tests: CPU tensors, no GPU (how CI tests the kernels)."""

import importlib
import os
import sys

PACKAGE = "abc_fairseq.ops.triton"
# Triton decorates its own library functions (tl.sum, tl.max, ...) when it is imported, as
# interpreted or compiled functions depending on TRITON_INTERPRET at that moment; its compiled
# extension (triton._C) is the same either way and cannot be loaded twice.
PURE_PYTHON = ("triton", PACKAGE)


def _modules(*prefixes):
    return [name for name in sys.modules
            if any(name == p or name.startswith(p + ".") for p in prefixes)]


def interpret_kernels():
    """Import Triton and the kernels afresh under TRITON_INTERPRET=1, whatever imported them
    before (a GPU test, torch), and put the earlier modules and environment back afterwards (a
    generator: conftest's ``interpreted_kernels`` fixture, which test modules ask for)."""
    parent = sys.modules["abc_fairseq.ops"]
    saved_attribute = parent.__dict__.get("triton")
    saved_env = os.environ.get("TRITON_INTERPRET")
    # dispatch imports no Triton: one copy keeps the backend rules and the failures seen, as the
    # ops modules imported before (which hold its functions) see them.
    fresh = lambda: [m for m in _modules(*PURE_PYTHON)  # noqa: E731
                     if not m.startswith("triton._C") and m != PACKAGE + ".dispatch"]
    saved_modules = {name: sys.modules.pop(name) for name in fresh()}
    os.environ["TRITON_INTERPRET"] = "1"
    importlib.import_module(PACKAGE + ".causal_function")
    yield
    if saved_modules:  # else nothing used Triton before: leave it imported (interpreted)
        for name in fresh():
            del sys.modules[name]
        sys.modules.update(saved_modules)
    if saved_attribute is not None:
        parent.triton = saved_attribute
    if saved_env is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = saved_env
