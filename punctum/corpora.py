"""Streaming readers for the corpora punctum trains and scores on (.gz transparent).

- The IWSLT2011 token format of Che et al. (``word<TAB>LABEL``, lowercased, PTB-split
  contractions such as ``do n't``): `read_che`, with the contractions merged into one word
  for model input and a mapping back to the original tokens for scoring.
- Cased, punctuated plain text with one document per line: `iter_lines`, `iter_documents`.
- TSV transcripts with a header row (utt_id, speaker, text, ...): `iter_tsv`.
- The IWSLT mteval XML (``<seg>`` elements of cased, punctuated text): `iter_xml_segments`.

Every reader names the file and the line in its errors.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import hashlib
import io
import itertools
import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ElementTree
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from punctum.fileio import NotUtf8Error
from punctum.text import LOWER, NULL, Inventory, Labelled, parse

CHE_LABELS = ("O", "COMMA", "PERIOD", "QUESTION")
# Che's data has no EXCLAMATION; the IWSLT2011 convention counts "!" as a period.
CHE_LABEL_MAP = {"EXCLAMATION": "PERIOD"}
# PTB splits these off the word before them; they are merged back for model input.
_CONTRACTION_PIECES = frozenset({"n't", "'s", "'m", "'re", "'ve", "'ll", "'d"})


def open_binary(path: str | Path) -> io.BufferedIOBase:
    """Open a file for reading bytes, gunzipping gzip's files transparently (known by their
    first bytes, not their name: a plain x.csv.gz and a gzipped x.csv read alike).

    Raises:
        FileNotFoundError: the file does not exist (message names it).
        ValueError: the path is a directory.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, expected a file")
    return gunzipped(open(path, "rb"))


@contextlib.contextmanager
def rereadable(path: str | Path) -> Iterator[str | Path]:
    """`path`, or, where it is a pipe that can be read only once (`<(command)`, /dev/stdin),
    a temporary copy of its bytes: readers that guess a format from the first line and then
    read the whole file would otherwise lose what the guess read. Errors raised inside name
    `path`, not the copy."""
    if not os.path.exists(path) or os.path.isfile(path) or os.path.isdir(path):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="punctum-") as folder:
        copy = Path(folder) / (Path(path).name or "input")
        with open(path, "rb") as source, open(copy, "wb") as target:
            shutil.copyfileobj(source, target)
        try:
            yield copy
        except ValueError as error:  # UnicodeDecodeError too: a one-line message
            message = str(error).replace(str(copy), str(path))
            try:
                renamed = type(error)(message)  # NotUtf8Error stays one
            except TypeError:
                renamed = ValueError(message)
            raise renamed from None


def gunzipped(handle: io.BufferedReader) -> io.BufferedIOBase:
    """`handle`, read through gzip when its first bytes are gzip's (known by peeking, so a
    pipe is read once); closing the gzip reader closes `handle`."""
    if not hasattr(handle, "peek") or handle.peek(2)[:2] != b"\x1f\x8b":
        return handle
    return _GzipReader(fileobj=handle, mode="rb")


def starts_with_bom(stream: io.BufferedIOBase, name: str) -> bool:
    """Whether `stream` (a file or `gunzipped` stdin) opens with a UTF-8 byte-order mark,
    known by peeking; ValueError naming `name` when its gzip header is damaged."""
    if not hasattr(stream, "peek"):
        return False
    try:
        return stream.peek(3)[:3] == b"\xef\xbb\xbf"
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise ValueError(f"{name}: cannot be read as gzip ({error})") from None


class _GzipReader(gzip.GzipFile):
    """A gzip reader over a file it opened, closing that file with itself."""

    def close(self) -> None:
        raw = self.fileobj
        try:
            super().close()
        finally:
            if raw is not None:
                raw.close()


def _lines(path: str | Path, errors: str = "strict",
           keep_ends: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, UTF-8 line without its newline, or with it when `keep_ends`); errors
    name the file and line.

    Args:
        errors: "strict" (undecodable bytes are an error) or "replace" (they become U+FFFD).
    """
    with open_binary(path) as handle:
        yield from decode_lines(handle, str(path), errors, keep_ends)


def decode_lines(handle, name: str, errors: str = "strict",
                 keep_ends: bool = False) -> Iterator[tuple[int, str]]:
    """Decode a binary line iterator (a file or sys.stdin.buffer) as UTF-8, line by line
    (the byte-order mark dropped; line endings too, unless `keep_ends`); a gzip stream that
    is cut short or corrupt is a ValueError naming `name`."""
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    try:
        numbered = _numbered_lines(handle)
        for line_no, raw in numbered:
            if line_no == 1 and bom_encoding(raw) is not None:
                chunks = itertools.chain([raw], (chunk for _, chunk in numbered))
                yield from _bom_lines(chunks, name, errors, keep_ends)
                return
            text = _decode(raw, name, line_no, errors)
            yield line_no, text if keep_ends else text.rstrip("\r\n")
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise ValueError(f"{name}: cannot be read as gzip ({error})") from None


# byte-order marks of the encodings read besides UTF-8 (UTF-32's first: UTF-32LE's mark
# starts with UTF-16LE's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _bom(data: bytes) -> tuple[bytes, str] | None:
    """(byte-order mark, encoding) of the UTF-16 or UTF-32 mark that opens `data`, or None."""
    return next(((bom, encoding) for bom, encoding in _BOMS if data.startswith(bom)), None)


def bom_encoding(data: bytes) -> str | None:
    """The UTF-16 or UTF-32 encoding whose byte-order mark opens `data`, or None."""
    found = _bom(data)
    return found[1] if found else None


def decode_with_bom(data: bytes, name: str, errors: str = "strict") -> str:
    """UTF-16 or UTF-32 text that opens with its byte-order mark (dropped), decoded whole;
    bytes that are not of that encoding are an error naming the line."""
    bom, encoding = _bom(data)
    body = data[len(bom):]
    try:
        return body.decode(encoding, errors=errors)
    except UnicodeDecodeError as error:
        line = body[:error.start].decode(encoding, errors="replace").count("\n") + 1
        raise NotUtf8Error(f"{name}:{line}: not valid {encoding[:6].upper()} after its "
                           f"byte-order mark ({error.reason})") from None


def _bom_lines(chunks: Iterator[bytes], name: str, errors: str,
               keep_ends: bool) -> Iterator[tuple[int, str]]:
    """(line number, line) of UTF-16 or UTF-32 text whose byte-order mark opens `chunks`
    (Windows Notepad's "Unicode"), decoded as it streams in; bytes that are not of that
    encoding are an error naming the line, or U+FFFD with errors="replace". Text with carriage
    returns and no line feed (old Macs) is cut at each CR, as UTF-8 text is."""
    first = next(chunks)
    bom, encoding = _bom(first)
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    pending, line_no, separator = "", 0, None
    for chunk in itertools.chain([first[len(bom):]], chunks, [None]):
        try:
            pending += decoder.decode(b"", final=True) if chunk is None else \
                decoder.decode(chunk)
        except UnicodeDecodeError as error:
            read = error.object[:error.start].decode(encoding, errors="replace")
            where = line_no + 1 + (pending + read).count("\n")
            raise NotUtf8Error(f"{name}:{where}: not valid {encoding[:6].upper()} after its "
                               f"byte-order mark ({error.reason})") from None
        if separator is None:  # decided by the first line feed, or at the end
            if "\n" not in pending and chunk is not None:
                continue
            separator = "\n" if "\n" in pending or "\r" not in pending else "\r"
        *lines, pending = pending.split(separator)
        for line in lines:
            line_no += 1
            yield line_no, line + separator if keep_ends else line.rstrip("\r")
    if pending:
        yield line_no + 1, pending if keep_ends else pending.rstrip("\r")


def _numbered_lines(handle) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of a binary line iterator; input with carriage returns and no
    line feed at all (old Macs: its first "line" is all of it) is cut at each CR."""
    for line_no, raw in enumerate(handle, start=1):
        if line_no == 1 and not raw.endswith(b"\n") and b"\r" in raw:
            pieces = raw.split(b"\r")
            ended = [piece + b"\r" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1]
                                                                else [])
            yield from enumerate(ended, start=1)
            return
        yield line_no, raw


def _decode(raw: bytes, name: str, line_no: int, errors: str = "strict") -> str:
    if line_no <= 3 and looks_utf16(raw, line_no):
        raise ValueError(f"{name}: looks like UTF-16 text without a byte-order mark (NUL "
                         f"bytes between letters); punctum reads such text as UTF-8: "
                         f"convert it first, e.g. iconv -f UTF-16LE -t UTF-8")
    try:
        text = raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as error:
        if line_no <= 3 and b"\0" in raw:  # (NUL bytes and bad UTF-8 at the start)
            raise ValueError(f"{name}:{line_no}: looks like a binary file, not text (NUL "
                             f"bytes and bytes that are not UTF-8)") from None
        raise NotUtf8Error(f"{name}:{line_no}: not valid UTF-8 ({error.reason} at byte "
                           f"{error.start})") from None
    return text.removeprefix("\ufeff") if line_no == 1 else text


def looks_utf16(line: bytes, line_no: int) -> bool:
    """Whether one of a file's first lines is UTF-16: a byte-order mark opening the file, or
    NUL bytes as every other byte of ASCII letters ("h\\0e\\0l\\0..."), which UTF-8 text
    never holds (a blank first line is one byte: the next one shows it); not NUL bytes
    here and there, as in a binary file (an executable: not UTF-8, said so after)."""
    if line_no == 1 and line[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    sample = line[:200]
    if len(sample) < 4:
        return False
    halves = sample[0::2], sample[1::2]  # UTF-16LE's NULs stand at odd bytes, BE's at even
    return any(one.count(0) * 2 >= len(one) and other.count(0) * 4 <= len(other)
               for one, other in (halves, halves[::-1]))  # (a binary file: NULs anywhere)


# ----------------------------------------------------------------------------- Che format

@dataclass(frozen=True)
class CheDocument:
    """A file in Che's IWSLT token format.

    Attributes:
        tokens: the original tokens, e.g. ("do", "n't").
        labels: one Che label per token.
        groups: how many tokens each merged word spans (sums to len(tokens)).
    """

    tokens: tuple[str, ...]
    labels: tuple[str, ...]
    groups: tuple[int, ...]

    def labelled(self) -> Labelled:
        """Merged words ("don't") with the label of each word's last token; case LOWER."""
        words, post, position = [], [], 0
        for size in self.groups:
            words.append("".join(self.tokens[position:position + size]))
            post.append(self.labels[position + size - 1])
            position += size
        return Labelled(tuple(words), tuple(post), (LOWER,) * len(words))

    def expand(self, word_labels: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """Map per-word labels back onto the tokens: the last token of a word carries it."""
        if len(word_labels) != len(self.groups):
            raise ValueError(f"expected {len(self.groups)} word labels, got {len(word_labels)}")
        expanded: list[str] = []
        for size, label in zip(self.groups, word_labels):
            expanded.extend([NULL] * (size - 1) + [label])
        return tuple(expanded)


def iter_che(path: str | Path) -> Iterator[tuple[str, str]]:
    """Yield (token, label) pairs of a Che-format file; ValueError names bad lines."""
    for line_no, line in _lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"{path}:{line_no}: expected 'word<TAB>LABEL', got {line[:60]!r}")
        if parts[1] not in CHE_LABELS:
            raise ValueError(f"{path}:{line_no}: unknown label {parts[1]!r}; expected one of "
                             f"{', '.join(CHE_LABELS)}")
        yield parts[0], parts[1]


def read_che(path: str | Path) -> CheDocument:
    """Read a Che-format file, merging PTB contraction pieces into the word before them.

    A line with an empty token (dev2012 has ten) gives its mark to the token before it.
    """
    tokens, labels, groups = [], [], []
    for token, label in iter_che(path):
        if not token.strip():
            if labels and labels[-1] == NULL:
                labels[-1] = label
            continue
        if groups and token.lower() in _CONTRACTION_PIECES:
            groups[-1] += 1
        else:
            groups.append(1)
        tokens.append(token)
        labels.append(label)
    return CheDocument(tuple(tokens), tuple(labels), tuple(groups))


# ----------------------------------------------------------------------------- plain text

def iter_lines(path: str | Path, keep_blank: bool = False, errors: str = "strict",
               keep_ends: bool = False) -> Iterator[str]:
    """Yield the lines of a text file (one document, talk or turn per line); blank lines
    are skipped unless `keep_blank`; line endings are kept with `keep_ends`."""
    for _, line in _lines(path, errors, keep_ends):
        if keep_blank or line.strip():
            yield line


def iter_documents(path: str | Path, language: str | Inventory = "en",
                   clean: bool = False) -> Iterator[Labelled]:
    """Yield each line of a cased, punctuated text file parsed into words and labels
    (`clean`: without stage directions and speaker labels, `without_annotations`)."""
    for line in iter_lines(path):
        yield parse(without_annotations(line) if clean else line, language)


# Stage directions of talk and speech transcripts: (Laughter), (Applause.), (Music: ...).
_EVENTS = re.compile(r"\((?:Laughter|Laughs|Applause|Music|Video|Audio|Cheers|Cheering|"
                     r"Singing|Inaudible|Crosstalk|Booing|Boos|Silence)\b[^()]{0,60}\)\s*",
                     re.IGNORECASE)
# Speaker labels in capitals where a line or sentence starts: "THE PRESIDENT: ", "Q: ",
# "AUDIENCE MEMBER: ", and with a title, ending in a period: "MR. SMITH. ", "THE PRESIDENT. "
_SPEAKER = re.compile(r"(?:^|(?<=[.!?)\]] ))(?:[A-Z][A-Z.'\-]*\s){0,3}[A-Z][A-Z.'\-]*:\s+")
_TITLED_SPEAKER = re.compile(
    r"(?:^|(?<=[.!?)\]] ))(?:THE|MR\.|MRS\.|MS\.|DR\.|SENATOR|GOVERNOR|PRESIDENT|SECRETARY"
    r"|MODERATOR)(?: [A-Z][A-Z'\-]*){0,3}\.\s+(?=[A-Z])")


def without_annotations(line: str) -> str:
    """A transcript line without stage directions ("(Laughter)") and speaker labels in
    capitals ("THE PRESIDENT:", "MR. SMITH."): words no recogniser hears as speech, which
    teach a model marks and capitals that speech never has."""
    line = _EVENTS.sub("", line)
    line = _SPEAKER.sub("", line)
    return _TITLED_SPEAKER.sub("", line).strip()


# ----------------------------------------------------------------------------- TSV

@dataclass(frozen=True)
class Utterance:
    """One row of a transcript table."""

    id: str
    speaker: str
    text: str
    fields: dict


def iter_tsv(
    path: str | Path,
    text_column: str = "text",
    id_column: str = "utt_id",
    speaker_column: str = "speaker",
) -> Iterator[Utterance]:
    """Yield the rows of a tab-separated transcript file with a header row.

    The speaker column is optional (speaker "" when absent); the id and text columns are not.
    """
    rows = _lines(path)
    header_line = next(rows, (0, ""))[1]
    header = header_line.split("\t")
    for column in (id_column, text_column):
        if column not in header:
            raise ValueError(f"{path}:1: no {column!r} column in header {header_line[:80]!r}")
    for line_no, line in rows:
        if not line.strip():
            continue
        values = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(values) != len(header):
            raise ValueError(f"{path}:{line_no}: expected {len(header)} columns, "
                             f"got {len(values)}")
        row = dict(zip(header, values))
        yield Utterance(row[id_column], row.get(speaker_column, ""), row[text_column], row)


# ----------------------------------------------------------------------------- IWSLT XML


def iter_xml_segments(path: str | Path) -> Iterator[str]:
    """Yield the text of each <seg> element of an IWSLT mteval XML file, in order."""
    content = "\n".join(line for _, line in _lines(path))
    if "<seg" not in content:
        raise ValueError(f"{path}: no <seg> elements found; expected IWSLT mteval XML")
    try:
        root = ElementTree.fromstring(content)
    except ElementTree.ParseError as error:
        raise ValueError(f"{path}: malformed XML ({error})") from None
    for segment in root.iter("seg"):
        yield " ".join("".join(segment.itertext()).split())


def is_validation(line_number: int, path: str, fraction: float) -> bool:
    """Whether a corpus line is held out for validation: `punctum train`'s split by document
    (a hash of the path and line number, so it never changes)."""
    digest = hashlib.md5(f"{path}:{line_number}".encode()).digest()
    return int.from_bytes(digest[:4], "little") / 2**32 < fraction


def head_texts(sources: list[dict], documents: int, val_fraction: float = 0.0) -> list[str]:
    """The first `documents` lines of each text source of a recipe's [[data.sources]] (as
    recorded in a checkpoint or punctum.json), without the lines its validation split holds
    out; missing files and other formats are skipped. Used to learn casing lexicons."""
    texts: list[str] = []
    for source in sources:
        if source.get("format", "text") != "text" or not Path(source["path"]).exists():
            continue
        for number, line in enumerate(iter_lines(source["path"])):
            if number >= documents:
                break
            if not is_validation(number, source["path"], val_fraction):
                texts.append(line)
    return texts
