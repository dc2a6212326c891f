"""Speech corpora as records: JSONL manifests, LJSpeech-style tables, text sources.

    from punctum.audio.manifest import read_records, write_manifest
    records = read_records("../shared/data/speech/ljspeech_LJ001/transcripts.tsv")

A manifest is JSON lines, one utterance per line, with NeMo's keys where they exist::

    {"id": "0000042", "audio_filepath": "audio/0000042.flac", "duration": 2.41,
     "speaker": "espeak-ng:en-us+f3", "text": "Well, do you see it?",
     "unpunctuated": "well do you see it", ...}

``text`` is cased and punctuated; ``unpunctuated`` is the same words lowercased without
marks (`punctum.text.normalize`). Relative audio paths start from the manifest's folder.
Glued recordings add ``segments``: the source utterances in order, each with its id, text
and start/end seconds in the glued audio (the utterance boundaries that the mid/final split
of the scorer needs). Any other key (voice settings, SNR, ...) is kept in `extra`.

Tables readable as records: LJSpeech-style TSV (``utt_id speaker duration_s text ...`` with
a ``flac/`` or ``wavs/`` folder beside it), text-only TSV with speaker ids (LibriTTS,
LibriSpeech-PC style) and LJSpeech ``metadata.csv`` (``id|text|normalized_text``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from punctum.corpora import iter_lines, iter_tsv
from punctum.fileio import atomic_writer
from punctum.text import normalize

MANIFEST = "manifest.jsonl"  # the manifest file of a corpus folder (synth, glue)
AUDIO_FOLDER = "audio"  # where synth and glue write a corpus folder's audio
AUDIO_FOLDERS = ("flac", "wavs", "wav", "audio")
AUDIO_SUFFIXES = (".flac", ".wav", ".ogg", ".mp3")
_CORE_KEYS = ("id", "audio_filepath", "duration", "speaker", "text", "unpunctuated",
              "segments")


def as_tuple(value) -> tuple:
    """A TOML/CLI value as a tuple: lists and tuples as they are, one value alone."""
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


@dataclass(frozen=True)
class Segment:
    """One source utterance inside a glued recording.

    Attributes:
        id: the source utterance's id.
        text: its punctuated text.
        start, end: seconds in the glued audio (None for text-only records).
    """

    id: str
    text: str
    start: float | None = None
    end: float | None = None

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class ManifestRecord:
    """One utterance (or glued recording) of a speech corpus.

    Attributes:
        id: unique id within the corpus.
        text: cased, punctuated transcript.
        speaker: speaker id (a TTS voice id for synthetic speech; "" when unknown).
        audio_path: absolute path of the audio file, or None for text-only corpora.
        duration: seconds of audio, or None when unknown.
        unpunctuated: `text` lowercased without marks (computed when not given).
        segments: source utterances of a glued recording, in order (empty otherwise).
        extra: any other manifest keys.
    """

    id: str
    text: str
    speaker: str = ""
    audio_path: str | None = None
    duration: float | None = None
    unpunctuated: str = ""
    segments: tuple[Segment, ...] = ()
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.unpunctuated:
            object.__setattr__(self, "unpunctuated", unpunctuate(self.text))

    def to_dict(self, base_dir: str | Path | None = None) -> dict:
        """JSON-ready dict; the audio path is made relative to `base_dir` when inside it."""
        data = {"id": self.id, "audio_filepath": _relative(self.audio_path, base_dir),
                "duration": self.duration, "speaker": self.speaker, "text": self.text,
                "unpunctuated": self.unpunctuated}
        if self.segments:
            data["segments"] = [segment.to_dict() for segment in self.segments]
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: dict, base_dir: str | Path | None = None) -> ManifestRecord:
        """Build a record from a manifest line's dict (relative audio paths join base_dir)."""
        if not isinstance(data.get("text"), str):
            raise ValueError("expected a string 'text' key")
        audio = data.get("audio_filepath")
        if audio is not None and base_dir is not None and not os.path.isabs(audio):
            audio = os.path.join(base_dir, audio)
        duration = data.get("duration")
        if duration is not None and (isinstance(duration, bool) or not isinstance(
                duration, (int, float)) or not 0 <= duration <= 1e7):
            raise ValueError(f"expected 'duration' in seconds (a number from 0 to 1e7), got "
                             f"{duration!r}")
        segments = tuple(Segment(str(s["id"]), s["text"], s.get("start"), s.get("end"))
                         for s in data.get("segments") or ())
        extra = {key: value for key, value in data.items() if key not in _CORE_KEYS}
        return cls(id=str(data.get("id", "")), text=data["text"],
                   speaker=str(data.get("speaker", "")), audio_path=audio,
                   duration=None if duration is None else float(duration),
                   unpunctuated=data.get("unpunctuated") or "", segments=segments,
                   extra=extra)

    def final_word_flags(self) -> list[bool]:
        """Per word of `text`: True at the last word of each segment (of the record when
        it has no segments). The mid-utterance / utterance-final split of the scorer."""
        texts = [segment.text for segment in self.segments] or [self.text]
        flags: list[bool] = []
        for text in texts:
            n_words = len(normalize(text))
            flags.extend([False] * (n_words - 1) + [True] if n_words else [])
        return flags


def unpunctuate(text: str) -> str:
    """The words of a punctuated text, lowercased, marks stripped, joined by spaces."""
    return " ".join(normalize(text))


def _relative(audio: str | None, base_dir: str | Path | None) -> str | None:
    if audio is None or base_dir is None:
        return audio
    relative = os.path.relpath(audio, base_dir)
    return audio if relative.startswith("..") else relative


# ----------------------------------------------------------------------------- manifests

def iter_manifest(path: str | Path) -> Iterator[ManifestRecord]:
    """Yield the records of a JSONL manifest; errors name the file and line."""
    base_dir = os.path.dirname(os.path.abspath(path))
    for line_no, line in enumerate(iter_lines(path, keep_blank=True), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            yield ManifestRecord.from_dict(data, base_dir)
        except (json.JSONDecodeError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}:{line_no}: not a manifest line ({error})") from None


def read_manifest(path: str | Path) -> list[ManifestRecord]:
    """All records of a JSONL manifest."""
    return list(iter_manifest(path))


def manifest_line(record: ManifestRecord, base_dir: str | Path | None = None) -> str:
    """One JSONL line (without the newline)."""
    return json.dumps(record.to_dict(base_dir), ensure_ascii=False)


def write_manifest(path: str | Path, records: Iterable[ManifestRecord]) -> int:
    """Write records as JSONL atomically (a temporary file, then a rename).

    Audio paths inside the manifest's folder are written relative to it.

    Returns:
        The number of records written.
    """
    path = Path(path)
    base_dir = path.resolve().parent
    count = 0
    with atomic_writer(path, compress=False) as handle:
        for record in records:
            handle.write(manifest_line(record, base_dir) + "\n")
            count += 1
    return count


# ----------------------------------------------------------------------------- tables

def _audio_folder(table: Path, audio_dir: str | Path | None) -> Path | None:
    if audio_dir is not None:
        folder = Path(audio_dir)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no such audio folder")
        return folder
    for name in AUDIO_FOLDERS:
        if (table.parent / name).is_dir():
            return table.parent / name
    return None


def _audio_file(folder: Path | None, utt_id: str, table: Path) -> str | None:
    if folder is None:
        return None
    for suffix in AUDIO_SUFFIXES:
        candidate = folder / (utt_id + suffix)
        if candidate.is_file():
            return str(candidate.resolve())
    raise FileNotFoundError(f"{table}: no audio file for {utt_id!r} in {folder}")


def read_transcripts_tsv(path: str | Path, text_column: str = "text",
                         audio_dir: str | Path | None = None) -> list[ManifestRecord]:
    """Records from a TSV with a header (utt_id, speaker, text; duration_s optional).

    LJSpeech-style tables have their audio in a ``flac/`` or ``wavs/`` folder beside them
    (or `audio_dir`), one ``<utt_id>.flac`` or ``.wav`` per row; tables without such a folder
    (LibriTTS or LibriSpeech-PC text) give text-only records (audio_path None).
    """
    path = Path(path)
    folder = _audio_folder(path, audio_dir)
    records = []
    for row in iter_tsv(path, text_column=text_column):
        duration = row.fields.get("duration_s") or row.fields.get("duration")
        records.append(ManifestRecord(
            id=row.id, text=row.text, speaker=row.speaker,
            audio_path=_audio_file(folder, row.id, path),
            duration=float(duration) if duration else None))
    return records


def read_ljspeech_metadata(path: str | Path, speaker: str = "LJ",
                           audio_dir: str | Path | None = None) -> list[ManifestRecord]:
    """Records from LJSpeech's ``metadata.csv`` (``id|text|normalized_text``, .gz read).

    The text is the original (punctuated) column. Audio comes from a ``wavs/`` folder
    beside the file (or `audio_dir`) when there is one.
    """
    path = Path(path)
    folder = _audio_folder(path, audio_dir)
    records = []
    for line_no, line in enumerate(iter_lines(path, keep_blank=True), start=1):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) < 2:
            raise ValueError(f"{path}:{line_no}: expected 'id|text|normalized_text', "
                             f"got {line[:60]!r}")
        records.append(ManifestRecord(id=fields[0], text=fields[1], speaker=speaker,
                                      audio_path=_audio_file(folder, fields[0], path)))
    return records


def _suffix(path: Path) -> str:
    name = path.name.lower().removesuffix(".gz")
    return os.path.splitext(name)[1]


def read_records(path: str | Path, text_column: str = "text") -> list[ManifestRecord]:
    """Records from a manifest (.jsonl), a transcript table (.tsv) or LJSpeech metadata
    (.csv); ``.gz`` files are read transparently."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    suffix = _suffix(path)
    if suffix in (".jsonl", ".json"):
        return read_manifest(path)
    if suffix == ".tsv":
        return read_transcripts_tsv(path, text_column)
    if suffix == ".csv":
        return read_ljspeech_metadata(path)
    raise ValueError(f"{path}: expected a .jsonl manifest, a .tsv table or an LJSpeech "
                     f".csv, got {suffix or 'no extension'!r}")


def iter_texts(path: str | Path, text_column: str = "text") -> Iterator[tuple[str, str]]:
    """(id, punctuated text) from a text file (one document per line), a table or a
    manifest. Line ids of text files are ``<file stem>:<line number>``."""
    path = Path(path)
    if _suffix(path) in (".jsonl", ".json", ".tsv", ".csv"):
        for record in read_records(path, text_column):
            yield record.id, record.text
        return
    stem = path.name.split(".")[0]
    for line_no, line in enumerate(iter_lines(path, keep_blank=True), start=1):
        if line.strip():
            yield f"{stem}:{line_no}", line
