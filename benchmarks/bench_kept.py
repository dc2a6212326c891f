"""What restore keeps of what it does not predict: quotes, brackets, and (with --keep-existing)
marks written otherwise than the model writes them (; : — ... ?!).

    python benchmarks/bench_kept.py --model en-tiny --data ../shared/data

Texts: LibriTTS book sentences (libritts_text/: quotes, semicolons, dashes) and Wikipedia
paragraphs (text/wikitext2_test/: brackets), the first --lines of each. For every text:

- default restore: are the input's quotes and brackets, in order, those of the output?
- `--keep-existing`: is every character of the input other than letters, digits and spaces
  found in the output, in order (the model only adds marks and capitals)? Is the output
  unchanged when restored again? How many words written in lowercase did it capitalise
  (`lowercase_capitalised`: a sentence start the writer did not make, e.g. '"Stop!" He
  cried' for '"Stop!" he cried')?

Run it with an older checkout first on PYTHONPATH to compare (from outside the repository).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
from pathlib import Path

from common import SHARED_DATA, existing_data, print_result

from punctum.corpora import iter_tsv
from punctum.runtime import Punctuator, RestoreOptions

LIBRITTS = "libritts_text/libritts_train_clean_100_flowtron_subset.tsv.gz"
WIKITEXT = "text/wikitext2_test/wikitext2_test_detok.txt.gz"
QUOTES_AND_BRACKETS = set('"“”‘«»()[]{}')  # not ' and ’, mostly apostrophes


def load_texts(data: Path, lines: int) -> dict[str, list[str]]:
    """The first `lines` non-empty texts of each corpus."""
    books = (u.text for u in iter_tsv(data / LIBRITTS) if u.text.strip())
    with gzip.open(data / WIKITEXT, "rt", encoding="utf-8") as wiki:
        paragraphs = [line.strip() for line in itertools.islice(wiki, lines) if line.strip()]
    return {"libritts": list(itertools.islice(books, lines)), "wikitext2": paragraphs}


def in_order(needed: str, text: str) -> bool:
    """Whether the characters of `needed` occur in `text` in that order."""
    rest = iter(text)
    return all(char in rest for char in needed)


def symbols(text: str) -> str:
    return "".join(c for c in text if not (c.isalnum() or c.isspace()))


def measure(punctuator: Punctuator, texts: list[str]) -> dict:
    keep = RestoreOptions(keep_existing=True)
    restored = punctuator.restore_batch(texts)
    kept = punctuator.restore_batch(texts, keep)
    again = punctuator.restore_batch(kept, keep)
    with_quotes = [i for i, t in enumerate(texts) if QUOTES_AND_BRACKETS & set(t)]
    quotes_kept = sum(
        [c for c in restored[i] if c in QUOTES_AND_BRACKETS]
        == [c for c in texts[i] if c in QUOTES_AND_BRACKETS] for i in with_quotes)
    return {
        "texts": len(texts),
        "texts_with_quotes_or_brackets": len(with_quotes),
        "quotes_and_brackets_kept": quotes_kept,
        "keep_existing_symbols_kept": sum(in_order(symbols(t), k) for t, k in zip(texts, kept)),
        "keep_existing_fixed_point": sum(k == a for k, a in zip(kept, again)),
        "words": sum(len(t.split()) for t in texts),
        "lowercase_capitalised": sum(capitalised(t, k) or 0 for t, k in zip(texts, kept)),
        "texts_not_compared": sum(capitalised(t, k) is None for t, k in zip(texts, kept)),
    }


def capitalised(given: str, restored: str) -> int | None:
    """Words that `given` writes starting in lowercase and `restored` does not (the words
    of a `--keep-existing` restore are the input's, in order); None where the two split
    into different numbers of tokens with letters (not compared)."""
    before = [w for w in given.split() if any(c.isalpha() for c in w)]
    after = [w for w in restored.split() if any(c.isalpha() for c in w)]
    if len(before) != len(after):
        return None
    return sum(_first_letter(b).islower() and _first_letter(a).isupper()
               for b, a in zip(before, after))


def _first_letter(word: str) -> str:
    return next(c for c in word if c.isalpha())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="en-tiny")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    data = existing_data(args.data, LIBRITTS, WIKITEXT)
    punctuator = Punctuator.load(args.model, threads=args.threads)
    result = {name: measure(punctuator, texts)
              for name, texts in load_texts(data, args.lines).items()}
    print_result(result, args.model)


if __name__ == "__main__":
    main()
