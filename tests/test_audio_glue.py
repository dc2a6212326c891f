"""Utterance gluing (Samsung 3.2) and the plain-concatenation baseline, on generated tones."""

import json

import numpy as np
import pytest

pytest.importorskip("soundfile")
pytest.importorskip("soxr")

from punctum.audio.glue import (  # noqa: E402
    GlueConfig,
    crossfade_concat,
    glue_corpus,
    glue_signals,
    group_sizes,
    map_position,
    plan_groups,
    silent_runs,
    trim_silences,
)
from punctum.audio.io import SAMPLE_RATE, load_audio, rms, write_audio  # noqa: E402
from punctum.audio.manifest import ManifestRecord, read_manifest  # noqa: E402
from punctum.cli import main  # noqa: E402

WORDS = ["red", "boat", "garden", "house", "river", "apple", "bridge", "teacher", "window"]


def _utterance(rng, amplitude, voiced_s=1.2, pause_s=0.0):
    """Silence, a tone burst (optionally split by a pause), silence: (n,) float32."""
    freq = rng.uniform(150, 400)
    t = np.arange(int(voiced_s * SAMPLE_RATE)) / SAMPLE_RATE
    tone = amplitude * np.sin(2 * np.pi * freq * t)
    half = len(tone) // 2
    parts = [np.zeros(int(0.1 * SAMPLE_RATE)), tone[:half],
             np.zeros(int(pause_s * SAMPLE_RATE)), tone[half:], np.zeros(int(0.2 * SAMPLE_RATE))]
    return np.concatenate(parts).astype(np.float32)


def _sentence(rng, index):
    words = [WORDS[i] for i in rng.integers(len(WORDS), size=rng.integers(2, 5))]
    return f"Number {index} {' '.join(words)}" + rng.choice([".", "?", ","])


def _corpus(tmp_path, n_speakers=3, per_speaker=7, seed=0):
    """FLAC utterances of several speakers at varied loudness, plus one too short and one
    too quiet per speaker; returns the records."""
    rng = np.random.default_rng(seed)
    folder = tmp_path / "in"
    folder.mkdir()
    records = []
    for s in range(n_speakers):
        for u in range(per_speaker + 2):
            kind = "short" if u == per_speaker else "quiet" if u == per_speaker + 1 else ""
            amplitude = 0.005 if kind == "quiet" else rng.uniform(0.05, 0.8)
            signal = _utterance(rng, amplitude, voiced_s=0.4 if kind == "short" else 1.2,
                                pause_s=0.0 if kind == "short" else rng.choice([0.0, 0.3, 1.5]))
            utt_id = f"s{s}-u{u}{kind}"
            write_audio(folder / f"{utt_id}.flac", signal)
            records.append(ManifestRecord(utt_id, _sentence(rng, len(records)), f"spk{s}",
                                          str(folder / f"{utt_id}.flac"),
                                          len(signal) / SAMPLE_RATE))
    return records


# ----------------------------------------------------------------------------- pieces

@pytest.mark.parametrize("low,high", [(2, 3), (2, 4), (1, 1), (3, 5)])
def test_group_sizes_cover_every_item_within_bounds(low, high):
    config = GlueConfig(min_group=low, max_group=high)
    for n in range(0, 40):
        sizes = group_sizes(n, config, np.random.default_rng(n))
        assert sum(sizes) == n and all(1 <= size <= high for size in sizes)
        if n >= low:
            assert all(size >= low for size in sizes), (n, sizes)


def test_crossfade_lengths_and_unity_gain():
    signals = [np.ones(1000), np.ones(500), np.ones(800)]
    glued = crossfade_concat(signals, [160, 192])
    assert len(glued.samples) == 2300 - 160 - 192
    assert np.allclose(glued.samples, 1.0)  # fade-out + fade-in sum to one
    assert glued.spans == ((0, 1000 - 160 + 80), (920, 920 + 500 - 192 + 96 - 80),
                           (1244, 1948))
    assert glued.crossfades == (160, 192)
    ramp = crossfade_concat([np.ones(100), np.zeros(100)], [40]).samples
    assert np.all(np.diff(ramp[60:100]) < 0) and ramp[59] == 1 and ramp[100] == 0
    assert crossfade_concat([np.ones(10), np.ones(10)], [50]).crossfades == (10,)
    assert len(crossfade_concat([np.ones(3), np.ones(4)], [0]).samples) == 7
    assert crossfade_concat([], []).samples.size == 0
    with pytest.raises(ValueError, match="cross-fades"):
        crossfade_concat(signals, [1])


def test_trim_silences_respects_the_bounds():
    rng = np.random.default_rng(3)
    tone = 0.5 * np.sin(np.arange(8000) * 0.1)
    gaps = [0.3, 1.5, 0.59, 2.0]
    pieces = [tone]
    for gap in gaps:
        pieces += [np.zeros(int(gap * SAMPLE_RATE)), tone]
    signal = np.concatenate(pieces)
    for seed in range(10):
        trimmed, cuts = trim_silences(signal, 0.002, 0.6, 0.1, np.random.default_rng(seed))
        runs = silent_runs(trimmed, 0.002)
        lengths = [x for x in (runs[:, 1] - runs[:, 0]) / SAMPLE_RATE if x > 0.01]
        assert len(cuts) == 2 and len(lengths) == 4  # (zero crossings are not silences)
        assert lengths[0] == pytest.approx(0.3, abs=0.002)  # short silences untouched
        assert lengths[2] == pytest.approx(0.59, abs=0.002)
        assert all(0.1 - 0.002 <= x <= 0.6 for x in (lengths[1], lengths[3]))
        loud = np.abs(signal) >= 0.002 * 0.5
        assert np.array_equal(trimmed[np.abs(trimmed) >= 0.001], signal[loud])
    assert trim_silences(tone, 0.002, 0.6, 0.1, rng)[1] == ()


def test_map_position():
    cuts = [(10, 20), (50, 55)]
    assert [map_position(p, cuts) for p in (0, 10, 15, 20, 49, 55, 60)] == \
        [0, 10, 10, 10, 39, 40, 45]


def test_glue_signals_concat_is_plain_concatenation():
    signals = [np.ones(100), np.zeros(SAMPLE_RATE * 2), np.ones(50)]
    glued = glue_signals(signals, GlueConfig(mode="concat"), np.random.default_rng(0))
    assert np.array_equal(glued.samples, np.concatenate(signals).astype(np.float32))
    assert glued.crossfades == (0, 0) and glued.cuts == ()


def test_plan_groups_sorts_each_speaker_by_rms():
    speakers = ["b", "a", "b", "a", "b", "a", "b"]
    levels = [0.5, 0.1, 0.2, 0.9, 0.3, 0.4, 0.1]
    groups = plan_groups(speakers, levels, GlueConfig(min_group=2, max_group=2))
    assert groups == [[1, 5], [3], [6, 2], [4, 0]]
    text_only = plan_groups(speakers, [None] * 7, GlueConfig(min_group=2, max_group=2))
    assert text_only == [[1, 3], [5], [0, 2], [4, 6]]


# ----------------------------------------------------------------------------- corpus

def _check_glued_corpus(records, out, report):
    by_id = {record.id: record for record in records}
    kept = [r for r in records if not r.id.endswith(("short", "quiet"))]
    levels = {r.id: rms(load_audio(r.audio_path)) for r in kept}
    glued = read_manifest(out / "manifest.jsonl")
    seen = []
    for record in glued:
        members = [by_id[segment.id] for segment in record.segments]
        assert len({m.speaker for m in members}) == 1 and record.speaker == members[0].speaker
        assert 2 <= len(members) <= 3
        assert record.text == " ".join(m.text for m in members)
        assert [s.text for s in record.segments] == [m.text for m in members]
        assert all(ms in (8.0, 10.0, 12.0) for ms in record.extra["crossfade_ms"])
        samples = load_audio(record.audio_path)
        fades = sum(record.extra["crossfade_ms"]) / 1000
        expected = sum(m.duration for m in members) - fades - record.extra["silence_cut_s"]
        assert len(samples) / SAMPLE_RATE == pytest.approx(expected, abs=2e-3)
        runs = silent_runs(samples, 0.002)
        assert np.all(runs[:, 1] - runs[:, 0] <= 0.9 * SAMPLE_RATE + 1)
        bounds = [s.start for s in record.segments] + [record.segments[-1].end]
        assert bounds[0] == 0 and bounds == sorted(bounds)
        assert bounds[-1] == pytest.approx(record.duration, abs=1e-3)
        speaker_list = sorted((m for m in kept if m.speaker == record.speaker),
                              key=lambda m: (levels[m.id], m.id))
        positions = [speaker_list.index(m) for m in members]
        assert positions == list(range(positions[0], positions[0] + len(members)))
        seen += [m.id for m in members]
    assert sorted(seen) == sorted(r.id for r in kept)  # each kept utterance exactly once
    assert report.n_too_short == 3 and report.n_too_quiet == 3


def test_glue_corpus_follows_the_paper(tmp_path):
    records = _corpus(tmp_path)
    report = glue_corpus(records, tmp_path / "out", GlueConfig(seed=1, workers=2))
    _check_glued_corpus(records, tmp_path / "out", report)
    assert report.n_input == len(records) and report.n_single == 0


def test_glue_is_reproducible_from_the_seed(tmp_path):
    records = _corpus(tmp_path, n_speakers=2, per_speaker=5)
    outputs = []
    for name, seed in (("a", 4), ("b", 4), ("c", 5)):
        glue_corpus(records, tmp_path / name, GlueConfig(seed=seed))
        manifest = (tmp_path / name / "manifest.jsonl").read_text(encoding="utf-8")
        audio = b"".join(p.read_bytes() for p in sorted((tmp_path / name / "audio").iterdir()))
        outputs.append((manifest.replace(str(tmp_path / name), ""), audio))
    assert outputs[0] == outputs[1] and outputs[0] != outputs[2]


def test_concat_mode_differs_as_specified(tmp_path):
    records = _corpus(tmp_path)
    report = glue_corpus(records, tmp_path / "out", GlueConfig(mode="concat", seed=2))
    by_id = {record.id: record for record in records}
    glued = read_manifest(tmp_path / "out" / "manifest.jsonl")
    members = [[by_id[s.id] for s in record.segments] for record in glued]
    assert report.n_too_short == report.n_too_quiet == 0
    assert sorted(m.id for group in members for m in group) == sorted(by_id)  # none dropped
    assert any(len({m.speaker for m in group}) > 1 for group in members)  # speakers mix
    for record, group in zip(glued, members):
        assert record.text == " ".join(m.text for m in group)
        samples = load_audio(record.audio_path)
        joined = np.concatenate([load_audio(m.audio_path) for m in group])
        assert np.array_equal(samples, joined)  # no cross-fade, no trimming
        assert record.extra["crossfade_ms"] == [0.0] * (len(group) - 1)
    same = glue_corpus(records, tmp_path / "same",
                       GlueConfig(mode="concat", concat_same_speaker=True, seed=2))
    for record in read_manifest(tmp_path / "same" / "manifest.jsonl"):
        assert len({by_id[s.id].speaker for s in record.segments}) == 1
    assert same.n_recordings > 0


def test_text_only_corpus_is_glued_in_order(tmp_path):
    records = [ManifestRecord(f"{s}-{i}", f"Sentence {i} of {s}.", s)
               for s in ("x", "y") for i in range(5)]
    report = glue_corpus(records, tmp_path, GlueConfig(min_group=2, max_group=2))
    glued = read_manifest(tmp_path / "manifest.jsonl")
    assert [[s.id for s in r.segments] for r in glued] == [
        ["x-0", "x-1"], ["x-2", "x-3"], ["x-4"], ["y-0", "y-1"], ["y-2", "y-3"], ["y-4"]]
    assert glued[0].text == "Sentence 0 of x. Sentence 1 of x."
    assert glued[0].audio_path is None and glued[0].segments[0].start is None
    assert glued[0].final_word_flags() == [False, False, False, True] * 2
    assert report.n_single == 2


def test_glue_needs_speakers_and_one_kind_of_record(tmp_path):
    with pytest.raises(ValueError, match="no speaker id"):
        glue_corpus([ManifestRecord("a", "Hi.")], tmp_path, GlueConfig())
    mixed = [ManifestRecord("a", "Hi.", "s", str(tmp_path / "a.flac")),
             ManifestRecord("b", "Yo.", "s")]
    with pytest.raises(ValueError, match="some records have audio"):
        glue_corpus(mixed, tmp_path, GlueConfig())
    for field, value in (("mode", "splice"), ("max_group", 1), ("silence_limits", (0.05,)),
                         ("silence_limits", (0.6, float("nan"))),
                         ("silence_limits", (float("inf"),)),
                         ("crossfade_ms", (8, float("nan"))), ("crossfade_ms", (float("inf"),)),
                         ("min_duration", float("nan")), ("seed", -1)):
        with pytest.raises(ValueError, match=field):
            GlueConfig(**{field: value})


def test_glue_never_writes_over_its_input(tmp_path, capsys):
    records = [ManifestRecord(f"x-{i}", f"Sentence {i}.", "x") for i in range(4)]
    glue_corpus(records, tmp_path / "one", GlueConfig(min_group=2, max_group=2))
    manifest = tmp_path / "one" / "manifest.jsonl"
    before = manifest.read_bytes()
    assert main(["glue", str(manifest), "--out", str(tmp_path / "one"), "--no-progress"]) == 2
    assert "is an input" in capsys.readouterr().err and manifest.read_bytes() == before
    (tmp_path / "synth").mkdir()
    (tmp_path / "synth" / "synth.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="holds a synthesized corpus"):
        glue_corpus(records, tmp_path / "synth", GlueConfig())
    inside = [ManifestRecord("a", "Hi.", "s", str(tmp_path / "out" / "audio" / "a.flac"))]
    with pytest.raises(ValueError, match="which glue writes"):
        glue_corpus(inside, tmp_path / "out", GlueConfig())


def test_manifest_durations_must_be_seconds():
    for duration in (float("nan"), -3, float("inf"), "2"):
        with pytest.raises(ValueError, match="'duration' in seconds"):
            ManifestRecord.from_dict({"text": "Hi.", "duration": duration})


def test_cli_glue_and_its_one_line_errors(tmp_path, capsys):
    records = _corpus(tmp_path, n_speakers=1, per_speaker=4)
    (tmp_path / "in").rename(tmp_path / "flac")  # LJSpeech layout: flac/ beside the table
    (tmp_path / "transcripts.tsv").write_text("utt_id\tspeaker\ttext\n" + "".join(
        f"{r.id}\t{r.speaker}\t{r.text}\n" for r in records), encoding="utf-8")
    code = main(["glue", str(tmp_path / "transcripts.tsv"), "--out", str(tmp_path / "out"),
                 "--no-progress", "--group-size", "2", "2", "--crossfade-ms", "10"])
    captured = capsys.readouterr()
    assert code == 0 and "2 recordings from 6 utterances" in captured.out
    lines = (tmp_path / "out" / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["crossfade_ms"] == [10.0] for line in lines)
    (tmp_path / "flac" / f"{records[0].id}.flac").write_bytes(b"not audio at all")
    code = main(["glue", str(tmp_path / "transcripts.tsv"), "--out", str(tmp_path / "o2"),
                 "--no-progress"])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1 and "cannot decode audio" in error


def test_a_rerun_removes_the_old_manifest_before_writing_audio(tmp_path, monkeypatch):
    from punctum.audio import glue as glue_module

    records = _corpus(tmp_path)
    out = tmp_path / "out"
    glue_corpus(records, out, GlueConfig(seed=0, workers=1))
    assert (out / "manifest.jsonl").exists()

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(glue_module, "write_audio", stop)
    with pytest.raises(KeyboardInterrupt):
        glue_corpus(records, out, GlueConfig(seed=1, workers=1))
    assert not (out / "manifest.jsonl").exists()  # none, rather than one for other audio


def test_no_records_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no records to glue"):
        glue_corpus([], tmp_path / "out", GlueConfig())
