"""IWSLT2011 test2011 accuracy of a model through the public API (`Punctuator.restore`).

    python benchmarks/bench_iwslt.py --model en-tiny --data ../shared/data/iwslt2011
    python benchmarks/bench_iwslt.py --model runs/b/artifact --compare runs/a/artifact

Punctuation: the unpunctuated, lowercased words of Che's test2011 (contractions merged) are
restored and scored token by token against Che's labels (IWSLT2011 convention, "!" counted
as PERIOD). Casing: the words of the cased source XML (IWSLT12.TED.MT.tst2011...xml), with
marks and case stripped, are restored and their case labels scored against the XML
(LOWER negative). Prints a markdown row (or JSON) for docs/BENCHMARKS.md. With --compare A,
also a paired bootstrap (1,000 resamples over test2011's sentences) of the model's overall
punctuation F1 against model A's.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path

from common import SHARED_DATA, existing_data, hardware

from punctum.artifact import update_meta
from punctum.evaluation import ScoredFile, compare, load_scored, score
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import get_inventory, parse
from punctum.windows import WindowConfig

XML_NAME = "IWSLT12.TED.MT.tst2011.en-fr.en.xml"


def restore_words(punctuator: Punctuator, words: tuple[str, ...]) -> ScoredFile:
    """Restore a word sequence as one text and parse the output back into labels."""
    text = punctuator.restore(" ".join(words), RestoreOptions())
    labelled = parse(text, punctuator.inventory)
    return ScoredFile(labelled, is_final=None, has_case=True)


def evaluate(punctuator: Punctuator, data: Path) -> dict:
    """Punctuation scores on test2011 (Che) and casing scores on its cased XML source."""
    inventory = get_inventory("en")
    che = load_scored(data / "test2011", "che")
    start = time.perf_counter()
    hyp = restore_words(punctuator, che.labelled.words)
    punct = score(che, hyp, inventory)
    seconds = time.perf_counter() - start
    xml = load_scored(data / XML_NAME, "xml")
    case = score(xml, restore_words(punctuator, xml.labelled.words), inventory)
    return {"punct": punct.punct, "case": case.case, "seconds": seconds,
            "words": len(che.labelled), "ref": che, "hyp": hyp}


def bootstrap_line(result: dict, baseline: Punctuator) -> tuple[str, dict]:
    """Paired bootstrap of result's punctuation F1 against the baseline model's."""
    inventory = get_inventory("en")
    ref = result["ref"]
    boot = compare(ref, restore_words(baseline, ref.labelled.words), result["hyp"], inventory)
    line = (f"overall punctuation F1 {boot.delta * 100:+.1f} against "
            f"{baseline.artifact.path} (paired bootstrap over sentences, 1,000 resamples: "
            f"p = {boot.p_value:.3f})")
    return line, boot.to_dict()


def model_facts(punctuator: Punctuator) -> dict:
    """Name, kind, precision and sizes (an ensemble's: its members', summed)."""
    members = getattr(punctuator, "members", [punctuator])
    folders = {punctuator.artifact.path} | {m.artifact.path for m in members}
    size = sum(f.stat().st_size for folder in folders for f in folder.iterdir() if f.is_file())
    meta = punctuator.artifact.meta
    return {"name": punctuator.artifact.name, "kind": meta["kind"],
            "precision": " + ".join(m.artifact.meta["model"]["precision"] for m in members),
            "size_mb": size / 1e6,
            "model_mb": sum(f.stat().st_size for f in punctuator.model_files) / 1e6,
            "windows": punctuator.windows,
            "biased": punctuator.post_bias is not None}


def markdown(result: dict, facts: dict) -> str:
    punct, case = result["punct"], result["case"]
    per = punct.per_label
    weights = facts["precision"] + (" + biases" if facts["biased"] else "")
    cells = [facts["name"], weights, f"{facts['model_mb']:.1f}"]
    for label in ("COMMA", "PERIOD", "QUESTION"):
        prf = per[label]
        cells.append(f"{prf.precision * 100:.1f} / {prf.recall * 100:.1f} / {prf.f1 * 100:.1f}")
    overall = punct.overall
    cells.append(f"{overall.precision * 100:.1f} / {overall.recall * 100:.1f} / "
                 f"**{overall.f1 * 100:.1f}**")
    c = case.overall
    cells.append(f"{c.precision * 100:.1f} / {c.recall * 100:.1f} / **{c.f1 * 100:.1f}**")
    cells.append(f"{result['seconds']:.2f}")
    cells.append(f"{hardware()}, {datetime.date.today().isoformat()}")
    header = ("| model | weights | model MB | COMMA P/R/F1 | PERIOD P/R/F1 | QUESTION P/R/F1 | "
              "overall P/R/F1 | casing P/R/F1 | restore s | hardware, date |\n"
              "|---|---|---|---|---|---|---|---|---|---|")
    return header + "\n| " + " | ".join(cells) + " |"


def record_scores(punctuator: Punctuator, result: dict) -> None:
    """Store the measured test2011 scores in the artifact's punctum.json."""
    punct, case = result["punct"], result["case"]
    scores = dict(punctuator.artifact.meta.get("scores") or {})
    scores["iwslt2011_test2011"] = {
        "punctuation_f1": round(punct.overall.f1 * 100, 1),
        "per_mark_f1": {k: round(v.f1 * 100, 1) for k, v in punct.per_label.items()},
        "casing_f1": round(case.overall.f1 * 100, 1),
        "decision_biases": punctuator.post_bias is not None,
        "measured": datetime.date.today().isoformat(),
        "script": "benchmarks/bench_iwslt.py",
    }
    update_meta(punctuator.artifact.path, {"scores": scores})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model name or folder (default: en-tiny)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--window", type=int, nargs=3, metavar=("SIZE", "LEFT", "RIGHT"),
                        help="override the model's window settings")
    parser.add_argument("--no-bias", action="store_true",
                        help="ignore the model's decision biases (punctum calibrate)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--record", action="store_true",
                        help="write the scores into the model's punctum.json")
    parser.add_argument("--compare", metavar="MODEL",
                        help="a baseline model: add a paired bootstrap against it")
    args = parser.parse_args()
    args.data = existing_data(args.data, "test2011", XML_NAME)
    windows = WindowConfig(*args.window) if args.window else None
    bias = {} if args.no_bias else None
    if args.record and args.no_bias:
        parser.error("--record measures the model as it restores: without --no-bias")
    punctuator = Punctuator.load(args.model, threads=args.threads, windows=windows,
                                 post_bias=bias)
    result = evaluate(punctuator, args.data)
    facts = model_facts(punctuator)
    if args.record:
        record_scores(punctuator, result)
    line, boot = "", None
    if args.compare:
        line, boot = bootstrap_line(result, Punctuator.load(args.compare, threads=args.threads,
                                                            windows=windows))
    if args.json:
        print(json.dumps({"punctuation": result["punct"].to_dict(),
                          "casing": result["case"].to_dict(), "seconds": result["seconds"],
                          "bootstrap": boot,
                          **{k: str(v) for k, v in facts.items()}}, indent=2))
    else:
        print(markdown(result, facts) + (f"\n\n{line}" if line else ""))


if __name__ == "__main__":
    main()
