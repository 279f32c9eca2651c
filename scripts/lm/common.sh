# shellcheck shell=bash
# Shared by the WikiText-103 scripts of scripts/lm (sourced, not executed): the experiments of
# rows.tsv, on top of scripts/lib/common.sh (parse_flags, die, log, usage, locks).

# shellcheck source=scripts/lib/common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd)/common.sh"

TOKENS_PER_SAMPLE=512  # the paper's segment length (Baevski & Auli's 512-token setting)

LM_ROWS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/rows.tsv"

# lm_rows -> the experiment names of rows.tsv, one per line
lm_rows() { grep -v '^#' "$LM_ROWS" | tail -n +2 | cut -f1; }

# lm_row ROW -> sets ROW_SETTING, ROW_LABEL, ROW_N, ROW_ARCH and the array ROW_FLAGS
lm_row() {
    local line
    line="$(grep -v '^#' "$LM_ROWS" | tail -n +2 | awk -F'\t' -v r="$1" '$1 == r')"
    [ -n "$line" ] || die "unknown --row '$1'; one of: $(lm_rows | tr '\n' ' ')(see $LM_ROWS)"
    local flags
    # The ROW_* variables are this function's results, read by the sourcing script.
    # shellcheck disable=SC2034
    IFS=$'\t' read -r _ ROW_SETTING ROW_LABEL ROW_N ROW_ARCH flags <<<"$line"
    ROW_FLAGS=()
    # The flags column holds plain words (no quoting), so word splitting is what is wanted.
    # shellcheck disable=SC2206,SC2034
    [ "$flags" = - ] || ROW_FLAGS=($flags)
}

# lm_contexts SETTING -> the paper's evaluation context sizes for that setting
lm_contexts() {
    case "$1" in
        16l) echo "0 480" ;;  # Table 2a
        32l) echo "256" ;;    # Table 2b
        *) die "unknown setting '$1' in $LM_ROWS" ;;
    esac
}
