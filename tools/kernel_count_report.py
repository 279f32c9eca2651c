"""The problems ``tools.kernel_counts`` counts (ours and fla's ops on one set of inputs), the
counted run set beside ``tools.causal_cost``, and the markdown report."""

from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, List

from .interpreter_counter import DTYPES, FLAG_RATIO, InterpreterCounter, Launch

HEADER = "# Counted traffic and work of the Triton kernels under Triton's interpreter"


# The problems, and the ops run on them.
@dataclass
class Sizes:
    N: int
    batch: int
    heads: int
    d: int
    n: int
    chunk: int
    dtype: str  # "fp32" or "fp16"


def _inputs(sizes: Sizes, widths, seed: int):
    """Leaf tensors [B, H, N, w] (our layout), N(0, 1)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, DTYPES[sizes.dtype])
    return [torch.randn(sizes.batch, sizes.heads, sizes.N, w, generator=gen).to(dtype) for w in widths]


def _problem(op: str, sizes: Sizes):
    """(call, leaves): ``call()`` runs the op's forward on the leaves (which need gradients). fla's
    ops take the same problem in fla's layout, built by ``selfcheck.fla_peer`` before the count."""
    import torch

    from abc_fairseq.selfcheck import fla_peer

    q, k, v, x = _inputs(sizes, (sizes.d, sizes.d, sizes.d, sizes.n), seed=0)
    if op.endswith("gsa"):  # the gsa strategy's log gates: g = logsigmoid(x) / 8
        x = (torch.nn.functional.logsigmoid(x.float()) / 8.0).to(x.dtype)
    fla = op.startswith("fla-")
    leaves = [t.requires_grad_() for t in (fla_peer.to_fla_layout(q, k, v, x) if fla else (q, k, v, x))]
    if op == "abc":
        from abc_fairseq.ops.causal.op import causal_abc

        return (lambda: causal_abc(*leaves, chunk_size=sizes.chunk, backend="triton")), leaves
    if op == "gsa":
        from abc_fairseq.ops.gsa.op import causal_gsa

        return (lambda: causal_gsa(*leaves, chunk_size=sizes.chunk, backend="triton")), leaves
    kind = op.split("-", 1)[1]
    fla_op = fla_peer.fla_op(kind)
    return (lambda: fla_peer.fla_attention(kind, *leaves, op=fla_op)), leaves


def count(op: str, sizes: Sizes):
    """One forward + backward of ``op`` on ``sizes``, counted: (counter, output, leaves); the
    output's gradient is N(0, 1)."""
    import torch

    call, leaves = _problem(op, sizes)
    weight = torch.randn(leaves[0].shape, generator=torch.Generator().manual_seed(1)).to(leaves[0].dtype)
    counter = InterpreterCounter()
    with counter:
        with counter.during("forward"):
            out = call()
        with counter.during("backward"):
            torch.autograd.grad(out, leaves, weight)
    return counter, out.detach(), [t.detach() for t in leaves]


def reference_error(op: str, out, leaves) -> float:
    """max |out - ours on the PyTorch path| / max |ours|, in fp32: that the counted run computed the
    op (fla's outputs set against ours on the same problem)."""
    from abc_fairseq.ops.causal.op import causal_abc
    from abc_fairseq.ops.gsa.op import causal_gsa

    q, k, v, x = (t.float() for t in leaves)
    if op.startswith("fla-"):  # back from fla's layout [B, T, H, *] to ours
        q, k, v, x = (t.transpose(1, 2) for t in (q, k, v, x))
        out = out.transpose(1, 2)
    if op.endswith("gsa"):
        ref = causal_gsa(q, k, v, x, backend="torch")
    else:
        ref = causal_abc(q, k, v, x, backend="torch")
    return float((out.float() - ref).abs().max() / ref.abs().max())


# The report.
def _flags(meta: Dict) -> str:
    return ", ".join(k for k, v in meta.items() if v is True)


def model_name(launch: Launch) -> str:
    """The name ``tools.causal_cost`` gives this launch."""
    if launch.kernel == "chunk_scan_kernel":
        return f"chunk_scan_kernel ({'reverse' if launch.meta.get('REVERSE') else 'forward'})"
    return launch.kernel


def model_rows(counter: InterpreterCounter, sizes: Sizes) -> List[dict]:
    """Per launch of ``tools.causal_cost.causal_launches`` at ``sizes``: its bytes, multiply-adds
    and programs beside the counted ones. Its PyTorch rows before the first kernel are set against
    the forward's counted PyTorch ops, those after the last against the backward's."""
    from . import causal_cost

    args = dict(Z=sizes.batch * sizes.heads, N=sizes.N, d=sizes.d, dv=sizes.d, n=sizes.n, C=sizes.chunk,
                P=4 if sizes.dtype == "fp32" else 2)
    model = causal_cost.causal_launches(**args)
    kernels = [i for i, row in enumerate(model) if not row.name.startswith("PyTorch")]
    by_name = defaultdict(list)
    for launch in counter.launches:
        by_name[model_name(launch)].append(launch)
    glue = {phase: sum(op.bytes for op in counter.torch_ops if op.phase == phase) for phase in ("forward", "backward")}
    rows, glue_model = [], {"forward": [], "backward": []}
    for i, row in enumerate(model):
        if row.name.startswith("PyTorch"):
            glue_model["forward" if i < kernels[0] else "backward"].append(row)
            continue
        launches = by_name.pop(row.name, [])
        counted = dict(distinct=sum(sum(x.distinct.values()) for x in launches),
                       requested=sum(sum(x.requested.values()) for x in launches),
                       macs=sum(x.macs for x in launches), programs=sum(x.programs for x in launches))
        rows.append(dict(name=row.name, model_bytes=row.bytes, model_macs=row.macs, model_programs=row.programs,
                         **(counted if launches else {})))
    for name, launches in by_name.items():  # counted, not in the model
        rows.append(dict(name=name, model_bytes=None, distinct=sum(sum(x.distinct.values()) for x in launches)))
    for phase, listed in glue_model.items():
        names = ", ".join(r.name.split(": ", 1)[-1] for r in listed) or "none in the model"
        rows.append(dict(name=f"PyTorch ({phase}): {names}",
                         model_bytes=sum(r.bytes for r in listed) if listed else None, distinct=glue[phase]))
    rows.append(dict(name="model call", call="causal_launches(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"))
    for row in rows:
        if row.get("model_bytes") and row.get("distinct") is not None:
            row["ratio"] = row["distinct"] / row["model_bytes"]
            row["flag"] = abs(row["ratio"] - 1) > FLAG_RATIO
    return rows


def _n(x) -> str:
    return "-" if x is None else f"{x:,.0f}" if isinstance(x, (int, float)) else str(x)


def op_markdown(op: str, result: dict, N: int) -> str:
    """One op's section: launches, products, PyTorch ops, the model beside the counts."""
    lines = [f"## {op}\n", f"Output against ours on the PyTorch path (max abs difference / max abs): "
             f"{result['reference_error']:.1e}.\n",
             "| # | phase | kernel | flags | grid | programs | loads / program | loaded B (lanes) "
             "| loaded B (distinct) | stored B (lanes) | stored B (distinct) | dot MACs |", "|" + "---|" * 12]
    for i, x in enumerate(result["launches"]):
        lines.append(f"| {i + 1} | {x['phase']} | {x['kernel']} | {x['flags']} | {'x'.join(map(str, x['grid']))} | "
                     f"{x['programs']:,} | {x['calls'].get('load', 0) / x['programs']:.0f} | "
                     f"{_n(x['requested'].get('load', 0))} | {_n(x['distinct'].get('load', 0))} | "
                     f"{_n(x['requested'].get('store', 0))} | {_n(x['distinct'].get('store', 0))} | {_n(x['macs'])} |")
    total = lambda key, kind: sum(x[key].get(kind, 0) for x in result["launches"])  # noqa: E731
    lines.append(f"| | | total | | | {sum(x['programs'] for x in result['launches']):,} | | "
                 f"{_n(total('requested', 'load'))} | {_n(total('distinct', 'load'))} | "
                 f"{_n(total('requested', 'store'))} | "
                 f"{_n(total('distinct', 'store'))} | {_n(sum(x['macs'] for x in result['launches']))} |")
    lines += ["", "Products (`tl.dot`), by launch: operand types, input precision, tile M x N x K, calls (all "
              "programs), multiply-adds.\n", "| # | kernel | operands | precision | M x N x K | calls | MACs |",
              "|" + "---|" * 7]
    for i, x in enumerate(result["launches"]):
        for dot in x["dots"]:
            lines.append(f"| {i + 1} | {x['kernel']} | {dot['a']} x {dot['b']} | {dot['precision']} | "
                         f"{dot['M']} x {dot['N']} x {dot['K']} | {dot['calls']:,} | {dot['macs']:,} |")
    lines += ["", "PyTorch ops outside the launches, in order (after launch #: how many launches ran before; "
              "bytes: operands read once, results written once; fills and new tensors only written, "
              "index_select reads what it selects).\n",
              "| after launch # | phase | op | operands | bytes | scan length | sequential over N |", "|" + "---|" * 7]
    for t in result["torch_ops"]:
        steps = f"**yes: {N} dependent steps**" if t["sequential"] else ""
        lines.append(f"| {t['after_launch']} | {t['phase']} | {t['name']} | {'; '.join(t['shapes'])} | "
                     f"{_n(t['bytes'])} | {_n(t['scan_length'])} | {steps} |")
    if result.get("model"):
        lines += ["", "Against `tools.causal_cost` (bytes: the model counts every tensor once, so the distinct "
                  "count is its counterpart; flagged when more than 10% apart).\n",
                  "| launch | programs (model) | programs | bytes (model) | bytes (distinct) | ratio | bytes (lanes) "
                  "| MACs (model) | dot MACs | flag |", "|" + "---|" * 10]
        for r in result["model"]:
            if "call" in r:
                lines.append(f"| model: `tools.causal_cost.{r['call']}` |" + " |" * 9)
                continue
            ratio = f"{r['ratio']:.3f}" if "ratio" in r else "-"
            lines.append(f"| {r['name']} | {_n(r.get('model_programs'))} | {_n(r.get('programs'))} | "
                         f"{_n(r.get('model_bytes'))} | {_n(r.get('distinct'))} | {ratio} | {_n(r.get('requested'))} | "
                         f"{_n(r.get('model_macs'))} | {_n(r.get('macs'))} | {'**> 10%**' if r.get('flag') else ''} |")
    return "\n".join(lines) + "\n"


HALF = {"fp16", "bf16"}


def summary_markdown(ops: Dict[str, dict]) -> str:
    """One line per op: the totals of its launches and of the PyTorch ops between them, and the share
    of its dot products (multiply-adds) whose operands are both half precision."""
    lines = ["| op | launches | programs | loaded B (distinct) | stored B (distinct) | dot MACs | half operands | "
             "PyTorch ops moving data | their bytes | scans over N |", "|" + "---|" * 10]
    for op, result in ops.items():
        launches, moving = result["launches"], [t for t in result["torch_ops"] if t["bytes"]]
        total = lambda kind: sum(x["distinct"].get(kind, 0) for x in launches)  # noqa: E731
        macs = sum(x["macs"] for x in launches)
        half = sum(d["macs"] for x in launches for d in x["dots"] if {d["a"], d["b"]} <= HALF)
        share = f"{100 * half / macs:.0f}%" if macs else "-"
        lines.append(f"| {op} | {len(launches)} | {sum(x['programs'] for x in launches):,} | {total('load'):,} | "
                     f"{total('store'):,} | {macs:,} | {share} | {len(moving)} | "
                     f"{sum(t['bytes'] for t in moving):,} | {', '.join(result['sequential']) or '-'} |")
    return "\n".join(lines)


def op_record(op: str, sizes: Sizes) -> dict:
    """The counts of one op as plain data (the JSON's and the markdown's)."""
    counter, out, leaves = count(op, sizes)
    launches = [dict(kernel=x.kernel, phase=x.phase, meta=x.meta, flags=_flags(x.meta), grid=list(x.grid),
                     programs=x.programs, calls=dict(x.calls), requested=dict(x.requested),
                     distinct=dict(x.distinct), macs=x.macs,
                     dots=[dict(a=a, b=b, precision=p, M=M, N=N, K=K, calls=c, macs=c * M * N * K)
                           for (a, b, p, M, N, K), c in sorted(x.dots.items())])
                for x in counter.launches]
    torch_ops = [dict(vars(t), sequential=t.sequential(sizes.N)) for t in counter.torch_ops]
    return dict(launches=launches, torch_ops=torch_ops, reference_error=reference_error(op, out, leaves),
                sequential=[t["name"] for t in torch_ops if t["sequential"]],
                model=model_rows(counter, sizes) if op == "abc" else None)



def markdown(record: dict) -> str:
    env, sizes = record["environment"], record["sizes"]
    lines = [HEADER, "", f"Command: `{env['command']}` at commit {env['commit']} ({env['date']}, {env['cpu_model']}, "
             f"torch {env['torch']}).", "",
             f"Sizes: N = {sizes['N']}, batch {sizes['batch']}, heads {sizes['heads']}, d = dv = {sizes['d']}, "
             f"n = {sizes['n']}, chunk C = {sizes['chunk']} (ours; fla picks its own), {sizes['dtype']} inputs.", "",
             "Bytes count the active lanes only (a masked-off lane moves nothing): `lanes` is every active lane of "
             "every tl.load / tl.store (reloads included), `distinct` each address once per launch (a perfect "
             "cache). fla's autotuned kernels run their first configuration; its kernels' loop variables are made "
             "tensors as compiled Triton makes them (the interpreter gives Python ints, on which fla's `.to()` fails), "
             "and a scalar mask splat over a block is passed as bool (the interpreter keeps its operands' integer "
             "type and refuses it).",
             ""]
    if record.get("variables"):
        lines += ["Set for the run: " + ", ".join(f"`{k}={v}`" for k, v in record["variables"].items()) + ".", ""]
    if record["uncommitted"]:
        lines += ["**Uncommitted changes in the counted code:** " + "; ".join(record["uncommitted"]), ""]
    for op, reason in record["unavailable"].items():
        lines += [f"{op}: not counted ({reason}).", ""]
    if record["ops"]:
        lines += [summary_markdown(record["ops"]), ""]
    for op, result in record["ops"].items():
        lines.append(op_markdown(op, result, sizes["N"]))
    return "\n".join(lines)

