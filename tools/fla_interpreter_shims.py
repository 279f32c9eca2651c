"""Shims that let fla's Triton kernels run under Triton's interpreter while they are counted
(``tools.interpreter_counter`` installs them for the counted run only)."""

# Compiled Triton makes the variable of a kernel's `for i in range(...)` a tensor (i.to(...) is
# valid); the interpreter runs Python's range, whose ints have no .to(). fla's kernels call it:
# their rewritten copies see a range yielding int32 scalars instead (a copy of their module's
# globals; the module itself is untouched).
TENSOR_LOOP_MODULES = ("fla.",)


def _tensor_range(*args):
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    bounds = [int(a.handle.data.item()) if isinstance(a, tl.tensor) else int(getattr(a, "value", a)) for a in args]
    for i in range(*bounds):
        yield tl.tensor(TensorHandle(np.array([i], dtype=np.int32), tl.int32), tl.int32)


def _tensor_loop_variables(original):
    def compile_and_exec(rewriter, tree):
        if not rewriter.fn.__module__.startswith(TENSOR_LOOP_MODULES):
            return original(rewriter, tree)
        import triton.runtime.interpreter as interpreter

        fn_globals = dict(rewriter.fn.__globals__, range=_tensor_range)
        for key, value in vars(interpreter).items():
            fn_globals.setdefault(key, value)
        namespace = dict(rewriter.kwargs)
        exec(compile(tree, filename=rewriter.filename, mode="exec"), fn_globals, namespace)
        return namespace[rewriter.fn.__name__]
    return compile_and_exec


def _forget_rewritten(interpreter) -> None:
    """Drop the interpreter's rewritten copies of the kernels that get tensor loop variables."""
    cache = interpreter.InterpretedFunction.rewritten_fn
    for fn in [fn for fn in cache if fn.__module__.startswith(TENSOR_LOOP_MODULES)]:
        del cache[fn]

