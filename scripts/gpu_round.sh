#!/bin/bash
# One call's work on a lent GPU machine (docs/GPU.md), run there from the repository root with
# the data in .gpu/data (carried): three trainings side by side on the one GPU, each stopped
# after T seconds at a step boundary (SIGINT: last.pt written, best.pt = best dev2012 step),
# then slim checkpoints of the two en-tiny runs (15 MB each) and an int8 export of the
# en-accurate run (23 MB, in parts of 15 MB), everything else in logs.tar, all under $OUT.
#
#   device run (carry [".gpu"], timeout 600):  T=450 bash scripts/gpu_round.sh
#
# Session 26 ran this with the en-tiny-gpu-b recipe and the slim script copied into .gpu/.
: "${OUT:?set OUT to the folder whose files come back}"
export PYTHONPATH=. PYTHONUNBUFFERED=1
T=${T:-450}
rm -rf runs/tiny-a runs/tiny-b runs/acc /tmp/acc  # (a warm machine keeps an earlier call's)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch, transformers, onnxruntime as o
print(torch.__version__, transformers.__version__, o.__version__, torch.cuda.is_available())"
train() {
    timeout -s INT "$T" python3 -m punctum train "$1" --data-root .gpu/data --out "runs/$2" \
        --no-progress > "$OUT/$2.log" 2>&1
}
checkpoint() {  # best.pt exists once a dev evaluation ran; nothing if the run saved none
    for name in best last; do
        if [ -f "runs/$1/$name.pt" ]; then echo "runs/$1/$name.pt"; return; fi
    done
    echo "FAILED: runs/$1 has no checkpoint (see $1.log)" >&2
}
train recipes/en-tiny-gpu.toml tiny-a & A=$!
train recipes/en-tiny-gpu-b.toml tiny-b & B=$!
train recipes/en-accurate-gpu.toml acc & C=$!
watch_gpu() {
    while sleep 20; do nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; done
}
watch_gpu > "$OUT/smi.log" 2>&1 & S=$!
wait $A $B $C; kill $S
for run in tiny-a tiny-b acc; do
    tail -4 "$OUT/$run.log"; cp "runs/$run/history.json" "$OUT/$run.history.json" 2>/dev/null
done
for run in tiny-a tiny-b; do
    ckpt=$(checkpoint $run)
    [ -n "$ckpt" ] && python3 scripts/slim_checkpoint.py "$ckpt" "$OUT/$run.pt"
done
ckpt=$(checkpoint acc)
if [ -n "$ckpt" ] && timeout 100 python3 -m punctum export "$ckpt" /tmp/acc --name en-accurate \
        --per-channel --min-agreement 0.9 --window 128 32 16 --data-root .gpu/data \
        > "$OUT/acc-export.log" 2>&1; then
    (cd /tmp/acc && tar cf - .) | split -b 15M - "$OUT/acc.tar.part-"
else
    echo "FAILED: no en-accurate artifact (see acc-export.log)"
fi
tail -2 "$OUT/acc-export.log" 2>/dev/null
(cd "$OUT" && find . -maxdepth 1 \( -name "*.log" -o -name "*.json" \) -print0 \
    | tar cf logs.tar --null -T - && rm -f ./*.log ./*.json)
ls -la "$OUT"
