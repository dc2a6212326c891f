"""Self-training ablation in the shape of Chen et al. (2021), Table 4, on IWSLT2011 test2011.

    python benchmarks/bench_selftrain.py recipes/en-accurate.toml --out runs/ablation \
        --data ../shared/data [--steps 1500] [--teacher runs/en-base/best.pt]

Rows, all students of one round from the same teacher and the same pseudo labels:
    baseline                      the teacher (labelled data only); with student_init =
                                  "teacher" in the recipe, the teacher trained on for the
                                  students' steps on labelled data only (the teacher itself
                                  is shown as an extra row)
    vanilla self-training         alpha 1, beta_human 0, beta_pseudo 0
    + weighted loss               alpha from the recipe, no smoothing
    + label smoothing             alpha, beta_human = beta_pseudo = the recipe's beta_human
    + discriminative smoothing    alpha, beta_human, beta_pseudo from the recipe
                                  (--method ALPHA BETA_HUMAN BETA_PSEUDO overrides the
                                  recipe's three values for these rows)
Each model is exported (fp32 ONNX; --int8 for per-channel int8), restored through the public
API and scored: P/R/F1 per mark and overall, and a paired bootstrap (1,000 resamples over
reference sentences) against the baseline. Finished runs in --out are reused, so the script
resumes after a stop; --only trains and scores a subset of rows (by folder name:
baseline-control, vanilla-self-training, weighted-loss, label-smoothing,
discriminative-label-smoothing).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import re
import sys
from pathlib import Path

from bench_iwslt import restore_words
from common import hardware

from punctum.evaluation import compare, load_scored, score
from punctum.runtime import Punctuator
from punctum.text import get_inventory
from punctum.train import selftrain as st
from punctum.train.export import ExportOptions, export_artifact, parity_texts
from punctum.train.recover import is_artifact
from punctum.train.trainer import score_weights, weights_tokenizer


def variants(config: st.SelfTrainConfig) -> dict[str, st.SelfTrainConfig]:
    """The ablation's student settings, named as the table rows."""
    def with_(**fields):
        return dataclasses.replace(config, **fields)

    return {
        "vanilla self-training": with_(alpha=1.0, beta_human=0.0, beta_pseudo=0.0),
        "+ weighted loss": with_(beta_human=0.0, beta_pseudo=0.0),
        "+ label smoothing": with_(beta_pseudo=config.beta_human),
        "+ discriminative label smoothing": config,
    }


def control_config(config: st.SelfTrainConfig) -> st.SelfTrainConfig:
    """The warm-started students' control: plain supervised training, no smoothing."""
    return dataclasses.replace(config, beta_human=0.0)


def folder_name(row_name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", row_name.lower()).strip("-")


def export(checkpoint: Path, folder: Path, int8: bool) -> Path:
    """fp32 ONNX by default (the ablation compares training, not quantization); int8 is
    per-channel, as the bundled Transformer taggers are exported."""
    if not (folder / "punctum.json").exists():
        window = checkpoint_window(checkpoint)
        options = ExportOptions(name=folder.name, int8=int8, per_channel=int8,
                                min_agreement=0.985 if int8 else 0.995, **window)
        export_artifact(checkpoint, folder, checkpoint.parent / "tokenizer.json", options,
                        parity_texts(checkpoint))
    return folder


def checkpoint_window(checkpoint: Path) -> dict:
    """Double-overlap windows that fit the model's training length (128 -> 128/32/16)."""
    from punctum.train.checkpoint import load_checkpoint

    size = load_checkpoint(checkpoint)["recipe"]["data"]["max_subwords"]
    return {"window_size": size, "window_left": size // 4, "window_right": size // 8}


def score_model(artifact: Path, data: Path):
    """(scores, restored ScoredFile) on test2011 through Punctuator.restore."""
    punctuator = Punctuator.load(artifact)
    ref = load_scored(data / "iwslt2011" / "test2011", "che")
    hyp = restore_words(punctuator, ref.labelled.words)
    return score(ref, hyp, get_inventory("en")).punct, hyp, ref


def row(name: str, punct, bootstrap) -> str:
    marks = [punct.per_label[m] for m in ("COMMA", "PERIOD", "QUESTION")]
    cells = [f"{c.precision * 100:.1f} / {c.recall * 100:.1f} / {c.f1 * 100:.1f}" for c in marks]
    overall = punct.overall
    p = "—" if bootstrap is None else f"{bootstrap.delta * 100:+.1f} (p={bootstrap.p_value:.3f})"
    return (f"| {name} | {' | '.join(cells)} | {overall.precision * 100:.1f} / "
            f"{overall.recall * 100:.1f} / {overall.f1 * 100:.1f} | {p} |")


def add_setup_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments that fix the teacher, the pool and the students' training."""
    parser.add_argument("recipe", help="a self-training recipe (recipes/en-accurate.toml)")
    parser.add_argument("--out", required=True, help="folder for runs (resumable)")
    parser.add_argument("--data", default="../shared/data", help="data root")
    parser.add_argument("--steps", type=int, help="override train.steps for every student")
    parser.add_argument("--teacher", help="teacher checkpoint, model folder or bundled model "
                        "(default: train round 0); a model is scored as it is (int8 or not)")
    parser.add_argument("--max-pool-documents", type=int, help="cap the pool")


def prepare(args: argparse.Namespace) -> tuple:
    """(recipe, selftrain config, teacher, pseudo-labelled file): the pool built and checked,
    the teacher trained if none is given, the pool labelled; all cached in args.out."""
    data, out = Path(args.data), Path(args.out)
    recipe, config = st.load_selftrain_recipe(args.recipe, data)
    if args.steps:  # the students' (and a trained teacher's) steps
        recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                       steps=args.steps))
        config = dataclasses.replace(config, student_train=config.student_train
                                     | {"steps": args.steps})
    if args.max_pool_documents:
        config = dataclasses.replace(config, max_pool_documents=args.max_pool_documents)
    out.mkdir(parents=True, exist_ok=True)
    pool = st.build_pool(config, out)
    teacher = args.teacher or out / "teacher" / "best.pt"
    if not is_artifact(teacher):
        teacher = Path(teacher)
    if not args.teacher:
        st._train_round(recipe, teacher.parent, None, out / "cache", progress=True)
    teacher_artifact = st._teacher_artifact(teacher, out / "teacher-fp32", "teacher")
    pseudo = st.pseudo_label(teacher_artifact, pool, out / "pseudo", config)
    return recipe, config, teacher, pseudo


def train_student(recipe, pseudo, variant: st.SelfTrainConfig, teacher, folder: Path) -> Path:
    """One student (pseudo None: the labelled-only control) trained or reused; its best.pt."""
    st._train_round(st.student_recipe(recipe, pseudo, variant, teacher), folder,
                    weights_tokenizer(str(teacher)), folder.parent / "cache", progress=True)
    return folder / "best.pt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_setup_arguments(parser)
    parser.add_argument("--int8", action="store_true", help="score int8 exports")
    parser.add_argument("--only", nargs="+", metavar="ROW", help="rows to train and score")
    parser.add_argument("--method", nargs=3, type=float,
                        metavar=("ALPHA", "BETA_HUMAN", "BETA_PSEUDO"),
                        help="the full method's values for the weighted and smoothed rows "
                        "(default: the recipe's; a recipe tuned to alpha 1 and no smoothing "
                        "would make those rows copies of vanilla self-training)")
    args = parser.parse_args()
    data, out = Path(args.data), Path(args.out)
    recipe, config, teacher, pseudo = prepare(args)
    if args.method:
        alpha, beta_human, beta_pseudo = args.method
        config = dataclasses.replace(config, alpha=alpha, beta_human=beta_human,
                                     beta_pseudo=beta_pseudo)
    checkpoints = {"baseline": teacher}
    students = {name: (pseudo, variant) for name, variant in variants(config).items()}
    if config.student_init == "teacher":
        checkpoints = {"teacher": teacher}
        students = {"baseline (control)": (None, control_config(config))} | students
    wanted = set(args.only or [folder_name(name) for name in students])
    for name, (pseudo_file, variant) in students.items():
        if folder_name(name) in wanted:
            checkpoints[name] = train_student(recipe, pseudo_file, variant, teacher,
                                              out / folder_name(name))
    print(f"# {datetime.date.today()} · {hardware()} · {' '.join(sys.argv)}")
    print("| model | COMMA P/R/F1 | PERIOD P/R/F1 | QUESTION P/R/F1 | overall P/R/F1 | "
          "ΔF1 vs baseline (p) |")
    print("|---|---|---|---|---|---|")
    baseline_hyp, results = None, {}
    baseline = next(n for n in ("baseline (control)", "baseline", "teacher") if n in checkpoints)
    order = [baseline] + [name for name in checkpoints if name != baseline]
    for name in order:
        checkpoint = checkpoints[name]
        suffix = "-int8" if args.int8 else ""
        artifact = checkpoint if is_artifact(checkpoint) else export(
            checkpoint, out / "artifacts" / f"{checkpoint.parent.name}{suffix}", args.int8)
        punct, hyp, ref = score_model(artifact, data)
        boot = None if baseline_hyp is None else compare(ref, baseline_hyp, hyp,
                                                         get_inventory("en"))
        baseline_hyp = baseline_hyp or hyp
        results[name] = {"punct": punct.to_dict(), "bootstrap": boot and boot.to_dict()}
        print(row(name, punct, boot), flush=True)
    dev = {name: dev_f1(recipe, checkpoint) for name, checkpoint in checkpoints.items()}
    print("# dev2012 F1 (train.dev_words slice): "
          + ", ".join(f"{name} {f1 * 100:.2f}" for name, f1 in dev.items()))
    (out / "ablation.json").write_text(json.dumps(results, indent=2))


def dev_f1(recipe, weights) -> float:
    """The dev F1 a run records for its best checkpoint; for a model artifact, its weights
    scored the same way (`trainer.score_weights`)."""
    if is_artifact(weights):
        return score_weights(recipe, weights)["punct_f1"]
    return st._checkpoint_f1(Path(weights))


if __name__ == "__main__":
    main()
