"""Acoustic model export and `punctum transcribe`: ONNX parity, chunk stitching, bad audio."""

import json
import random
import tomllib
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
soundfile = pytest.importorskip("soundfile")
from test_speech_train import RATE, RECIPE, tone_utterance, write_manifest  # noqa: E402

from punctum.artifact import read_artifact  # noqa: E402
from punctum.cli import main  # noqa: E402
from punctum.ctc_vocab import CtcVocabulary  # noqa: E402
from punctum.decoding import greedy  # noqa: E402
from punctum.transcribe import Transcriber, _RawWord, dumps  # noqa: E402


@pytest.fixture(scope="module")
def acoustic(tmp_path_factory):
    """A tiny tone CTC model trained for a few seconds and exported (fp32)."""
    from punctum.train.export_ctc import CtcExportOptions, export_ctc_artifact
    from punctum.train.recipe import parse_recipe
    from punctum.train.trainer import train

    root = tmp_path_factory.mktemp("tones")
    write_manifest(root / "train", 40, seed=0)
    write_manifest(root / "dev", 6, seed=1)
    raw = tomllib.loads(RECIPE)
    raw["train"].update(steps=60, eval_every=30, checkpoint_every=30)
    run = root / "run"
    train(parse_recipe(raw, root, name="tones"), run, progress=False)
    folder = root / "model"
    export_ctc_artifact(run / "best.pt", folder,
                        CtcExportOptions(int8=False, name="tones", chunk_seconds=6.0,
                                         overlap_seconds=2.0, min_agreement=0.8))
    return folder, run, root


def test_export_records_features_and_parity(acoustic):
    folder, _, _ = acoustic
    meta = read_artifact(folder).meta
    assert meta["kind"] == "ctc_encoder" and meta["features"]["n_mels"] == 40
    assert meta["frame_shift"] == pytest.approx(0.04)
    assert meta["parity"]["greedy_agreement"] >= 0.8
    assert meta["parity"]["features"] == "dev" and meta["parity"]["utterances"] == 6
    assert meta["parameters"] > 1000
    assert meta["tokenizer"]["marks"] == [",", ".", "?", "!"]


def test_onnx_transcript_equals_torch_greedy(acoustic):
    from punctum.audio.features import FeatureConfig, log_mel, normalize
    from punctum.audio.io import load_audio
    from punctum.train.export import load_model_from_checkpoint

    folder, run, root = acoustic
    model, _ = load_model_from_checkpoint(run / "best.pt")
    vocab = CtcVocabulary.load(run / "tokenizer.json")
    transcriber = Transcriber(read_artifact(folder))
    for name in ("u000.flac", "u001.flac", "u002.flac"):
        audio = root / "dev" / name
        feats = normalize(log_mel(load_audio(audio), FeatureConfig(n_mels=40)))
        with torch.no_grad():
            log_probs, _, lengths = model(torch.from_numpy(feats[None]),
                                          torch.tensor([len(feats)]))
        expected = vocab.decode(greedy(log_probs[0, :int(lengths[0])].numpy()).ids)
        result = transcriber.transcribe(audio)
        assert [w.lower() for w in result.text.split()] == expected.split()
        assert not result.text or result.text[0].isupper()  # sentence starts are capitalised
        assert all(a.start <= b.start for a, b in zip(result.words, result.words[1:]))


def long_file(path, seconds):
    rng = random.Random(7)
    pieces = []
    while sum(len(p) for p in pieces) < seconds * RATE:
        pieces.append(tone_utterance(rng)[1])
    soundfile.write(path, np.concatenate(pieces)[:int(seconds * RATE)], RATE)
    return path


def test_chunks_keep_every_word_once(acoustic, tmp_path, monkeypatch):
    """A fake model emits one word per whole second of absolute time: the stitched result
    must hold each second's word exactly once, in order, whatever the chunking."""
    folder, _, _ = acoustic
    audio = long_file(tmp_path / "long.flac", 23.5)

    def one_word_per_second(self, samples, offset):
        # neighbouring chunks time the same word 80 ms apart, as real models may; with 6 s
        # chunks overlapping by 2 s the cuts fall at 5, 9, 13 ... s, between the two timings
        # of a word (a rule comparing start times with the cut would drop it)
        jitter = 0.04 if int(offset // 4) % 2 == 0 else -0.04
        end = offset + len(samples) / RATE
        seconds = range(int(np.ceil(offset)), int(np.ceil(end)))
        return [_RawWord(f"w{s}", "", s + jitter, s + 0.3 + jitter) for s in seconds
                if offset <= s + jitter and s + 0.3 + jitter <= end]

    monkeypatch.setattr(Transcriber, "chunk_words", one_word_per_second)
    transcriber = Transcriber(read_artifact(folder))
    words = [w.word for w in transcriber.raw_words(audio)]
    assert words == [f"w{s}" for s in range(24)]  # w23 ends at 23.3 s < 23.5 s
    transcriber.chunk, transcriber.overlap = 1000.0, 0.0  # one chunk: the same words
    assert [w.word for w in transcriber.raw_words(audio)] == words


def test_chunked_equals_unchunked_on_short_audio(acoustic):
    folder, _, root = acoustic
    chunked = Transcriber(read_artifact(folder))
    whole = Transcriber(read_artifact(folder))
    whole.chunk, whole.overlap = 1000.0, 0.0
    audio = root / "dev" / "u003.flac"
    assert chunked.transcribe(audio) == whole.transcribe(audio)


def test_silence_short_and_bad_audio(acoustic, tmp_path):
    folder, _, _ = acoustic
    transcriber = Transcriber(read_artifact(folder))
    soundfile.write(tmp_path / "silence.wav", np.zeros(RATE * 2, dtype=np.float32), RATE)
    soundfile.write(tmp_path / "blip.wav", np.zeros(40, dtype=np.float32), RATE)
    assert transcriber.transcribe(tmp_path / "blip.wav").text == ""
    assert isinstance(transcriber.transcribe(tmp_path / "silence.wav").text, str)
    (tmp_path / "bad.flac").write_bytes(b"fLaC not really")
    with pytest.raises(ValueError, match="bad.flac: cannot decode audio"):
        transcriber.transcribe(tmp_path / "bad.flac")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match="unsupported audio file type"):
        transcriber.transcribe(tmp_path / "notes.txt")


def test_cli_transcribe_formats_and_errors(acoustic, tmp_path, capsys):
    folder, _, root = acoustic
    audio = str(root / "dev" / "u004.flac")
    assert main(["transcribe", audio, "-m", str(folder), "--to", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert set(record) == {"path", "text", "words"}
    assert main(["transcribe", audio, "-m", str(folder), "--to", "srt"]) == 0
    srt = capsys.readouterr().out
    assert srt == "" or "-->" in srt
    missing = str(tmp_path / "missing.wav")
    assert main(["transcribe", audio, missing, "-m", str(folder), "-o",
                 str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "missing.wav: no such audio file" in err and "Traceback" not in err
    assert (tmp_path / "out" / "u004.txt").exists()
    assert main(["transcribe", audio, "-m", str(tmp_path / "nope")]) == 2
    assert main(["transcribe", missing, "-m", str(folder)]) == 2  # one file: a usage error
    copy = tmp_path / "victim.flac"
    copy.write_bytes(Path(audio).read_bytes())
    assert main(["transcribe", str(copy), "-m", str(folder), "-o", str(copy)]) == 2
    assert "is an input" in capsys.readouterr().err
    assert copy.read_bytes() == Path(audio).read_bytes()
    assert main(["transcribe", audio, "-m", str(folder), "--beam", "65"]) == 2
    assert "--beam must be from 0 (greedy) to 64" in capsys.readouterr().err
    for output in (tmp_path / "out", str(tmp_path / "new") + "/"):  # -o a folder, one input
        assert main(["transcribe", audio, "-m", str(folder), "-o", str(output)]) == 0
    assert (tmp_path / "new" / "u004.txt").is_file()
    assert main(["transcribe", audio, audio, "-m", str(folder), "--to", "vtt"]) == 2
    assert "several audio files make one vtt file each: give -o FOLDER" in \
        capsys.readouterr().err  # not two WEBVTT files run together on stdout
    assert main(["transcribe", audio, "-m", "pocketsphinx", "--text-model", str(folder)]) == 2
    assert "an acoustic model" in capsys.readouterr().err


def test_cli_export_dispatches_on_checkpoint_kind(acoustic, tmp_path, capsys):
    _, run, _ = acoustic
    assert main(["export", str(run / "best.pt"), str(tmp_path / "m"), "--no-int8",
                 "--name", "t"]) == 0
    assert "acoustic model" in capsys.readouterr().out
    assert read_artifact(tmp_path / "m").meta["name"] == "t"
    # --min-agreement reaches the acoustic export too
    assert main(["export", str(run / "best.pt"), str(tmp_path / "m2"), "--min-agreement",
                 "1.5"]) == 2
    err = capsys.readouterr().err
    assert "--min-agreement must be in [0, 1], got 1.5" in err and "Traceback" not in err


def test_dumps_text_json_and_subtitles():
    from punctum.transcribe import TimedWord, Transcription

    result = Transcription("a.wav", "Hello there. How are you?", (
        TimedWord("Hello", 0.0, 0.4), TimedWord("there.", 0.5, 0.9),
        TimedWord("How", 1.5, 1.7), TimedWord("are", 1.7, 1.9), TimedWord("you?", 1.9, 2.3)))
    assert dumps(result, "text") == "Hello there. How are you?\n"
    assert json.loads(dumps(result, "json"))["words"][1] == {"word": "there.", "start": 0.5,
                                                             "end": 0.9}
    srt = dumps(result, "srt")
    assert "00:00:00,000 --> 00:00:02,300" in srt and "Hello there. How are you?" in srt


def test_parity_features_fall_back_to_random_frames(tmp_path):
    from punctum.train.export_ctc import parity_features

    feats, source = parity_features({"dev": str(tmp_path / "gone.jsonl")}, n_mels=40,
                                    n_utterances=3)
    assert source == "random" and len(feats) == 3 and all(f.shape[1] == 40 for f in feats)
    manifest = tmp_path / "dev.jsonl"  # found (relocated), but its audio is not
    manifest.write_text('{"audio_filepath": "/old/machine/a.wav", "duration": 1.0, '
                        '"text": "hi"}\n', encoding="utf-8")
    feats, source = parity_features({"dev": str(manifest), "features": {}}, n_mels=80,
                                    n_utterances=2)
    assert source == "random" and len(feats) == 2


def test_export_leaves_the_model_in_eval_mode_and_matches_it(tmp_path):
    """A wrapper module starts in training mode; the exporter restores it afterwards, which
    used to switch dropout back on in the model that the parity check then compared."""
    import numpy as np
    import onnxruntime
    import torch

    from punctum.models import build_model
    from punctum.train.export_ctc import export_ctc_onnx, greedy_agreement

    torch.manual_seed(0)
    model = build_model("ctc_encoder", {"vocab_size": 30, "n_mels": 40, "d_model": 32,
                                        "n_heads": 2, "n_layers": 2, "d_ff": 64,
                                        "subsample_channels": 8, "dropout": 0.5})
    path = tmp_path / "m.onnx"
    export_ctc_onnx(model, path, 40)
    assert not model.training
    x = np.random.default_rng(0).standard_normal((1, 90, 40)).astype(np.float32)
    lengths = np.asarray([90], dtype=np.int64)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"feats": x, "lengths": lengths})[0]
    with torch.no_grad():
        ref = model(torch.from_numpy(x), torch.from_numpy(lengths))[0].numpy()
    assert np.abs(ref - got).max() < 1e-4
    model.train()
    assert greedy_agreement(model, path, [x[0]]) == 1.0 and not model.training


def test_chunk_joins_neither_repeat_a_word_nor_go_back_in_time():
    from punctum.transcribe import _join, _RawWord

    kept = [_RawWord("so", "", 32.0, 32.5), _RawWord("with", "", 33.2, 33.24)]
    _join(kept, [_RawWord("within", "", 33.2, 34.36), _RawWord("it", "", 34.4, 34.6)])
    assert [w.word for w in kept] == ["so", "within", "it"]  # heard whole in the later chunk
    kept = [_RawWord("the", "", 10.0, 10.2)]
    _join(kept, [_RawWord("cat", "", 10.15, 10.5)])  # a little timing jitter: both words
    assert [(w.word, w.start) for w in kept] == [("the", 10.0), ("cat", 10.2)]
    starts = [w.start for w in kept]
    assert starts == sorted(starts)


@pytest.mark.parametrize("change, message", [
    (lambda m: m["windows"].update(overlap_seconds=6.0), "overlap_seconds must be in"),
    (lambda m: m.update(frame_shift=-1), "frame_shift must be a positive number"),
    (lambda m: m.pop("features"), "features must be an object"),
    (lambda m: m["features"].update(colour=1), "features must be an object"),
    (lambda m: m["features"].update(n_mels=m["features"]["n_mels"] + 8),
     "features per frame"),
])
def test_a_broken_acoustic_model_is_named(acoustic, tmp_path, change, message):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(acoustic[0], folder)
    meta = json.loads((folder / "punctum.json").read_text())
    change(meta)
    (folder / "punctum.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=message):
        Transcriber.load(folder)


def test_threads_are_bounded_for_acoustic_models(acoustic):
    with pytest.raises(ValueError, match="threads must be a whole number"):
        Transcriber.load(acoustic[0], threads=999_999)


def test_several_inputs_into_an_existing_file_is_one_line(acoustic, tmp_path, capsys):
    target = tmp_path / "out.txt"
    target.write_text("keep me")
    assert main(["transcribe", "a.wav", "b.wav", "-m", str(acoustic[0]), "-o",
                 str(target)]) == 2
    assert "is a file; several inputs need a folder" in capsys.readouterr().err
    assert target.read_text() == "keep me"


def test_pocketsphinx_engine_transcribes_speech(tmp_path, capsys):
    import shutil
    import subprocess

    pytest.importorskip("pocketsphinx")
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng to make speech")
    wav = tmp_path / "speech.wav"
    subprocess.run(["espeak-ng", "-s", "140", "-w", str(wav),
                    "the weather is nice today. we are going to the park"], check=True)
    assert main(["transcribe", str(wav), "-m", "pocketsphinx", "--to", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    words = record["words"]
    assert len(words) >= 5 and record["text"][0].isupper() and record["text"][-1] in ".?!"
    starts = [w["start"] for w in words]
    assert starts == sorted(starts) and all(w["end"] > w["start"] for w in words)
    recognised = {w["word"].strip(".,?!").lower() for w in words}
    # espeak-ng's robotic voice is hard for pocketsphinx: some words suffice
    assert len(recognised & {"the", "weather", "nice", "today", "we", "are", "going",
                             "park"}) >= 3


def test_pocketsphinx_scales_loud_float_audio_down_not_clipping_it(tmp_path, monkeypatch):
    pytest.importorskip("pocketsphinx")
    from punctum.sphinx import SphinxTranscriber

    heard = []

    class Decoder:  # records what pocketsphinx would hear
        def start_utt(self):
            pass

        def process_raw(self, pcm, full_utt):
            heard.append(np.frombuffer(pcm, "<i2"))

        def end_utt(self):
            pass

        def seg(self):
            return []

    transcriber = SphinxTranscriber.load()
    monkeypatch.setattr(transcriber, "decoder", Decoder())
    loud = np.sin(np.linspace(0, 400, RATE)).astype(np.float32) * 4.0
    transcriber._piece_words(loud, 0.0)
    assert np.abs(heard[0]).max() == 32767 and (np.abs(heard[0]) == 32767).sum() < 10


def test_pocketsphinx_engine_on_silence_is_empty(tmp_path):
    pytest.importorskip("pocketsphinx")
    from punctum.audio.io import write_audio
    from punctum.sphinx import SphinxTranscriber

    path = tmp_path / "quiet.flac"
    write_audio(path, np.zeros(RATE * 3, dtype=np.float32))
    assert SphinxTranscriber.load().transcribe(path).text == ""


def test_pocketsphinx_is_the_engine_beside_a_folder_of_that_name(tmp_path, monkeypatch,
                                                                  capsys):
    pytest.importorskip("pocketsphinx")
    from punctum.audio.io import write_audio
    from punctum.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pocketsphinx").mkdir()  # a folder of earlier outputs, no punctum.json
    for name in ("a.flac", "b.flac"):
        write_audio(tmp_path / name, np.zeros(RATE, dtype=np.float32))
    assert main(["transcribe", "a.flac", "b.flac", "-m", "pocketsphinx", "-o", "-"]) == 0
    assert capsys.readouterr().out == "\n\n"  # both on stdout (silence: empty lines)
    assert not (tmp_path / "-").exists()


def test_sphinx_pieces_cover_the_audio_once_and_cut_at_pauses():
    from punctum.sphinx import SAMPLE_RATE, utterances

    rng = np.random.default_rng(0)
    audio = rng.uniform(-0.5, 0.5, SAMPLE_RATE * 75).astype(np.float32)
    audio[SAMPLE_RATE * 25:SAMPLE_RATE * 25 + 800] = 0  # a pause 25 s in
    blocks = (audio[i:i + SAMPLE_RATE * 7] for i in range(0, len(audio), SAMPLE_RATE * 7))
    pieces = list(utterances(blocks, longest=30.0, search=10.0))
    assert np.array_equal(np.concatenate([p for _, p in pieces]), audio)
    starts = [round(start * SAMPLE_RATE) for start, _ in pieces]
    assert starts == list(np.cumsum([0] + [len(p) for _, p in pieces[:-1]]))
    assert all(len(p) <= SAMPLE_RATE * 30 for _, p in pieces)
    assert SAMPLE_RATE * 25 < len(pieces[0][1]) <= SAMPLE_RATE * 25 + 800  # in the pause


def test_pocketsphinx_engine_on_a_very_short_file_is_empty(tmp_path):
    pytest.importorskip("pocketsphinx")
    from punctum.audio.io import write_audio
    from punctum.sphinx import SphinxTranscriber

    path = tmp_path / "blip.wav"
    write_audio(path, np.random.default_rng(0).normal(0, 0.1, 800).astype(np.float32))
    assert SphinxTranscriber.load().transcribe(path).text == ""  # the decoder gives None


def test_pocketsphinx_engine_warns_about_narrowband_audio(tmp_path, caplog):
    pytest.importorskip("pocketsphinx")
    import soundfile

    from punctum.sphinx import SphinxTranscriber

    path = tmp_path / "phone.wav"
    soundfile.write(path, np.zeros(8000, dtype=np.float32), 8000)
    SphinxTranscriber.load().transcribe(path)
    assert "8000 Hz audio" in caplog.text
