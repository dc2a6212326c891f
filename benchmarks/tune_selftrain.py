"""Tune self-training's alpha, beta_human and beta_pseudo on IWSLT dev2012 (issue 5).

    python benchmarks/tune_selftrain.py recipes/en-tiny-selftrain.toml --teacher en-tiny \
        --data ../shared/data --out runs/en-tiny-ablation --steps 400 \
        --grid control 0.1,0,0 0.3,0,0 1,0,0 0.3,0.1,0.2

Each grid point ALPHA,BETA_HUMAN,BETA_PSEUDO trains one student with the same teacher, pool,
pseudo labels and training settings as bench_selftrain.py (give the same --out and they, and
its control, are reused); `control` is the labelled-only run. Every student's best checkpoint
(chosen by the run on its train.dev_words slice) is then scored on all of dev2012 the way runs
score themselves (`trainer.score_weights` with dev_words 0: the torch model, windows of
max_subwords, no decision biases). test2011 is not read: the chosen point goes into the recipe
and is scored once by bench_selftrain.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
from pathlib import Path

from bench_selftrain import add_setup_arguments, control_config, prepare, train_student
from common import hardware

from punctum.train import selftrain as st
from punctum.train.trainer import score_weights

CONTROL = "control"


def parse_point(text: str) -> tuple[float, float, float] | str:
    """"control" or "ALPHA,BETA_HUMAN,BETA_PSEUDO" (alpha > 0, betas in [0, 1))."""
    if text == CONTROL:
        return CONTROL
    try:
        alpha, beta_human, beta_pseudo = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected 'control' or ALPHA,BETA_HUMAN,BETA_PSEUDO") from None
    if alpha <= 0 or not (0 <= beta_human < 1 and 0 <= beta_pseudo < 1):
        raise argparse.ArgumentTypeError(f"{text!r}: alpha must be > 0, betas in [0, 1)")
    return alpha, beta_human, beta_pseudo


def point_folder(point) -> str:
    if point == CONTROL:
        return "baseline-control"  # bench_selftrain.py's folder for the same run
    return "grid-a{:g}-bh{:g}-bp{:g}".format(*point)


def full_dev_f1(recipe, weights, cache: Path) -> dict:
    """All of dev2012 scored for a checkpoint or an artifact's weights, cached in `cache`."""
    if cache.exists():
        return json.loads(cache.read_text())
    everything = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                       dev_words=0))
    scores = score_weights(everything, weights)
    result = {"punct_f1": scores["punct_f1"], "words": scores["words"]}
    cache.write_text(json.dumps(result, indent=2))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_setup_arguments(parser)
    parser.add_argument("--grid", nargs="+", type=parse_point, required=True,
                        metavar="POINT", help="'control' or ALPHA,BETA_HUMAN,BETA_PSEUDO")
    args = parser.parse_args()
    out = Path(args.out)
    recipe, config, teacher, pseudo = prepare(args)
    rows = {}
    for point in args.grid:
        if point == CONTROL:
            variant, pseudo_file = control_config(config), None
        else:
            alpha, beta_human, beta_pseudo = point
            variant = dataclasses.replace(config, alpha=alpha, beta_human=beta_human,
                                          beta_pseudo=beta_pseudo)
            pseudo_file = pseudo
        checkpoint = train_student(recipe, pseudo_file, variant, teacher,
                                   out / point_folder(point))
        rows[point] = (st._checkpoint_f1(checkpoint),
                       full_dev_f1(recipe, checkpoint, checkpoint.parent / "dev2012-all.json"))
    teacher_dev = full_dev_f1(recipe, teacher, out / "teacher-dev2012-all.json")
    print(f"# {datetime.date.today()} · {hardware()} · {' '.join(sys.argv)}")
    print("| alpha | beta_human | beta_pseudo | dev slice F1 (run's best) | dev2012 F1 (all) | "
          "Δ vs control |")
    print("|---|---|---|---|---|---|")
    print(f"| the teacher ({teacher}) | | | | {teacher_dev['punct_f1'] * 100:.2f} | |")
    control = rows.get(CONTROL, (None, None))[1]
    for point, (slice_f1, dev) in rows.items():
        cells = ["labelled only", "", ""] if point == CONTROL else [f"{v:g}" for v in point]
        delta = "" if control is None or point == CONTROL else \
            f"{(dev['punct_f1'] - control['punct_f1']) * 100:+.2f}"
        print(f"| {' | '.join(cells)} | {slice_f1 * 100:.2f} | {dev['punct_f1'] * 100:.2f} | "
              f"{delta} |")
    results = {point_folder(p): {"slice_f1": s, "dev2012": d} for p, (s, d) in rows.items()}
    results["teacher"] = {"dev2012": teacher_dev}
    (out / "tuning.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
