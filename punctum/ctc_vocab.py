"""The output vocabulary of CTC speech models: BPE word pieces plus punctuation marks as tokens.

Id 0 is the CTC blank. Text is lowercase; each mark of the language inventory is a token of
its own, never part of a BPE piece ("hello, world." -> ▁hello , ▁world .), so the end-to-end
model emits marks like words. Run by the `tokenizers` library (no torch), as the text models are.

    vocab = CtcVocabulary.train(texts, vocab_size=2000)
    ids = vocab.encode("hello, world.")
    vocab.decode(ids)                       # "hello, world."
    vocab.encode("hello, world.", marks=False) == vocab.encode("hello world")

`add_marks` adapts a vocabulary that lacks the marks (Samsung paper §3.1): the least-used
pieces are replaced by the marks, keeping the vocabulary size and every other piece's id.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from punctum.text import get_inventory, normalize

BLANK, UNK = "<blank>", "<unk>"


def lower_words(text: str, language: str = "en") -> list[str]:
    """Normalised lowercase words of a text, marks and case removed."""
    return normalize(text, language)


def marked_items(text: str, language: str = "en") -> list[tuple[bool, str]]:
    """(is_mark, item) in reading order: "Hello, World." -> word hello, mark ",", word world,
    mark "."; words lowercase."""
    from punctum.text import NULL, parse

    inventory = get_inventory(language)
    written = {m.name: m.text for m in inventory.post_marks + inventory.pre_marks}
    labelled = parse(text, inventory)
    items: list[tuple[bool, str]] = []
    for word, pre, post in zip(labelled.words, labelled.pre, labelled.post):
        if pre != NULL:
            items.append((True, written[pre]))
        items.append((False, word))
        if post != NULL:
            items.append((True, written[post]))
    return items


@dataclass
class CtcVocabulary:
    """A tokenizers.Tokenizer with blank = 0 and the marks as added tokens.

    Attributes:
        tokenizer: the tokenizers.Tokenizer.
        marks: the mark tokens ("," "." "?" ...), in the inventory's order.
        language: inventory name.
    """

    tokenizer: object
    marks: tuple[str, ...]
    language: str = "en"

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 2000, language: str = "en",
              with_marks: bool = True) -> CtcVocabulary:
        """Train the BPE on lowercase, mark-free words of punctuated texts."""
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.BPE(unk_token=UNK))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
        marks = _inventory_marks(language) if with_marks else ()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(marks), min_frequency=2,
                                      special_tokens=[BLANK, UNK], limit_alphabet=100,
                                      show_progress=False)
        tokenizer.train_from_iterator((" ".join(lower_words(t, language)) for t in texts),
                                      trainer=trainer)
        vocab = cls(tokenizer, (), language)
        return vocab.with_mark_tokens(marks) if marks else vocab

    def with_mark_tokens(self, marks: tuple[str, ...]) -> CtcVocabulary:
        """The marks registered as added tokens (new ids at the end when not in the vocab)."""
        from tokenizers import AddedToken

        self.tokenizer.add_tokens([AddedToken(m, normalized=False) for m in marks])
        return CtcVocabulary(self.tokenizer, tuple(marks), self.language)

    @property
    def size(self) -> int:
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def mark_ids(self) -> frozenset[int]:
        return frozenset(self.tokenizer.token_to_id(m) for m in self.marks)

    def encode(self, text: str, marks: bool = True) -> list[int]:
        """Token ids of a (punctuated, cased) text; marks=False drops the mark tokens (the
        intermediate targets of the paper's method)."""
        keep_marks = marks and bool(self.marks)
        items = [(is_mark, item) for is_mark, item in marked_items(text, self.language)
                 if keep_marks or not is_mark]
        words = [item for is_mark, item in items if not is_mark]
        if not words:
            return [self.tokenizer.token_to_id(item) for _, item in items]
        encoding = self.tokenizer.encode(words, is_pretokenized=True, add_special_tokens=False)
        per_word: list[list[int]] = [[] for _ in words]
        for token_id, word in zip(encoding.ids, encoding.word_ids):
            per_word[word].append(token_id)
        ids, next_word = [], 0
        for is_mark, item in items:
            if is_mark:
                ids.append(self.tokenizer.token_to_id(item))
            else:
                ids.extend(per_word[next_word])
                next_word += 1
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """Text of token ids: words lowercase, marks attached to the word before them."""
        pieces, out = [self.tokenizer.id_to_token(i) for i in ids if i != 0], []
        for piece in pieces:
            if piece is None or piece == UNK:
                continue
            if piece in self.marks:
                out.append(piece)
            else:
                out.append(piece.replace("\u2581", " "))
        return " ".join("".join(out).split())

    def token_words(self, ids: list[int]) -> list[int]:
        """Word index of each token (-1 for marks, unknown pieces and blanks)."""
        index, words = -1, []
        for i in ids:
            piece = self.tokenizer.id_to_token(i) if i != 0 else None
            if piece is None or piece in self.marks or piece == UNK:
                words.append(-1)
                continue
            if piece.startswith("\u2581") or index < 0:
                index += 1
            words.append(index)
        return words

    def save(self, path: str | Path) -> None:
        data = json.loads(self.tokenizer.to_str())
        data["punctum"] = {"marks": list(self.marks), "language": self.language}
        Path(path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> CtcVocabulary:
        from tokenizers import Tokenizer

        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            extra = data.pop("punctum", {})
            tokenizer = Tokenizer.from_str(json.dumps(data))
            return cls(tokenizer, tuple(extra.get("marks", ())), extra.get("language", "en"))
        except OSError:
            raise
        except Exception as error:  # JSON, shape or the tokenizers library's own errors
            reason = " ".join(str(error).split())[:120] or type(error).__name__
            raise ValueError(f"{path}: not a CTC vocabulary ({reason})") from None


def _inventory_marks(language: str) -> tuple[str, ...]:
    inventory = get_inventory(language)
    return tuple(m.text for m in inventory.post_marks + inventory.pre_marks)


def add_marks(vocab: CtcVocabulary, texts: Iterable[str]) -> tuple[CtcVocabulary, dict]:
    """Give a mark-less vocabulary the inventory's marks by replacing its least-used pieces.

    Piece usage is counted on `texts`; the least-used pieces that no other piece is built
    from (no merge uses them) are removed with their own merge and their ids given to the
    marks. Vocabulary size and all other ids stay the same, so a trained CTC model's output
    layer keeps its shape and meaning.

    Returns:
        (the new vocabulary, {mark: the piece it replaced}).
    """
    from tokenizers import Tokenizer

    inventory_marks = _inventory_marks(vocab.language)
    # A mark can already be a piece (a character of words such as "u.s." or "1,000"): it keeps
    # its id and is registered as a mark like the others.
    marks = [m for m in inventory_marks if vocab.tokenizer.token_to_id(m) is None]
    counts = Counter(i for t in texts for i in vocab.tokenizer.encode(
        " ".join(lower_words(t, vocab.language))).ids)
    data = json.loads(vocab.tokenizer.to_str())
    model = data["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    used_in_merges = {part for merge in merges for part in merge}
    specials = {BLANK, UNK}
    candidates = sorted(
        (p for p in model["vocab"] if p not in specials and p not in used_in_merges
         and len(p.replace("\u2581", "")) > 1),
        key=lambda p: (counts.get(model["vocab"][p], 0), -model["vocab"][p]))
    if len(candidates) < len(marks):
        raise ValueError(f"only {len(candidates)} replaceable pieces for {len(marks)} marks")
    replaced = dict(zip(marks, candidates))
    for mark, piece in replaced.items():
        model["vocab"][mark] = model["vocab"].pop(piece)
    removed = set(replaced.values())
    model["merges"] = [" ".join(m) if isinstance(data["model"]["merges"][0], str) else list(m)
                       for m in merges if "".join(m) not in removed]
    tokenizer = Tokenizer.from_str(json.dumps(data))
    adapted = CtcVocabulary(tokenizer, (), vocab.language).with_mark_tokens(inventory_marks)
    return adapted, replaced
