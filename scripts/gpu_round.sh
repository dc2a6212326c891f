#!/bin/bash
# One call's work on a lent GPU machine (docs/GPU.md), run there from the repository root with
# the data in .gpu/data (carried): the recipes given, trained side by side on the one GPU, each
# stopped after T seconds at a step boundary (SIGINT: last.pt written, best.pt = best dev2012
# step); then each tagger (transformer_tagger) exported int8 in parts of 15 MB (a MiniLM tagger
# is 23 MB) and each CNN-BiLSTM's checkpoint slimmed (15 MB), the exports side by side; logs and
# histories in logs.tar; everything under $OUT.
#
#   device run (carry [".gpu"], timeout 600):
#       T=420 bash scripts/gpu_round.sh recipes/en-accurate-gpu2.toml recipes/en-accurate-gpu2b.toml
#
# Session 26 ran it with en-tiny-gpu.toml, en-tiny-gpu-b.toml and en-accurate-gpu.toml (T=450).
# A run is named by its recipe's file name (en-accurate-gpu2.toml -> en-accurate-gpu2).
: "${OUT:?set OUT to the folder whose files come back}"
[ $# -gt 0 ] || { echo "usage: T=SECONDS bash scripts/gpu_round.sh RECIPE.toml..." >&2; exit 2; }
export PYTHONPATH=. PYTHONUNBUFFERED=1
T=${T:-450}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch, transformers, onnxruntime as o
print(torch.__version__, transformers.__version__, o.__version__, torch.cuda.is_available())"
name() { basename "$1" .toml; }
train() {
    rm -rf "runs/$(name "$1")"  # (a warm machine keeps an earlier call's)
    timeout -s INT "$T" python3 -m punctum train "$1" --data-root .gpu/data \
        --out "runs/$(name "$1")" --no-progress > "$OUT/$(name "$1").log" 2>&1
}
checkpoint() {  # best.pt exists once a dev evaluation ran; nothing if the run saved none
    for kept in best last; do
        if [ -f "runs/$1/$kept.pt" ]; then echo "runs/$1/$kept.pt"; return; fi
    done
    echo "FAILED: runs/$1 has no checkpoint (see $1.log)" >&2
}
bring_back() {  # a tagger: int8 artifact in parts; a CNN-BiLSTM: its slim checkpoint
    local run ckpt; run=$(name "$1"); ckpt=$(checkpoint "$run")
    [ -n "$ckpt" ] || return
    if grep -q '"transformer_tagger"' "$1"; then
        if timeout 100 python3 -m punctum export "$ckpt" "/tmp/$run" --name en-accurate \
                --per-channel --min-agreement 0.9 --window 128 32 16 --data-root .gpu/data \
                > "$OUT/$run-export.log" 2>&1; then
            (cd "/tmp/$run" && tar cf - .) | split -b 15M - "$OUT/$run.tar.part-"
        else
            echo "FAILED: no $run artifact (see $run-export.log)"
        fi
    else
        python3 scripts/slim_checkpoint.py "$ckpt" "$OUT/$run.pt"
    fi
}
pids=()
for recipe in "$@"; do train "$recipe" & pids+=($!); done
watch_gpu() {
    while sleep 20; do nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; done
}
watch_gpu > "$OUT/smi.log" 2>&1 & S=$!
wait "${pids[@]}"; kill $S
for recipe in "$@"; do
    run=$(name "$recipe"); rm -rf "/tmp/$run"
    tail -4 "$OUT/$run.log"; cp "runs/$run/history.json" "$OUT/$run.history.json" 2>/dev/null
done
pids=()
for recipe in "$@"; do bring_back "$recipe" & pids+=($!); done
wait "${pids[@]}"
for recipe in "$@"; do tail -2 "$OUT/$(name "$recipe")-export.log" 2>/dev/null; done
(cd "$OUT" && find . -maxdepth 1 \( -name "*.log" -o -name "*.json" \) -print0 \
    | tar cf logs.tar --null -T - && rm -f ./*.log ./*.json)
ls -la "$OUT"
