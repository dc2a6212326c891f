"""Tables of segments: IWSLT2011 test2011 cut into rows, restored through `punctum restore`.

    python benchmarks/bench_tables.py --model en-tiny --threads 2

test2011's words (Che's, for punctuation; the cased XML source's, for casing) are cut into
rows of 4 to 20 words (drawn with a fixed seed, as a recogniser's segments fall: across
sentences) and written as Whisper's TSV (start, end, text: the rows are segments of one
recording and context flows from row to row), a TSV of the text column alone (each row a text
of its own), text a row a line (restored with `--paragraphs`, without it: each line a text, and with
`--stream`), and plain text on one line (the whole text at once). Each file is restored
with `punctum restore -i FILE -o OUT`, its rows joined back and scored against the reference
as `bench_iwslt.py` scores (P / R / F1 in %).
"""

from __future__ import annotations

import argparse
import datetime
import random
from pathlib import Path
from tempfile import TemporaryDirectory

from bench_iwslt import XML_NAME
from common import SHARED_DATA, existing_data, hardware

from punctum import formats
from punctum.cli import main as punctum_main
from punctum.evaluation import ScoredFile, load_scored, score
from punctum.text import get_inventory, parse


def rows_of(words: tuple[str, ...], seed: int = 0) -> list[str]:
    """The words cut into rows of 4 to 20 words, lowercased."""
    rng, rows, i = random.Random(seed), [], 0
    while i < len(words):
        size = rng.randint(4, 20)
        rows.append(" ".join(w.lower() for w in words[i:i + size]))
        i += size
    return rows


def layouts(rows: list[str]) -> dict[str, tuple[str, str, list[str]]]:
    """File name, content and extra `punctum restore` flags of each layout."""
    timed = "start\tend\ttext\n" + "".join(f"{i * 3000}\t{i * 3000 + 2900}\t{row}\n"
                                          for i, row in enumerate(rows))
    untimed = "text\n" + "".join(row + "\n" for row in rows)
    lines = "".join(row + "\n" for row in rows)
    return {"Whisper TSV (start, end, text): rows of one recording": ("timed.tsv", timed, []),
            "TSV of a text column: each row a text": ("rows.tsv", untimed, []),
            "text, a row a line, `--paragraphs`": ("lines.txt", lines, ["--paragraphs"]),
            "text, a row a line: each line a text": ("lines.txt", lines, []),
            "text, a row a line, `--stream` (4 words of look-ahead)": ("lines.txt", lines,
                                                                       ["--stream"]),
            "plain text, one line: the whole text at once": ("whole.txt", " ".join(rows) + "\n",
                                                             [])}


def restored_text(path: Path, out: Path, model: str, threads: int, flags: list[str]) -> str:
    """The file restored by the CLI, its rows' texts joined with spaces."""
    argv = ["restore", "-i", str(path), "-o", str(out), "-m", model, "--threads", str(threads),
            *flags]
    if punctum_main(argv) != 0:
        raise SystemExit(f"punctum restore failed on {path}")
    return " ".join(cue.text for cue in formats.read(out).cues if cue.text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="en-tiny")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    data = existing_data(args.data, "test2011", XML_NAME)
    inventory = get_inventory("en")
    che, xml = load_scored(data / "test2011", "che"), load_scored(data / XML_NAME, "xml")
    print(f"{args.model}, {hardware()}, {datetime.date.today()}\n")
    print("| layout | rows | COMMA F1 | PERIOD F1 | QUESTION F1 | overall punct. P / R / F1 "
          "| casing F1 |")
    print("|---|---|---|---|---|---|---|")
    with TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        results = {}
        for reference, kind in ((che, "punct"), (xml, "case")):
            rows = rows_of(reference.labelled.words)
            for name, (file, content, flags) in layouts(rows).items():
                path = tmp / f"{kind}-{file}"
                path.write_text(content, encoding="utf-8")
                text = restored_text(path, tmp / f"out-{kind}-{file}", args.model, args.threads,
                                     flags)
                hyp = ScoredFile(parse(text, inventory), is_final=None, has_case=True)
                results.setdefault(name, {})[kind] = score(reference, hyp, inventory)
                results[name]["rows"] = len(rows)
        for name, result in results.items():
            punct, case = result["punct"].punct, result["case"].case
            marks = " | ".join(f"{punct.per_label[m].f1 * 100:.1f}"
                               for m in ("COMMA", "PERIOD", "QUESTION"))
            o = punct.overall
            print(f"| {name} | {result['rows']:,} | {marks} | {o.precision * 100:.1f} / "
                  f"{o.recall * 100:.1f} / **{o.f1 * 100:.1f}** | {case.overall.f1 * 100:.1f} |")


if __name__ == "__main__":
    main()
