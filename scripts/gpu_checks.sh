#!/usr/bin/env bash
# On a CUDA machine: the Triton self-check, the CUDA tests and the GPU benchmark suites in one run,
# every result written under --out (nothing else is touched). Run from any directory, with the
# Python that holds torch, triton and fairseq (default: python3; PYTHON=... picks another).
#
#   bash scripts/gpu_checks.sh --out gpu_results            # everything
#   bash scripts/gpu_checks.sh --out gpu_results --only selfcheck tests
#   bash scripts/gpu_checks.sh --help
#
# On an H100 the self-check and the tests take about 2 minutes each; each benchmark case starts a
# fresh process (about 9 s there), so the suites take longer.
#
# Steps, each under its own time limit so that one hung step cannot eat the rest; a failed step is
# reported and the next one runs; the exit status is 1 if any step failed:
#   selfcheck   python -m abc_fairseq.selfcheck (fp32, fp16, bf16; N up to 8,192) -> selfcheck.{json,log}
#   tests       pytest tests/gpu (xdist workers when pytest-xdist is installed) -> tests.log
#   attention   causal attention fwd+bwd, fp16 and bf16: abc, abc-torch, sdpa -> attention_<dtype>/ (the
#               self-check times fla's chunk_abc: its autotuning would rerun in every fresh case process)
#   gsa         causal gated slot attention fwd+bwd, bf16: gsa (ABC's kernels), gsa-torch, fla-gsa -> gsa/
#   decode      greedy decoding, WMT-base sizes, fp16: softmax, abc, rfa, t2r -> decode/
#   encode      RoBERTa-base encoder forward, fp16: softmax, linformer, abc -> encode/
#   generate    fairseq's SequenceGenerator on Bible sentences and long outputs, fp16 -> generate/
#
# Options:
#   --out DIR        where the results go; must not exist yet, or be empty
#   --only STEP...   run only these steps (names above)
#   --step-limit S   seconds each step may run (default 300)
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT_NAME=gpu_checks
# shellcheck source=scripts/lib/common.sh
. "$repo/scripts/lib/common.sh"
answer_help "$@"

ALL_STEPS=(selfcheck tests attention gsa decode encode generate)
out="" limit=300 steps=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || die "--out needs a directory"; out="$2"; shift 2 ;;
        --step-limit) [ $# -ge 2 ] || die "--step-limit needs a number"; posint --step-limit "$2"; limit="$2"; shift 2 ;;
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
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    || die "$PY sees no CUDA device: this script is for GPU machines (the CPU checks are bash scripts/run_tests.sh)"
mkdir -p "$out" || die "--out $out: cannot create it"
out="$(cd "$out" && pwd)"
cd "$repo"

{
    date -u '+%Y-%m-%d %H:%M:%S UTC'
    git rev-parse --short HEAD 2>/dev/null || true
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>/dev/null || true
    "$PY" -c 'import torch, triton, platform; p = torch.cuda.get_device_properties(0); print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, "|", p.name, f"sm_{p.major}{p.minor}", p.multi_processor_count, "SMs")'
} >"$out/environment.txt" 2>&1
cat "$out/environment.txt"

failed=()
run_step() {  # NAME COMMAND... : run with the step limit, log to $out/NAME.log, remember a failure
    local name="$1" start status
    shift
    start=$SECONDS
    log "step $name: $*"
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    status=$?
    log "step $name: exit $status after $((SECONDS - start)) s (log: $out/$name.log)"
    tail -n 25 "$out/$name.log" >&2
    [ "$status" -eq 0 ] || failed+=("$name")
}

xdist=()
"$PY" -c 'import xdist' 2>/dev/null && xdist=(-n 4)
bench=("$PY" -m benchmarks)
for step in "${steps[@]}"; do
    case "$step" in
        selfcheck) run_step selfcheck "$PY" -m abc_fairseq.selfcheck --json "$out/selfcheck.json" ;;
        tests) run_step tests "$PY" -m pytest -q -p no:cacheprovider "${xdist[@]}" tests/gpu ;;
        attention)
            for dtype in float16 bfloat16; do
                run_step "attention_$dtype" "${bench[@]}" attention --device cuda --dtype "$dtype" \
                    --methods abc abc-torch sdpa --repeats 10 --warmup 3 --out-dir "$out/attention_$dtype"
            done ;;
        gsa) run_step gsa "${bench[@]}" attention --device cuda --dtype bfloat16 --methods gsa gsa-torch fla-gsa \
                --lengths 512 2048 8192 --repeats 5 --warmup 2 --out-dir "$out/gsa" ;;
        decode) run_step decode "${bench[@]}" decode --device cuda --dtype float16 --methods softmax abc rfa t2r \
                    --lengths 512 1024 2048 --batch 16 --repeats 0 \
                    --out-dir "$out/decode" ;;
        encode) run_step encode "${bench[@]}" encode --device cuda --dtype float16 --repeats 5 --warmup 2 \
                    --out-dir "$out/encode" ;;
        generate) run_step generate "${bench[@]}" generate --device cuda --dtype float16 --repeats 3 --warmup 1 \
                    --out-dir "$out/generate" ;;
    esac
done

if [ ${#failed[@]} -gt 0 ]; then
    log "FAILED steps: ${failed[*]} (logs in $out)"
    exit 1
fi
log "all steps passed; results in $out"
