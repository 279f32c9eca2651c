# shellcheck shell=bash
# What the uptraining recipes (scripts/lm/uptrain.sh, scripts/mt/uptrain.sh) share on top of
# scripts/lib/launcher.sh (sourced after it, never executed): their flags (UPTRAIN_FLAGS, with
# their defaults), their checks (check_uptrain_flags DATA_KIND) and the model and restore flags of
# the converted checkpoint (restore_args ARCH, into run_args).

# The uptraining recipes' shared flags (parse_flags entries) and their defaults.
checkpoint="" data="" save_dir="" lr=5e-4 warmup=1000 max_update=20000 seed=1
UPTRAIN_FLAGS=(
    "--checkpoint checkpoint a file" "--data data a directory" "--save-dir save_dir a directory"
    "--lr lr a rate" "--warmup warmup a number" "--max-update max_update a number" "--seed seed a number"
)

# check_uptrain_flags DATA_KIND: the shared flags given and well formed (DATA_KIND names what
# --data must hold); --checkpoint made absolute.
check_uptrain_flags() {  # DATA_KIND
    [ -n "$checkpoint" ] || die "--checkpoint is required (a checkpoint converted by python -m abc_fairseq.convert)"
    [ -n "$data" ] || die "--data is required ($1)"
    [ -n "$save_dir" ] || die "--save-dir is required"
    posint --max-update "$max_update"
    posint --seed "$seed"
    nonneg_int --warmup "$warmup"
    [[ "$checkpoint" == /* ]] || checkpoint="$PWD/$checkpoint"
}

# restore_args ARCH: run_args <- the model flags of --checkpoint (converted by
# python -m abc_fairseq.convert) and --restore-file CHECKPOINT with every --reset-* on a first run,
# or no restore flags when SAVE_DIR holds checkpoint_last.pt (fairseq would restore an explicit
# --restore-file on every start: the run resumes instead); read by abc_fairseq.convert.train_flags.
# A dry run without the checkpoint shows --arch ARCH.
restore_args() {  # ARCH
    local run_flags
    if [ -f "$checkpoint" ] || [ -f "$save_dir/checkpoint_last.pt" ]; then
        find_tools fairseq-train "$LAUNCH_REPO"
        run_flags="$(PYTHONPATH="$LAUNCH_REPO${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m abc_fairseq.convert.train_flags \
            "$checkpoint" --save-dir "$save_dir")" || die "cannot read the model flags of --checkpoint $checkpoint (see above)"
        mapfile -t run_args <<<"$run_flags"
    elif [ "$dry_run" = 1 ]; then
        log "dry run: --checkpoint $checkpoint does not exist; its model flags are shown as --arch $1"
        run_args=(--arch "$1" --restore-file "$checkpoint" --reset-optimizer --reset-dataloader --reset-meters
                  --reset-lr-scheduler)
    else
        die "--checkpoint $checkpoint: no such file"
    fi
}
