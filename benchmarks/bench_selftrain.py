"""Self-training ablation in the shape of Chen et al. (2021), Table 4, on IWSLT2011 test2011.

    python benchmarks/bench_selftrain.py recipes/en-accurate.toml --out runs/ablation \
        --data ../shared/data [--steps 1500] [--teacher runs/en-base/best.pt]

Rows, all students of one round from the same teacher and the same pseudo labels:
    baseline                      the teacher (labelled data only)
    vanilla self-training         alpha 1, beta_human 0, beta_pseudo 0
    + weighted loss               alpha from the recipe, no smoothing
    + label smoothing             alpha, beta_human = beta_pseudo = the recipe's beta_human
    + discriminative smoothing    alpha, beta_human, beta_pseudo from the recipe
Each model is exported (int8 ONNX), restored through the public API and scored: P/R/F1 per
mark and overall, and a paired bootstrap (1,000 resamples over reference sentences) against
the baseline. Finished runs in --out are reused, so the script resumes after a stop.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
from pathlib import Path

from bench_iwslt import restore_words
from common import hardware

from punctum.evaluation import compare, load_scored, score
from punctum.runtime import Punctuator
from punctum.text import get_inventory
from punctum.train import selftrain as st
from punctum.train.export import ExportOptions, export_artifact, parity_texts


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


def export(checkpoint: Path, folder: Path) -> Path:
    if not (folder / "punctum.json").exists():
        export_artifact(checkpoint, folder, checkpoint.parent / "tokenizer.json",
                        ExportOptions(name=folder.name), parity_texts(checkpoint))
    return folder


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recipe", help="a self-training recipe (recipes/en-accurate.toml)")
    parser.add_argument("--out", required=True, help="folder for runs (resumable)")
    parser.add_argument("--data", default="../shared/data", help="data root")
    parser.add_argument("--steps", type=int, help="override train.steps for every student")
    parser.add_argument("--teacher", help="teacher checkpoint (default: train round 0)")
    parser.add_argument("--max-pool-documents", type=int, help="cap the pool")
    args = parser.parse_args()
    data, out = Path(args.data), Path(args.out)
    recipe, config = st.load_selftrain_recipe(args.recipe, data)
    if args.steps:
        recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                       steps=args.steps))
    if args.max_pool_documents:
        config = dataclasses.replace(config, max_pool_documents=args.max_pool_documents)
    out.mkdir(parents=True, exist_ok=True)
    pool = st.build_pool(config, out)
    cache = out / "cache"
    teacher = Path(args.teacher) if args.teacher else out / "teacher" / "best.pt"
    if not args.teacher:
        st._train_round(recipe, teacher.parent, None, cache, progress=True)
    teacher_artifact = st._export_teacher(teacher, out / "teacher-fp32", "teacher")
    pseudo = st.pseudo_label(teacher_artifact, pool, out / "pseudo", config)
    checkpoints = {"baseline": teacher}
    for name, variant in variants(config).items():
        folder = out / name.strip("+ ").replace(" ", "-")
        st._train_round(st.student_recipe(recipe, pseudo, variant), folder,
                        teacher.parent / "tokenizer.json", cache, progress=True)
        checkpoints[name] = folder / "best.pt"
    print(f"# {datetime.date.today()} · {hardware()} · {' '.join(sys.argv)}")
    print("| model | COMMA P/R/F1 | PERIOD P/R/F1 | QUESTION P/R/F1 | overall P/R/F1 | "
          "ΔF1 vs baseline (p) |")
    print("|---|---|---|---|---|---|")
    baseline_hyp, results = None, {}
    for name, checkpoint in checkpoints.items():
        artifact = export(checkpoint, out / "artifacts" / checkpoint.parent.name)
        punct, hyp, ref = score_model(artifact, data)
        boot = None if baseline_hyp is None else compare(ref, baseline_hyp, hyp,
                                                         get_inventory("en"))
        baseline_hyp = baseline_hyp or hyp
        results[name] = {"punct": punct.to_dict(), "bootstrap": boot and boot.to_dict()}
        print(row(name, punct, boot), flush=True)
    (out / "ablation.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
