#!/usr/bin/env bash
# On a CUDA machine: the Triton self-check, the CUDA tests and the GPU benchmark suites in one run,
# every result written under --out (nothing else is touched). Run from any directory, with the
# Python that holds torch, triton and fairseq (default: python3; PYTHON=... picks another).
#
#   bash scripts/gpu_checks.sh --out gpu_results            # every step that fits the default budget
#   bash scripts/gpu_checks.sh --out gpu_results --only selfcheck peers
#   bash scripts/gpu_checks.sh --out gpu_results --only attention gsa decode encode generate --budget 1800
#   bash scripts/gpu_checks.sh --out toy_results --toy    # no GPU: every step at toy sizes (CI)
#   bash scripts/gpu_checks.sh --help
#
# On an H100 the self-check and the tests take about 2 minutes each; each benchmark case starts a
# fresh process (about 9 s there), so the suites take longer. The whole run stops starting steps
# when its --budget is spent (default 420 s on a GPU: a run fits a short device lease); the steps
# left out are listed at the end, to be run with --only.
#
# Steps, in this order, each under its own time limit so that one hung step cannot eat the rest; a
# failed step is reported and the next one runs; the exit status is 1 if any step failed:
#   selfcheck   python -m abc_fairseq.selfcheck (fp32, fp16, bf16; d, n in {64, 128}) -> selfcheck.{json,log}
#   peers       causal fwd+bwd in one process, fp16, 32,768 tokens x 8 heads, d = n = 64, N = 512 .. 16,384:
#               abc (our kernels), fla-abc (fla-core's chunk_abc in its layout [B, T, H, *]), flash
#               sdpa (python -m benchmarks.peer_timing) -> peers/peer_timing.{json,md}
#   few         the same with few sequences, 8,192 tokens x 4 heads, N = 2,048 and 8,192 (4 sequence-heads
#               at 8,192: issue 44's size against flash attention) -> few/peer_timing.{json,md}
#   scan        ours alone at few's sizes with ABC_TRITON_SCAN_GROUP=1, the chunk scan of one chunk per
#               step that the grouped scan replaced (kept selectable until this runs: few/ is the
#               default beside it) -> scan_group1/peer_timing.{json,md}
#   train       updates of abc_lm_wiki103 and transformer_lm_wiki103 through fairseq's trainer, fp16
#               (python -m benchmarks train) -> train/train.{json,md,png}
#   decode      greedy decoding, WMT-base sizes, batch 16, fp16: softmax and abc (issue 44's >= 1.0x target;
#               rfa and t2r: python -m benchmarks decode --methods rfa t2r ...) -> decode/
#   decode_torch  abc's greedy decoding again with ABC_BACKEND=torch, N = 512 and 2,048: eagerly, the
#               step's PyTorch ops against its one Triton launch (on the H200 92 us of host time a call)
#               -> decode_torch/
#   host        host time per call of each op and of a 6-layer decoder step, ABC and softmax, the launches
#               run (python -m tools.host_time --device cuda): Triton's launcher included -> host/host.{json,md}
#   profile     every kernel of causal ABC fwd+bwd (torch.profiler) beside the cost model, fp16,
#               N = 512, 4,096, 16,384 -> profile/kernel_profile.{json,md}
#   tests       pytest tests/gpu (xdist workers when pytest-xdist is installed) -> tests.log
#   attention   causal attention fwd+bwd, fp16 and bf16: abc, abc-torch, sdpa -> attention_<dtype>/ (fla's
#               chunk_abc is timed by peers, in one process: its compilation would rerun in every fresh case)
#   gsa         causal gated slot attention fwd+bwd, bf16: gsa (ABC's kernels), gsa-torch, fla-gsa -> gsa/
#   encode      RoBERTa-base encoder forward, fp16: softmax, linformer, abc -> encode/
#   generate    fairseq's SequenceGenerator on Bible sentences and long outputs, fp16 -> generate/
#
# Options:
#   --out DIR        where the results go; must not exist yet, or be empty
#   --only STEP...   run only these steps (names above)
#   --step-limit S   seconds each step may run (default 300)
#   --budget S       seconds the whole run may take (default 420 on a GPU, none with --toy): a step
#                    gets at most what is left, and none starts with under 20 s left
#   --toy            no GPU needed: every step on CPU at toy sizes, the kernels under Triton's
#                    interpreter (TRITON_INTERPRET=1); checks the script itself (CI runs it), measures
#                    nothing
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT_NAME=gpu_checks
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"
answer_help "$@"

ALL_STEPS=(selfcheck peers few scan train decode decode_torch host profile tests attention gsa encode generate)
out="" limit=300 steps=() toy=0 budget=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || die "--out needs a directory"; out="$2"; shift 2 ;;
        --step-limit) [ $# -ge 2 ] || die "--step-limit needs a number"; posint --step-limit "$2"; limit="$2"; shift 2 ;;
        --budget) [ $# -ge 2 ] || die "--budget needs a number"; posint --budget "$2"; budget="$2"; shift 2 ;;
        --toy) toy=1; shift ;;
        --only)
            shift
            while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
                [[ " ${ALL_STEPS[*]} " == *" $1 "* ]] || die "--only: unknown step '$1' (steps: ${ALL_STEPS[*]})"
                steps+=("$1"); shift
            done ;;
        *) unknown_option "$1" ;;
    esac
done
[ -n "$out" ] || die "--out DIR is required (see --help)"
[ ${#steps[@]} -gt 0 ] || steps=("${ALL_STEPS[@]}")
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    die "--out $out exists and is not empty: name a new directory (nothing is overwritten)"
fi
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || die "no $PY on PATH (set PYTHON)"
if [ "$toy" = 1 ]; then
    export TRITON_INTERPRET=1  # before any step imports Triton
    device=cpu
else
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
        || die "$PY sees no CUDA device: this script is for GPU machines (--toy checks it on CPU; the CPU tests are bash scripts/run_tests.sh)"
    device=cuda
    budget="${budget:-420}"
fi
mkdir -p "$out" || die "--out $out: cannot create it"
out="$(cd "$out" && pwd)"
cd "$repo"

{
    date -u '+%Y-%m-%d %H:%M:%S UTC'
    git rev-parse --short HEAD 2>/dev/null || true
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>/dev/null || true
    "$PY" -c 'import torch, triton, platform; from abc_fairseq.selfcheck.fla_peer import fla_version
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, "fla-core", fla_version(), end=" | ")
p = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None
print(f"{p.name} sm_{p.major}{p.minor} {p.multi_processor_count} SMs" if p else "cpu, Triton interpreter (--toy)")'
} >"$out/environment.txt" 2>&1
cat "$out/environment.txt"

failed=() not_run=() began=$SECONDS
MIN_STEP_SECONDS=20
run_step() {  # NAME COMMAND... : run within the step limit and the budget left, log to $out/NAME.log
    local name="$1" start status step_limit="$limit" left
    shift
    if [ -n "$budget" ]; then
        left=$((budget - (SECONDS - began)))
        if [ "$left" -lt "$MIN_STEP_SECONDS" ]; then
            log "step $name: not run, the --budget of $budget s is spent"
            not_run+=("$name")
            return 0
        fi
        [ "$left" -lt "$step_limit" ] && step_limit="$left"
    fi
    start=$SECONDS
    log "step $name (limit ${step_limit} s): $*"
    timeout "$step_limit" "$@" >"$out/$name.log" 2>&1
    status=$?
    log "step $name: exit $status after $((SECONDS - start)) s (log: $out/$name.log)"
    tail -n 25 "$out/$name.log" >&2
    [ "$status" -eq 0 ] || failed+=("$name")
}

xdist=()
"$PY" -c 'import xdist' 2>/dev/null && xdist=(-n 4)
bench=("$PY" -m benchmarks)
# Sizes per step: the GPU run's, or toy sizes on CPU (--toy) where every case takes seconds.
if [ "$toy" = 1 ]; then
    xdist=()
    attention_methods=(abc-triton abc-torch sdpa) gsa_methods=(gsa gsa-torch) dtypes=(float32)
    profile_sizes=(--lengths 32 --tokens 64 --heads 2 --head-dim 16 --memory 8 --repeats 1 --dtype float32)
    attention_sizes=(--lengths 32 --tokens 64 --heads 2 --head-dim 16 --memory 8 --repeats 1 --warmup 0)
    gsa_sizes=("${attention_sizes[@]}")
    decode_sizes=(--methods softmax abc --lengths 8 --batch 2 --vocab 64 --encoder-layers 1 --decoder-layers 1
                  --embed-dim 32 --heads 2 --ffn-dim 64 --cross-memory 4 --causal-memory 4 --repeats 1
                  --dtype float32)
    decode_torch_sizes=(--methods abc "${decode_sizes[@]:3}")
    encode_sizes=(--methods softmax abc --lengths 16 --batch 2 --memories 8 --vocab 64 --layers 1 --embed-dim 32
                  --heads 2 --ffn-dim 64 --repeats 1 --warmup 0 --dtype float32)
    generate_sizes=(--methods softmax abc --sizes tiny --beams 1 --greedy-sizes --long-sizes tiny --lengths 8
                    --sentences 2 --repeats 1 --warmup 0 --dtype float32)
    selfcheck_flags=(--no-timing)
    peer_sizes=(--device cpu --lengths 32 --tokens 64 --heads 2 --head-dim 16 --memory 8 --repeats 1 --warmup 0
                --dtype float32)
    few_sizes=(--device cpu --lengths 16 32 --tokens 32 --heads 1 --head-dim 16 --memory 8 --repeats 1 --warmup 0
               --dtype float32)
    train_sizes=(--device cpu --cases abc_lm_wiki103 transformer_lm_wiki103 --batch 2 --vocab 64 --layers 1
                 --embed-dim 32 --heads 2 --ffn-dim 32 --lm-length 16 --repeats 1 --warmup 0 --threads 1
                 --lm-args "--adaptive-input-cutoff 20,40 --adaptive-softmax-cutoff 20,40")
    # on CPU the tool records the launches itself: Triton's interpreter would run them
    host_command=(env TRITON_INTERPRET=0 "$PY" -m tools.host_time --device cpu --repeats 4 --rounds 2 --width 16
                  --tokens 16 --ops causal_abc causal_abc_step abc_read)
else
    attention_methods=(abc abc-torch sdpa) gsa_methods=(gsa gsa-torch fla-gsa) dtypes=(float16 bfloat16)
    profile_sizes=(--lengths 512 4096 16384 --dtype float16)
    attention_sizes=(--repeats 10 --warmup 3)
    gsa_sizes=(--lengths 512 2048 8192 --repeats 5 --warmup 2 --dtype bfloat16)
    decode_sizes=(--methods softmax abc --lengths 512 1024 2048 --batch 16 --repeats 0 --dtype float16)
    decode_torch_sizes=(--methods abc --lengths 512 2048 --batch 16 --repeats 0 --dtype float16)
    encode_sizes=(--repeats 5 --warmup 2 --dtype float16)
    generate_sizes=(--repeats 3 --warmup 1 --dtype float16)
    selfcheck_flags=()
    peer_sizes=(--device cuda --lengths 512 1024 2048 4096 8192 16384 --tokens 32768 --heads 8 --head-dim 64
                --memory 64 --methods abc fla-abc sdpa --dtype float16 --repeats 10 --warmup 3)
    few_sizes=(--device cuda --lengths 2048 8192 --tokens 8192 --heads 4 --head-dim 64 --memory 64
               --dtype float16 --repeats 10 --warmup 3)
    train_sizes=(--device cuda --cases abc_lm_wiki103 transformer_lm_wiki103 --repeats 5 --warmup 2)
    host_command=("$PY" -m tools.host_time --device cuda --dtype fp16 --repeats 500 --rounds 5)
fi
for step in "${steps[@]}"; do
    case "$step" in
        selfcheck) run_step selfcheck "$PY" -m abc_fairseq.selfcheck --json "$out/selfcheck.json" "${selfcheck_flags[@]}" ;;
        peers) run_step peers "$PY" -m benchmarks.peer_timing "${peer_sizes[@]}" --out-dir "$out/peers" ;;
        few) run_step few "$PY" -m benchmarks.peer_timing "${few_sizes[@]}" --methods abc fla-abc sdpa \
                --out-dir "$out/few" ;;
        scan) run_step scan env ABC_TRITON_SCAN_GROUP=1 "$PY" -m benchmarks.peer_timing "${few_sizes[@]}" \
                --methods abc --out-dir "$out/scan_group1" ;;
        train) run_step train "${bench[@]}" train "${train_sizes[@]}" --out-dir "$out/train" ;;
        host) run_step host "${host_command[@]}" --out-dir "$out/host" ;;
        profile) run_step profile "$PY" -m tools.kernel_profile "${profile_sizes[@]}" --out-dir "$out/profile" ;;
        tests) run_step tests "$PY" -m pytest -q -p no:cacheprovider "${xdist[@]}" tests/gpu ;;
        attention)
            for dtype in "${dtypes[@]}"; do
                run_step "attention_$dtype" "${bench[@]}" attention --device "$device" --dtype "$dtype" \
                    --methods "${attention_methods[@]}" "${attention_sizes[@]}" --out-dir "$out/attention_$dtype"
            done ;;
        gsa) run_step gsa "${bench[@]}" attention --device "$device" --methods "${gsa_methods[@]}" "${gsa_sizes[@]}" \
                --out-dir "$out/gsa" ;;
        decode) run_step decode "${bench[@]}" decode --device "$device" "${decode_sizes[@]}" --out-dir "$out/decode" ;;
        decode_torch) run_step decode_torch env ABC_BACKEND=torch "${bench[@]}" decode --device "$device" \
                "${decode_torch_sizes[@]}" --out-dir "$out/decode_torch" ;;
        encode) run_step encode "${bench[@]}" encode --device "$device" "${encode_sizes[@]}" --out-dir "$out/encode" ;;
        generate) run_step generate "${bench[@]}" generate --device "$device" "${generate_sizes[@]}" \
                    --out-dir "$out/generate" ;;
    esac
done

if [ ${#not_run[@]} -gt 0 ]; then
    log "not run (budget spent): ${not_run[*]}; run them with --only ${not_run[*]} and a new --out"
fi
if [ ${#failed[@]} -gt 0 ]; then
    log "FAILED steps: ${failed[*]} (logs in $out)"
    exit 1
fi
if [ ${#not_run[@]} -gt 0 ]; then
    log "every step that ran passed; results in $out"
else
    log "all steps passed; results in $out"
fi
