"""The cheap incremental path is exact: a cross-attention memory built once per sentence for its
beams, reorders that copy nothing when nothing changes, the fused causal step, the causal state
at fixed addresses (steps in place, beam reorders gathered by the next step, no host reads), and
beam search through fairseq's SequenceGenerator scoring what a full forward pass scores."""

import pytest
import torch
from attention_helpers import E, H, make_attention, step_by_step
from fairseq.sequence_generator import SequenceGenerator
from fairseq_helpers import build as build_model
from ops_helpers import no_host_reads

from abc_fairseq.modules.abc_attention import ORDER_KEY
from abc_fairseq.modules.beam_memory import ROWS_KEY, reorder_plan
from abc_fairseq.ops import ABCState, causal_abc, causal_abc_step
from abc_fairseq.strategies._common import PAD_LOGIT

pytestmark = pytest.mark.usefixtures("one_thread")
CROSS_STRATEGIES = ["abc", "rfa", "t2r", "window"]
BEAM, SENTENCES, S, T = 3, 2, 7, 4


def beam_batch(kdim=E, seed=0):
    """Encoder output [S, SENTENCES x BEAM, kdim], each sentence repeated BEAM times (as the
    generator repeats it), sentence 1 left-padded; decoder queries [T, SENTENCES x BEAM, E]."""
    g = torch.Generator().manual_seed(seed)
    enc = torch.randn(S, SENTENCES, kdim, generator=g, dtype=torch.float64).repeat_interleave(BEAM, dim=1)
    mask = torch.zeros(SENTENCES, S, dtype=torch.bool)
    mask[1, :3] = True
    dec = torch.randn(T, SENTENCES * BEAM, E, generator=g, dtype=torch.float64)
    return enc, mask.repeat_interleave(BEAM, dim=0), dec


def decode(attn, enc, mask, dec, state, order=None):
    """Step through dec with the cached memory; reorder the state with ``order`` after step 0."""
    outs = []
    for t in range(dec.shape[0]):
        outs.append(attn(dec[t:t + 1], enc if t == 0 else None, None if t else enc,
                         key_padding_mask=mask, incremental_state=state, static_kv=True)[0])
        if t == 0 and order is not None:
            attn.reorder_incremental_state(state, order)
    return torch.cat(outs)


@pytest.mark.parametrize("name", CROSS_STRATEGIES)
def test_cross_memory_is_built_once_per_sentence_and_exact(name):
    attn, _ = make_attention("cross", name, memory=6, kdim=12)
    attn.set_beam_size(BEAM)
    enc, mask, dec = beam_batch(kdim=12)
    full, _ = attn(dec, enc, enc, key_padding_mask=mask, static_kv=True)  # no cache: one memory per row
    state = {}
    inc = decode(attn, enc, mask, dec, state)
    torch.testing.assert_close(inc, full, rtol=0, atol=1e-12)
    buffer = attn._get_input_buffer(state)
    assert int(buffer[ROWS_KEY]) == BEAM
    assert all(t.shape[0] == SENTENCES for key, t in buffer.items() if key != ROWS_KEY)


@pytest.mark.parametrize("name", CROSS_STRATEGIES)
def test_cross_memory_follows_beam_reorders_and_shrinking(name):
    attn, _ = make_attention("cross", name, memory=6, kdim=12)
    attn.set_beam_size(BEAM)
    enc, mask, dec = beam_batch(kdim=12)
    full, _ = attn(dec, enc, enc, key_padding_mask=mask, static_kv=True)
    orders = {
        "within sentences": torch.tensor([2, 0, 0, 4, 5, 3]),  # beams move, sentences stay: no copy
        "sentence 0 finished": torch.tensor([5, 3, 3]),
        "sentences swapped": torch.tensor([3, 4, 5, 0, 1, 2]),
        "sentences mixed in a group": torch.tensor([0, 3, 1, 4, 2, 5]),  # one memory per row then
    }
    for what, order in orders.items():
        state = {}
        decode(attn, enc, mask, dec[:1], state)
        before = dict(attn._get_input_buffer(state))
        attn.reorder_incremental_state(state, order)
        rest = decode(attn, None, None, dec[1:, order], state)
        torch.testing.assert_close(rest, full[1:, order], rtol=0, atol=1e-12, msg=what)
        after = attn._get_input_buffer(state)
        if what == "within sentences":
            assert all(after[key] is before[key] for key in before if key != ROWS_KEY)
        if what == "sentences mixed in a group":
            assert ROWS_KEY not in after and next(iter(after.values())).shape[0] == 6


def test_distinct_rows_keep_one_memory_each():
    """beam_size set, but the rows are different sentences: nothing is shared, still exact."""
    attn, _ = make_attention("cross", kdim=12)
    attn.set_beam_size(BEAM)
    enc = torch.randn(S, 6, 12, dtype=torch.float64)
    dec = torch.randn(T, 6, E, dtype=torch.float64)
    full, _ = attn(dec, enc, enc, static_kv=True)
    state = {}
    torch.testing.assert_close(decode(attn, enc, None, dec, state), full, rtol=0, atol=1e-12)
    buffer = attn._get_input_buffer(state)
    assert ROWS_KEY not in buffer and buffer["key_memory"].shape[0] == 6


def test_unchanged_order_copies_nothing():
    attn, _ = make_attention("causal")
    x = torch.randn(5, 4, E, dtype=torch.float64)
    reference, _ = step_by_step(attn, x)
    _, state = step_by_step(attn, x[:3])
    before = dict(attn._get_input_buffer(state))
    attn.reorder_incremental_state(state, torch.arange(4))
    after = attn._get_input_buffer(state)
    assert all(after[key] is before[key] for key in before)
    rest, _ = step_by_step(attn, x[3:], state)
    torch.testing.assert_close(rest, reference[3:], rtol=0, atol=1e-12)


def test_reorder_plan_sees_an_order_changed_in_place():
    order = torch.arange(6)
    assert reorder_plan(order, BEAM, 2) == (None, BEAM)
    order[:3] = torch.tensor([3, 4, 5])  # SequenceGenerator edits its orders in place
    index, rows = reorder_plan(order, BEAM, 2)
    assert rows == BEAM and index.tolist() == [1, 1]


@pytest.mark.parametrize("B,n,d,pad", [(1, 1, 4, 0), (3, 5, 8, 2), (2, 8, 16, 4)])
def test_fused_step_equals_the_parallel_form_with_constant_state(B, n, d, pad):
    g = torch.Generator().manual_seed(B * n + d)
    q, k, v = (torch.randn(B, H, 9, d, generator=g, dtype=torch.float64) for _ in range(3))
    logits = 4 * torch.randn(B, H, 9, n, generator=g, dtype=torch.float64)
    logits[-1, :, :pad] = PAD_LOGIT  # the last sequence left-padded
    full = causal_abc(q, k, v, logits)
    state, outs, sizes = None, [], set()
    for t in range(9):
        out, state = causal_abc_step(*(x[:, :, t:t + 1] for x in (q, k, v, logits)), state)
        outs.append(out)
        sizes.add(state.nbytes())
    torch.testing.assert_close(torch.cat(outs, dim=2), full, rtol=0, atol=1e-10)
    assert len(sizes) == 1 and isinstance(state, ABCState)


def _causal_buffer(attn, state):
    """The causal state's tensors in the incremental state (the pending reorder apart)."""
    return {name: t for name, t in attn._get_input_buffer(state).items() if name != ORDER_KEY}


@pytest.mark.parametrize("name", ["abc", "gsa"])
def test_causal_state_stays_at_its_addresses_through_steps_and_beam_reorders(name):
    attn, _ = make_attention("causal", name)
    x = torch.randn(9, 4, E, dtype=torch.float64)
    order = torch.tensor([2, 2, 0])  # beams repeat, swap and drop rows
    reference, _ = step_by_step(attn, x[:, order])  # the reordered batch from scratch
    state, outs, addresses, held = {}, [], set(), []
    for t in range(9):
        if t == 5:
            before = _causal_buffer(attn, state)
            attn.reorder_incremental_state(state, order)
            order[0] = 1  # the caller edits its order afterwards (the generator does): recorded, not held
            assert all(_causal_buffer(attn, state)[key] is before[key] for key in before)  # nothing copied
        inputs = x[t:t + 1, [2, 2, 0]] if t >= 5 else x[t:t + 1]
        with no_host_reads():
            outs.append(attn(inputs, inputs, inputs, incremental_state=state)[0])
        held.append(_causal_buffer(attn, state))  # held: a new tensor could not reuse a freed address
        addresses.add(tuple(tensor.data_ptr() for tensor in held[-1].values()))
    assert len(addresses) == 1  # the same storage at every step, after the reorder too
    assert ORDER_KEY not in attn._get_input_buffer(state)  # the step gathered the pending order
    torch.testing.assert_close(torch.cat(outs[5:]), reference[5:], rtol=0, atol=1e-10)


def test_reorders_compose_until_the_next_step():
    attn, _ = make_attention("causal")
    x = torch.randn(6, 4, E, dtype=torch.float64)
    first, second = torch.tensor([3, 1, 0, 2]), torch.tensor([1, 1, 3])
    reference, _ = step_by_step(attn, x[:, first[second]])
    _, state = step_by_step(attn, x[:4])
    attn.reorder_incremental_state(state, first)
    attn.reorder_incremental_state(state, second)
    rest, _ = step_by_step(attn, x[4:, first[second]], state)
    torch.testing.assert_close(rest, reference[4:], rtol=0, atol=1e-10)


TINY = ["--encoder-embed-dim", "32", "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
        "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
        "--dropout", "0"]
SIZES = {"abc": ("5", "3"), "rfa": ("8", "4"), "t2r": ("6", "2")}
EOS_BOOST = {"abc": 2.5, "rfa": 2.5, "t2r": -2.5}  # eos row scaled: hypotheses end at different steps


@pytest.mark.parametrize("name", list(SIZES))
def test_beam_search_shares_memories_and_scores_equal_rescoring(mt_dir, name):
    """SequenceGenerator, beam 3, left-padded sources, eos likely (sentences finish at different
    steps and leave the batch): every hypothesis' token scores equal a full forward pass, and the
    cross attention read one memory per sentence."""
    cross, causal = SIZES[name]
    task, model = build_model([mt_dir, "--task", "translation", "-s", "src", "-t", "tgt", "--arch",
                               "abc_transformer_tiny", *TINY, "--decoder-cross-attn", name, "--decoder-self-attn",
                               name, "--decoder-cross-memory", cross, "--decoder-self-memory", causal], 2)
    model.eval()
    d = task.target_dictionary
    with torch.no_grad():
        model.decoder.output_projection.weight[d.eos()] *= EOS_BOOST[name]
    g = torch.Generator().manual_seed(3)
    sentences = [torch.cat([torch.randint(d.nspecial, len(d), (n - 1,), generator=g), torch.tensor([d.eos()])])
                 for n in (8, 5, 3, 7)]
    src = torch.full((4, 8), d.pad(), dtype=torch.long)
    for i, s in enumerate(sentences):
        src[i, 8 - len(s):] = s
    read_batches = []
    attn = model.decoder.layers[0].encoder_attn
    read = attn.strategy.read
    attn.strategy.read = lambda q, memory: read_batches.append((q.shape[0], q.shape[2])) or read(q, memory)
    generator = SequenceGenerator([model], d, beam_size=BEAM, max_len_a=0, max_len_b=9, min_len=1)
    with torch.no_grad():
        sample = {"net_input": {"src_tokens": src, "src_lengths": torch.tensor([8, 5, 3, 7])}}
        hypos = generator.generate([model], sample)
    attn.strategy.read = read
    assert read_batches[0] == (4, BEAM) and all(m == BEAM for _, m in read_batches)  # [sentences, H, beams, d]
    lengths = set()
    for sentence, per_sentence in zip(sentences, hypos):
        for hypo in per_sentence:
            tokens = hypo["tokens"]
            lengths.add(len(tokens))
            prev = torch.cat([torch.tensor([d.eos()]), tokens[:-1]])[None]
            with torch.no_grad():
                lp = model.get_normalized_probs(model(sentence[None], torch.tensor([len(sentence)]), prev),
                                                log_probs=True)[0]
            torch.testing.assert_close(hypo["positional_scores"], lp[torch.arange(len(tokens)), tokens],
                                       rtol=0, atol=2e-5)
    assert len(lengths) >= 2  # sentences finished at different steps
