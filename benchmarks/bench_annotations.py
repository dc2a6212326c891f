"""Sound descriptions in a transcript: accuracy with them kept out of the model
(`formats.annotations`) against reading them as words.

    python benchmarks/bench_annotations.py --model en-tiny --threads 2

IWSLT2011 test2011's words (Che's, contractions merged) are written as one line of text with
a sound description ("[laughter]", "(applause)", "[inaudible]", "[background noise]") after
every --every-th word on average (placed at random, seeded), the way call-centre and meeting
transcripts mark what is heard. The line is restored through the text path of `punctum
restore` (`formats.restore_lines`) twice: as punctum does it (the descriptions never reach
the model and are written as they are) and with `annotations=False` (they are read as words,
as a tool without the rule would). The descriptions are then taken out of the output and the
rest is scored against Che's labels as in bench_iwslt.py ("!" as PERIOD), next to the plain
text without descriptions. Also counted: descriptions written back exactly as they were.
"""

from __future__ import annotations

import argparse
import datetime
import random

from common import SHARED_DATA, existing_data, hardware

from punctum import formats
from punctum.evaluation import ScoredFile, load_scored, score
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import get_inventory, parse

DESCRIPTIONS = ("[laughter]", "(applause)", "[inaudible]", "[background noise]", "(laughs)")


def with_descriptions(words: tuple[str, ...], every: int, seed: int) -> tuple[str, list[str]]:
    """(the words as one line with descriptions between them, the descriptions in order)."""
    rng = random.Random(seed)
    pieces, added = [], []
    for word in words:
        pieces.append(word)
        if rng.random() < 1 / every:
            added.append(rng.choice(DESCRIPTIONS))
            pieces.append(added[-1])
    return " ".join(pieces), added


def without_descriptions(text: str, descriptions: list[str]) -> tuple[str, int]:
    """(the restored text with each description taken out, how many were written exactly as
    they were). A description the model read as words comes back rewritten ("Laughter,"):
    it is taken out with whatever mark the model gave it, which the word before it lacks."""
    tokens, kept, exact = text.split(" "), [], 0
    queue = [d.split(" ") for d in descriptions]
    index = 0
    while index < len(tokens):
        if queue and _same_words(tokens[index:index + len(queue[0])], queue[0]):
            exact += tokens[index:index + len(queue[0])] == queue[0]
            index += len(queue.pop(0))
            continue
        kept.append(tokens[index])
        index += 1
    return " ".join(kept), exact


def _same_words(tokens: list[str], description: list[str]) -> bool:
    """Whether tokens are the description's words, whatever their case, brackets and marks."""
    def letters(token: str) -> str:
        return "".join(char for char in token.lower() if char.isalnum())

    return len(tokens) == len(description) and all(
        letters(a) == letters(b) for a, b in zip(tokens, description))


def punct_f1(text: str, che: ScoredFile) -> float:
    inventory = get_inventory("en")
    hyp = ScoredFile(parse(text, inventory), is_final=None, has_case=True)
    return score(che, hyp, inventory).punct.overall.f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model name or folder (default: en-tiny)")
    parser.add_argument("--data", default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--every", type=int, default=40,
                        help="a description after every this many words, on average")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = existing_data(args.data, "test2011")
    punctuator = Punctuator.load(args.model, threads=args.threads)
    che = load_scored(data / "test2011", "che")
    line, added = with_descriptions(che.labelled.words, args.every, args.seed)
    rows = [("plain text, no descriptions", punct_f1(
        punctuator.restore(" ".join(che.labelled.words)), che), "")]
    for name, options in (("descriptions kept out (punctum)", RestoreOptions()),
                          ("descriptions read as words", RestoreOptions(annotations=False))):
        restored = next(formats.restore_lines(punctuator, [line], options))
        text, exact = without_descriptions(restored, added)
        rows.append((name, punct_f1(text, che), f"{exact} / {len(added)}"))
    print(f"test2011, {len(che.labelled.words):,} words, {len(added)} descriptions; model "
          f"{punctuator.artifact.name}; {hardware()}; {datetime.date.today().isoformat()}\n")
    print("| input | punctuation F1 | descriptions written as they were |\n|---|---|---|")
    for name, f1, exact in rows:
        print(f"| {name} | {f1 * 100:.1f} | {exact} |")


if __name__ == "__main__":
    main()
