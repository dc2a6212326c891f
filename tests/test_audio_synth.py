"""punctum synth: texts -> utterances, voices and hold-out, plans, engines, corpus builds."""

import dataclasses
import json
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest

from punctum.audio import voices as voices_module
from punctum.audio.synth import (
    SynthConfig,
    TextUtterance,
    build_corpus,
    build_from_recipe,
    choose_texts,
    collect_texts,
    parse_synth_recipe,
    plan_utterance,
    split_utterances,
    text_split,
)
from punctum.audio.voices import (
    VOICES,
    Voice,
    find_voice,
    select_voices,
    voice_available,
)
from punctum.cli import main
from punctum.text import canonical

RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "speech-synth.toml"
DOCUMENT = ("so, what do you think? I think it's great. we visit New York every year, "
            "and we love it! this sentence is far too long to be spoken in one go because "
            "it keeps going on and on and on without any end in sight for a very long while. "
            "do you? yes.")


def test_config_validation_names_the_field():
    assert SynthConfig(voices=["slt"], rate_range=[0.9, 1.1]).voices == ("slt",)
    for field, value in (("rate_range", (1.2, 0.8)), ("split", "eval"),
                         ("split_fractions", (0.5, 0.5, 0.5)), ("noise_kinds", ("blue",)),
                         ("max_words", 1), ("noise_probability", 2.0), ("pitch_range", (3, 4))):
        with pytest.raises(ValueError, match=field):
            SynthConfig(**{field: value})


def test_split_utterances_keeps_whole_sentences():
    config = SynthConfig(min_words=2, max_words=12, max_sentences=2)
    utterances = split_utterances("doc", DOCUMENT, config)
    texts = [u.text for u in utterances]
    assert texts == ["So, what do you think? I think it's great.",
                     "We visit New York every year, and we love it!",
                     "Do you? Yes."]
    assert all(u.source == "doc" and u.n_words == len(u.text.split()) for u in utterances)
    assert all(canonical(t) == t for t in texts)
    one = split_utterances("d", DOCUMENT, dataclasses.replace(config, max_sentences=1))
    assert [u.text for u in one][:2] == ["So, what do you think?", "I think it's great."]
    assert split_utterances("d", "", config) == []
    digits = SynthConfig(min_words=1, max_sentences=1, skip_digits=True)
    assert [u.text for u in split_utterances("d", "I am 42. You are not.", digits)] == [
        "You are not."]


def test_text_split_is_stable_and_ignores_case_and_marks():
    fractions = (0.8, 0.1, 0.1)
    assert text_split(["hello", "there"], fractions) == text_split(["hello", "there"], fractions)
    counts = {name: 0 for name in ("train", "dev", "test")}
    for i in range(3000):
        counts[text_split(["sentence", str(i)], fractions)] += 1
    assert 2250 < counts["train"] < 2550 and 200 < counts["dev"] < 400
    a = split_utterances("d", "Hello, there!", SynthConfig(min_words=1))[0]
    b = split_utterances("d", "hello there.", SynthConfig(min_words=1))[0]
    assert a.split == b.split


def test_choose_texts_is_seeded_and_keeps_one_split():
    pool = [TextUtterance("d", f"Text {i}.", 2, "train" if i % 3 else "test")
            for i in range(30)]
    config = SynthConfig(split="test", n_utterances=5, seed=3)
    chosen = choose_texts(pool, config)
    assert len(chosen) == 5 and all(u.split == "test" for u in chosen)
    assert chosen == choose_texts(pool, config)
    assert chosen != choose_texts(pool, dataclasses.replace(config, seed=4))
    assert len(choose_texts(pool, SynthConfig())) == 30


def test_collect_texts_reads_files_and_excludes_ids(tmp_path):
    metadata = tmp_path / "metadata.csv"
    metadata.write_text("AB1-1|Keep this one, please.|x\nCD2-1|Drop this one now.|x\n",
                        encoding="utf-8")
    texts = collect_texts([metadata], SynthConfig(), exclude_prefixes=("CD2-",))
    assert [(t.source, t.text) for t in texts] == [("AB1-1", "Keep this one, please.")]


def test_select_voices_by_id_name_and_family():
    slt = select_voices(("slt",))
    assert {v.id for v in slt} == {"flite:slt", "festival:cmu_us_slt_arctic_hts"}
    rest = select_voices((), ("slt", "en-gb-scotland", "festival:ked_diphone"))
    assert not {v.id for v in rest} & {v.id for v in slt}
    assert len(rest) == len(VOICES) - 5
    assert select_voices(("espeak-ng:en-us+f3",))[0].name == "en-us+f3"
    with pytest.raises(ValueError, match="no voice"):
        select_voices((), ("en-gb-scotlnd",))
    with pytest.raises(ValueError, match="no voices left"):
        select_voices(("slt",), ("slt",))
    with pytest.raises(ValueError, match="unknown voice"):
        find_voice("espeak-ng:klingon")
    assert len({v.id for v in VOICES}) == len(VOICES)


def test_recipe_splits_by_voice_and_by_text(tmp_path):
    raw = tomllib.loads(RECIPE.read_text(encoding="utf-8"))
    for source in raw["text"]["sources"]:
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / source).write_text("", encoding="utf-8")
    recipe = parse_synth_recipe(raw, tmp_path)
    assert set(recipe.splits) == {"train", "dev", "test"}
    voice_sets = {name: {v.id for v in select_voices(c.voices, c.hold_out)}
                  for name, c in recipe.splits.items()}
    assert not voice_sets["test"] & (voice_sets["train"] | voice_sets["dev"])
    assert {v.split("-")[0].split(":")[0] for v in voice_sets["test"]} == {
        "espeak", "flite", "festival"}
    assert all(config.split == name for name, config in recipe.splits.items())
    assert recipe.exclude_ids == ("LJ001-",)
    with pytest.raises(ValueError, match="unknown key"):
        parse_synth_recipe({**raw, "splits": {"train": {"n_utt": 3}}}, tmp_path)
    with pytest.raises(FileNotFoundError, match="text.sources"):
        parse_synth_recipe(raw, tmp_path / "elsewhere")


def test_plans_are_reproducible_and_respect_pitch_control():
    text = TextUtterance("d", "Hello there.", 2)
    config = SynthConfig(noise_probability=0.5, seed=9)
    plans = [plan_utterance(i, text, VOICES, config) for i in range(200)]
    assert plans == [plan_utterance(i, text, VOICES, config) for i in range(200)]
    assert all(p.pitch == 1.0 for p in plans if not p.voice.pitch_control)
    assert all(0.85 <= p.rate <= 1.15 and 0.3 <= p.peak <= 0.9 for p in plans)
    noisy = [p for p in plans if p.noise]
    assert 60 < len(noisy) < 140 and all(10 <= p.snr_db <= 30 for p in noisy)
    assert len({p.voice.id for p in plans}) == len(VOICES)


def test_engine_command_lines():
    espeak = voices_module._espeak_command(find_voice("espeak-ng:en-us+f3"), 1.2, 1.0,
                                           "t.txt", "o.wav")
    assert espeak[espeak.index("-s") + 1] == "210" and espeak[espeak.index("-p") + 1] == "50"
    flite = voices_module._flite_command(find_voice("flite:slt"), 0.8, 1.1, "t.txt", "o.wav")
    assert "duration_stretch=1.2500" in flite and "int_f0_target_mean=191.4" in flite
    rms = voices_module._flite_command(find_voice("flite:rms"), 1.0, 1.1, "t.txt", "o.wav")
    assert not any("int_f0" in part for part in rms)
    hts = voices_module._festival_command(find_voice("festival:cmu_us_slt_arctic_hts"), 1.25,
                                          1.0, "t.txt", "o.wav")
    assert any('"-r" 1.2500' in part for part in hts)
    diphone = voices_module._festival_command(find_voice("festival:kal_diphone"), 1.0, 0.9,
                                              "t.txt", "o.wav")
    assert any("target_f0_mean 94.5" in part for part in diphone)


# ----------------------------------------------------------------------------- engines

def _need(voice_id: str) -> Voice:
    voice = find_voice(voice_id)
    if not voice_available(voice):
        pytest.skip(f"{voice_id} is not installed (scripts/system-deps.sh)")
    return voice


def _longest_pause(samples: np.ndarray) -> float:
    from punctum.audio.glue import silent_runs

    trimmed = samples[np.flatnonzero(np.abs(samples) > 0.01).min():
                      np.flatnonzero(np.abs(samples) > 0.01).max()]
    runs = silent_runs(trimmed, 0.01)
    return float((runs[:, 1] - runs[:, 0]).max()) / 16000 if len(runs) else 0.0


@pytest.mark.slow
@pytest.mark.parametrize("voice_id", ["espeak-ng:en-us+f3", "flite:kal16",
                                      "festival:cmu_us_slt_arctic_hts"])
def test_each_engine_speaks_and_honours_the_rate(voice_id):
    voice = _need(voice_id)
    slow = voices_module.synthesize(voice, "We need the old boat.", rate=0.8)
    fast = voices_module.synthesize(voice, "We need the old boat.", rate=1.25)
    assert slow.dtype == np.float32 and 0.5 < len(slow) / 16000 < 5
    assert len(fast) < 0.85 * len(slow)
    assert np.abs(slow).max() > 0.05


@pytest.mark.slow
def test_espeak_pauses_longer_after_a_period_than_after_a_comma():
    voice = _need("espeak-ng:en-us+m3")
    comma = voices_module.synthesize(voice, "We need the boat, and they see it")
    period = voices_module.synthesize(voice, "We need the boat. And they see it")
    assert _longest_pause(period) > _longest_pause(comma) + 0.1


def _espeak_config(**changes) -> SynthConfig:
    return SynthConfig(voices=("en-us", "en"), noise_probability=0.5, workers=2, seed=5,
                       **changes)


def _build(texts, folder, config):
    report = build_corpus(texts, folder, config)
    manifest = (folder / "manifest.jsonl").read_text(encoding="utf-8")
    audio = {p.name: p.read_bytes() for p in sorted((folder / "audio").iterdir())}
    return report, manifest, audio


@pytest.mark.slow
def test_build_corpus_is_reproducible_and_resumable(tmp_path):
    _need("espeak-ng:en-us+f3")
    soundfile = pytest.importorskip("soundfile")
    texts = [TextUtterance("d", t, len(t.split())) for t in
             ("Hello, how are you?", "We see a boat.", "Well, that is fine.", "Yes! It is.")]
    config = _espeak_config()
    report, manifest, audio = _build(texts, tmp_path / "a", config)
    assert report.n_utterances == 4 and report.n_resumed == 0 and len(audio) == 4
    records = [json.loads(line) for line in manifest.splitlines()]
    assert [r["id"] for r in records] == ["0000000", "0000001", "0000002", "0000003"]
    assert [r["text"] for r in records] == [t.text for t in texts]
    assert records[0]["unpunctuated"] == "hello how are you"
    assert all(r["speaker"].startswith("espeak-ng:en") for r in records)
    info = soundfile.info(str(tmp_path / "a" / records[0]["audio_filepath"]))
    assert info.samplerate == 16000 and info.channels == 1
    assert info.duration == pytest.approx(records[0]["duration"], abs=1e-3)

    assert _build(texts, tmp_path / "b", config)[1:] == (manifest, audio)  # same seed

    folder = tmp_path / "a"  # interrupt: one file lost, a torn manifest line
    (folder / "audio" / "0000002.flac").unlink()
    lines = manifest.splitlines()
    (folder / "manifest.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:20],
                                           encoding="utf-8")
    resumed = _build(texts, folder, config)
    assert resumed[0].n_resumed == 2 and resumed[1:] == (manifest, audio)
    with pytest.raises(ValueError, match="other settings.*seed"):
        build_corpus(texts, folder, dataclasses.replace(config, seed=6))


@pytest.mark.slow
def test_cli_synth_builds_a_corpus_with_held_out_voices(tmp_path, capsys):
    _need("espeak-ng:en-us+f3")
    source = tmp_path / "talk.txt"
    source.write_text(DOCUMENT + "\nHere is a second line. It is short, but fine.\n",
                      encoding="utf-8")
    out = tmp_path / "corpus"
    code = main(["synth", str(source), "--out", str(out), "-n", "3", "--voices", "espeak-ng",
                 "--hold-out", "en-us", "--workers", "2", "--no-progress", "--seed", "1"])
    captured = capsys.readouterr()
    assert code == 0 and "3 utterances (0 resumed)" in captured.out
    speakers = [json.loads(line)["speaker"]
                for line in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(speakers) == 3 and not any(s.startswith("espeak-ng:en-us") for s in speakers)
    code = main(["synth", str(source), "--out", str(out), "-n", "3", "--voices", "espeak-ng",
                 "--hold-out", "en-us", "--workers", "2", "--no-progress", "--seed", "2"])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1 and "other settings" in error
    shutil.rmtree(out)
    assert main(["synth", "--list-voices"]) == 0
    assert "flite:slt" in capsys.readouterr().out
    assert main(["synth", str(source), "--out", str(out), "--hold-out", "nobody"]) == 2
    assert "no voice, voice name or family matches 'nobody'" in capsys.readouterr().err


@pytest.mark.slow
def test_recipe_build_keeps_text_and_voices_apart(tmp_path):
    _need("espeak-ng:en-us+f3")
    sentences = [f"Sentence number {i} is here, and it is fine." for i in range(60)]
    (tmp_path / "texts.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    raw = {"text": {"sources": ["texts.txt"]},
           "synth": {"split_fractions": [0.5, 0.25, 0.25], "workers": 2,
                     "noise_probability": 0.0},
           "splits": {"train": {"n_utterances": 3, "voices": ["en-us"]},
                      "test": {"n_utterances": 3, "voices": ["en"], "seed": 1}}}
    recipe = parse_synth_recipe(raw, tmp_path)
    reports = build_from_recipe(recipe, tmp_path / "out", only=("train", "test"))
    assert [r.n_utterances for r in reports] == [3, 3]
    manifests = {name: [json.loads(line) for line in (tmp_path / "out" / name /
                                                      "manifest.jsonl").open()]
                 for name in ("train", "test")}
    assert not {r["text"] for r in manifests["train"]} & {r["text"] for r in manifests["test"]}
    assert all(r["voice_family"] == "en-us" for r in manifests["train"])
    assert all(r["voice_family"] == "en" for r in manifests["test"])
    with pytest.raises(ValueError, match="--only"):
        build_from_recipe(recipe, tmp_path / "x", {"split": "test"})
    with pytest.raises(ValueError, match="no split 'dev'"):
        build_from_recipe(recipe, tmp_path / "x", only=("dev",))


def test_synth_resumes_only_its_own_corpus(tmp_path):
    from punctum.audio.synth import _check_settings

    settings = {"config": {"seed": 1}}
    foreign = tmp_path / "glued"
    foreign.mkdir()
    (foreign / "manifest.jsonl").write_text('{"text": "Hi."}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="synth did not write"):
        _check_settings(foreign, settings)
    for content in ("[1]", "garbage"):
        corrupt = tmp_path / f"corrupt{len(content)}"
        corrupt.mkdir()
        (corrupt / "synth.json").write_text(content, encoding="utf-8")
        with pytest.raises(ValueError, match="synth.json: "):
            _check_settings(corrupt, settings)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    _check_settings(fresh, settings)
    _check_settings(fresh, settings)  # the same settings resume
    with pytest.raises(ValueError, match="seed differ"):
        _check_settings(fresh, {"config": {"seed": 2}})



def test_sentences_the_voices_cannot_say_are_left_out():
    from punctum.audio.synth import split_utterances

    texts = [u.text for u in split_utterances(
        "x", "😀 😀 😀 was sent today. Hello there my friend. 你好 你好 你好. Café au lait for "
        "three.", SynthConfig(max_sentences=1))]
    assert texts == ["Hello there my friend.", "Café au lait for three."]


def test_symbols_the_voices_read_keep_their_sentences():
    from punctum.audio.synth import split_utterances

    texts = ["Tom & Jerry met at noon.", "Prices rose 5 % this year.", "It is ½ of it.",
             "Chapter Ⅻ begins here.", "A ★ shines bright tonight."]
    unsaid = [0]
    kept = [u.text for t in texts
            for u in split_utterances("x", t, SynthConfig(min_words=2), unsaid)]
    assert kept == texts[:4] and unsaid == [1]
