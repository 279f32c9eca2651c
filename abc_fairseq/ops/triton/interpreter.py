"""Triton's interpreter (``TRITON_INTERPRET=1``, how CI runs the kernels on CPU), made to set up
``triton.language`` once per launch instead of once per ``triton.jit`` helper call.

The interpreter swaps ``triton.language``'s builtins for NumPy versions when a kernel launches, and
again, by ``inspect.getmembers`` over ``tl``, ``tl.tensor`` and ``tl.math``, each time a kernel
calls a helper. The kernels here call helpers thousands of times per launch (the scan extracts a
row per chunk of its group, the exact path a column per slot), so that set-up took up to half of
a kernel test's time. Within a launch every helper call would set the same attributes again
(the interpreter never undoes a helper's set-up, only the launch's), so a helper whose language
modules the launch already set up skips it. What runs is unchanged; only the repetition goes.

``language_once_per_launch()`` is called when the kernels' shared helpers (``layout``) are
imported. It does nothing unless the interpreter is on and its internals are the ones this was
written against (Triton 3.x's ``_patch_lang`` and ``GridExecutor``); it is applied once per
import of Triton.
"""

import inspect
import os

_MARK = "_abc_fairseq_language_once_per_launch"


def language_once_per_launch() -> bool:
    """Under ``TRITON_INTERPRET=1``: set up ``triton.language`` once per launch. Returns whether
    the interpreter now does (False when it is off or its internals differ)."""
    # read as ops.backend.interpreting reads it (the kernels' modules do not import the backend)
    if os.environ.get("TRITON_INTERPRET", "0").lower() not in ("1", "true", "on", "yes"):
        return False
    import triton.language as tl
    from triton.runtime import interpreter

    if getattr(interpreter, _MARK, False):
        return True
    set_up, executor = getattr(interpreter, "_patch_lang", None), getattr(interpreter, "GridExecutor", None)
    if set_up is None or executor is None or not callable(getattr(executor, "__call__", None)):
        return False
    launch = executor.__call__
    runs = []  # per launch in progress: ids of the language modules already set up

    class _Nothing:
        def restore(self) -> None:
            pass

    def set_up_once(fn):
        if not runs:  # the launch's own set-up (undone when it ends)
            return set_up(fn)
        languages = {id(v) for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)}
        if languages <= runs[-1]:
            return _Nothing()
        runs[-1].update(languages)
        return set_up(fn)

    def launch_once(self, *args, **kwargs):
        runs.append(set())
        try:
            return launch(self, *args, **kwargs)
        finally:
            runs.pop()

    interpreter._patch_lang = set_up_once
    executor.__call__ = launch_once
    setattr(interpreter, _MARK, True)
    return True
