"""Training-step time of the CNN-BiLSTM on this CPU: fp32 against bf16 autocast, and equal
against ragged window lengths in a batch (packed LSTMs).

    python benchmarks/bench_train_step.py --threads 2 --batch 32 --length 200

Random ids and labels, the en-tiny configuration (vocab 5000), Adam; median seconds per
step (forward + backward + optimizer) over --steps steps after one warm-up step.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time

import torch

from punctum.models import build_model


def step_seconds(model, optimizer, ids, lengths, dtype: str, steps: int) -> float:
    punct = torch.randint(0, 5, ids.shape)
    case = torch.randint(0, 4, ids.shape)
    times = []
    for i in range(steps + 1):
        start = time.perf_counter()
        if dtype == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                punct_logits, case_logits = model(ids, lengths)
        else:
            punct_logits, case_logits = model(ids, lengths)
        loss = model.loss(punct_logits.float(), case_logits.float(), punct, case)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=200)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = build_model("cnn_bilstm", {"vocab_size": 5000, "n_punct": 5, "n_case": 4})
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids = torch.randint(4, 5000, (args.batch, args.length))
    equal = torch.full((args.batch,), args.length)
    ragged = torch.randint(args.length * 3 // 4, args.length + 1, (args.batch,))
    print(f"CNN-BiLSTM en-tiny config, batch {args.batch} x {args.length}, "
          f"{args.threads} threads, torch {torch.__version__}, {datetime.date.today()}")
    print("| lengths in batch | dtype | s/step |\n|---|---|---|")
    for name, lengths in (("equal", equal), ("ragged (3/4 to full)", ragged)):
        for dtype in ("fp32", "bf16"):
            seconds = step_seconds(model, optimizer, ids, lengths, dtype, args.steps)
            print(f"| {name} | {dtype} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
