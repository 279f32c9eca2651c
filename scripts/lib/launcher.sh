# shellcheck shell=bash
# The option parser of the launchers of scripts/lm, scripts/mt and scripts/roberta (sourced, never
# executed), on top of scripts/lib/common.sh, which this file sources. One parser, so that every
# launcher treats --help, unknown options, missing values and deprecated aliases alike.
#
#   parse_flags SPEC ARGS...   parse ARGS against the array named SPEC, one entry per flag:
#     "FLAG VAR [WHAT...]"     FLAG takes a value, stored in $VAR; a missing or empty one is an
#                              error "FLAG needs WHAT" (WHAT: "a value" when not given)
#     "FLAG VAR=VALUE"         a switch: sets $VAR to VALUE
#     "FLAG !FUNCTION"         a switch: runs FUNCTION (e.g. a preset of several settings)
#     "FLAG @FUNCTION"         FLAG takes a value, handed to FUNCTION (which checks it; empty if missing)
#     "FLAG >NEW"              a deprecated alias of NEW: warns, then acts as NEW (errors name FLAG)
#     "-- VAR [HINT...]"       the arguments after '--' go to the array VAR; HINT ends the error
#                              of an unknown option. Without this entry '--' is an unknown option.
#   -h or --help anywhere before '--' prints the help and exits 0 before anything is parsed.

# shellcheck source=scripts/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

parse_flags() {  # SPEC ARGS...
    local -n _flag_spec="$1"
    shift
    answer_help "$@"
    local -A _flag_rule=()
    local _entry _flag _rule _target _what _rest_var="" _hint=""
    for _entry in "${_flag_spec[@]}"; do
        read -r _flag _rule <<<"$_entry"
        _flag_rule[$_flag]="$_rule"
    done
    [ -z "${_flag_rule[--]+set}" ] || read -r _rest_var _hint <<<"${_flag_rule[--]}"
    while [ $# -gt 0 ]; do
        _flag="$1"
        if [ "$_flag" = -- ] && [ -n "$_rest_var" ]; then
            shift
            local -n _flag_rest="$_rest_var"
            _flag_rest=("$@")
            return 0
        fi
        if [ -z "$_flag" ] || [ -z "${_flag_rule[$_flag]+set}" ]; then  # '' is no valid key
            unknown_option "$_flag" ${_hint:+"$_hint"}
        fi
        _rule="${_flag_rule[$_flag]}"
        if [[ "$_rule" == '>'* ]]; then
            deprecated "$_flag" "${_rule#>}"
            _rule="${_flag_rule[${_rule#>}]}"
        fi
        read -r _target _what <<<"$_rule"
        if [[ "$_target" == '!'* ]]; then
            "${_target#!}"
            shift
        elif [[ "$_target" == '@'* ]]; then
            "${_target#@}" "${2:-}"
            shift 2
        elif [[ "$_target" == *=* ]]; then
            printf -v "${_target%%=*}" '%s' "${_target#*=}"
            shift
        else
            [ -n "${2:-}" ] || die "$_flag needs ${_what:-a value}"
            printf -v "$_target" '%s' "$2"
            shift 2
        fi
    done
}
