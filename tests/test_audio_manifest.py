"""Manifests and speech tables: round trips, relative paths, LJSpeech-style loaders."""

import gzip
import json

import numpy as np
import pytest

from punctum.audio.manifest import (
    ManifestRecord,
    Segment,
    iter_texts,
    read_ljspeech_metadata,
    read_manifest,
    read_records,
    read_transcripts_tsv,
    unpunctuate,
    write_manifest,
)


def test_record_fills_unpunctuated_text():
    record = ManifestRecord("a", "Well, do you see it? Yes.", "spk")
    assert record.unpunctuated == "well do you see it yes"
    assert unpunctuate("") == "" and unpunctuate("?!") == ""


def test_write_read_round_trip_with_relative_paths(tmp_path):
    audio = tmp_path / "audio" / "a.flac"
    outside = tmp_path.parent / "elsewhere.flac"
    records = [
        ManifestRecord("a", "Hello there.", "s1", str(audio), 1.5, extra={"rate": 1.1}),
        ManifestRecord("b", "Über straße, ja?", "s2", str(outside), None,
                       segments=(Segment("x", "Über straße,", 0.0, 0.7),
                                 Segment("y", "ja?", 0.7, 1.2))),
        ManifestRecord("c", "Text only.", "s3"),
    ]
    path = tmp_path / "manifest.jsonl"
    assert write_manifest(path, records) == 3
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["audio_filepath"] == "audio/a.flac" and lines[0]["rate"] == 1.1
    assert lines[1]["audio_filepath"] == str(outside)
    assert "Über" in path.read_text(encoding="utf-8")
    back = read_manifest(path)
    assert back == records


def test_bad_manifest_line_names_file_and_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "a", "text": "ok."}\n\n{"id": "b", "text": \n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"m.jsonl:3: not a manifest line"):
        read_manifest(path)
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r":1: .*'text'"):
        read_manifest(path)


def test_final_word_flags():
    plain = ManifestRecord("a", "One two. Three?")
    assert plain.final_word_flags() == [False, False, True]
    glued = ManifestRecord("g", "One two. Three? Four", segments=(
        Segment("a", "One two."), Segment("b", "Three?"), Segment("c", "Four")))
    assert glued.final_word_flags() == [False, True, True, True]
    assert ManifestRecord("e", "").final_word_flags() == []


def _write_flac(path, seconds=0.5, rate=22050):
    soundfile = pytest.importorskip("soundfile")
    t = np.arange(int(seconds * rate)) / rate
    soundfile.write(str(path), 0.3 * np.sin(2 * np.pi * 200 * t), rate)


def test_ljspeech_style_tsv_with_audio(tmp_path):
    (tmp_path / "flac").mkdir()
    rows = [("U-1", "SPK", "0.500", "First, a clip.", "First, a clip."),
            ("U-2", "SPK", "0.500", "Then another?", "Then another?")]
    for row in rows:
        _write_flac(tmp_path / "flac" / f"{row[0]}.flac")
    table = tmp_path / "transcripts.tsv"
    table.write_text("utt_id\tspeaker\tduration_s\ttext\tnormalized_text\n"
                     + "".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    records = read_records(table)
    assert [r.id for r in records] == ["U-1", "U-2"]
    assert records[0].speaker == "SPK" and records[0].duration == 0.5
    assert records[1].audio_path.endswith("flac/U-2.flac")
    assert records[1].unpunctuated == "then another"
    (tmp_path / "flac" / "U-2.flac").unlink()
    with pytest.raises(FileNotFoundError, match="U-2"):
        read_transcripts_tsv(table)


def test_text_only_tsv_and_ljspeech_metadata(tmp_path):
    table = tmp_path / "books.tsv.gz"
    with gzip.open(table, "wt", encoding="utf-8") as handle:
        handle.write("utt_id\tspeaker\tchapter\ttext\n1_1\t7\t1\tIt began.\n1_2\t7\t1\tThen?\n")
    records = read_records(table)
    assert [(r.speaker, r.audio_path, r.text) for r in records] == [
        ("7", None, "It began."), ("7", None, "Then?")]
    metadata = tmp_path / "metadata.csv"
    metadata.write_text("LJ9-1|Mr. Smith said, quote, yes.|Mister Smith said, quote, yes.\n"
                        "LJ9-2|Done.|Done.\n", encoding="utf-8")
    lj = read_ljspeech_metadata(metadata)
    assert [r.text for r in lj] == ["Mr. Smith said, quote, yes.", "Done."]
    assert lj[0].speaker == "LJ" and lj[0].audio_path is None
    metadata.write_text("no pipes here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"metadata.csv:1"):
        read_ljspeech_metadata(metadata)


def test_read_records_rejects_unknown_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_records(tmp_path / "none.jsonl")
    other = tmp_path / "x.xml"
    other.write_text("<a/>")
    with pytest.raises(ValueError, match="expected a .jsonl manifest"):
        read_records(other)


def test_iter_texts(tmp_path):
    text = tmp_path / "talks.txt"
    text.write_text("First talk. It is short.\n\nSecond talk?\n", encoding="utf-8")
    assert list(iter_texts(text)) == [("talks:1", "First talk. It is short."),
                                      ("talks:3", "Second talk?")]
    manifest = tmp_path / "m.jsonl"
    write_manifest(manifest, [ManifestRecord("u1", "Hi there.")])
    assert list(iter_texts(manifest)) == [("u1", "Hi there.")]
