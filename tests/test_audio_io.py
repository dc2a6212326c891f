"""Audio I/O: formats, mono, resampling keeps duration, one-line errors on bad files."""

import numpy as np
import pytest

pytest.importorskip("soundfile")
pytest.importorskip("soxr")

import soundfile  # noqa: E402

from punctum.audio.io import (  # noqa: E402
    SAMPLE_RATE,
    iter_audio_chunks,
    load_audio,
    read_audio,
    resample,
    rms,
    to_mono,
    write_audio,
)


def _tone(seconds: float, rate: int, freq: float = 440.0, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(round(seconds * rate))) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000])
@pytest.mark.parametrize("seconds", [0.013, 1.0, 2.5])
def test_resample_keeps_duration(rate, seconds):
    signal = _tone(seconds, rate)
    out = resample(signal, rate, SAMPLE_RATE)
    assert out.dtype == np.float32
    assert abs(len(out) / SAMPLE_RATE - len(signal) / rate) <= 1 / SAMPLE_RATE


def test_resample_keeps_a_tone():
    out = resample(_tone(1.0, 44100, freq=1000.0), 44100, SAMPLE_RATE)
    spectrum = np.abs(np.fft.rfft(out[2000:-2000]))
    peak_hz = np.argmax(spectrum) * SAMPLE_RATE / len(out[2000:-2000])
    assert abs(peak_hz - 1000.0) < 2.0
    assert abs(rms(out[2000:-2000]) - 0.5 / np.sqrt(2)) < 0.01


def test_resample_same_rate_and_empty():
    signal = _tone(0.1, SAMPLE_RATE)
    assert np.array_equal(resample(signal, SAMPLE_RATE, SAMPLE_RATE), signal)
    assert resample(np.zeros(0, np.float32), 44100, SAMPLE_RATE).size == 0
    with pytest.raises(ValueError, match="positive"):
        resample(signal, 0, SAMPLE_RATE)


def test_to_mono_averages_channels():
    stereo = np.stack([np.ones(4), -np.ones(4) * 0.5], axis=1)
    assert np.allclose(to_mono(stereo), 0.25)


@pytest.mark.parametrize("suffix,fmt,subtype", [(".wav", "WAV", "PCM_16"),
                                                (".flac", "FLAC", "PCM_16"),
                                                (".ogg", "OGG", "VORBIS"),
                                                (".mp3", "MP3", "MPEG_LAYER_III")])
def test_reads_formats_as_16k_mono(tmp_path, suffix, fmt, subtype):
    if fmt not in soundfile.available_formats():
        pytest.skip(f"libsndfile without {fmt}")
    path = tmp_path / f"clip{suffix}"
    stereo = np.stack([_tone(1.0, 22050), _tone(1.0, 22050)], axis=1)
    soundfile.write(str(path), stereo, 22050, format=fmt, subtype=subtype)
    samples = load_audio(path)
    assert samples.ndim == 1 and samples.dtype == np.float32
    assert abs(len(samples) / SAMPLE_RATE - 1.0) < 0.06  # mp3 adds encoder padding
    assert 0.2 < rms(samples) < 0.45


@pytest.mark.parametrize("chunked", [False, True])
def test_a_damaged_mp3_gives_one_warning_not_decoder_lines(tmp_path, capfd, caplog, chunked):
    if "MP3" not in soundfile.available_formats():
        pytest.skip("libsndfile without MP3")
    path = tmp_path / "damaged.mp3"
    soundfile.write(str(path), _tone(2.0, SAMPLE_RATE), SAMPLE_RATE, format="MP3")
    data = path.read_bytes()
    path.write_bytes(data[:3000] + b"\x00garbage" * 50 + data[3000:])
    capfd.readouterr()
    with caplog.at_level("WARNING", logger="punctum.audio.io"):
        if chunked:
            samples = np.concatenate([c for _, c in iter_audio_chunks(path, 0.5, 0.1)])
        else:
            samples = load_audio(path)
    assert samples.size > SAMPLE_RATE  # what could be decoded is kept
    err = capfd.readouterr().err
    assert "Note:" not in err and "resync" not in err
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "damaged.mp3: the MP3 decoder reported" in warnings[0]


def test_mp3_decoding_on_worker_threads_leaves_stderr_alone(tmp_path):
    import concurrent.futures
    import os

    if "MP3" not in soundfile.available_formats():
        pytest.skip("libsndfile without MP3")
    paths = []
    for k in range(6):
        paths.append(tmp_path / f"clip{k}.mp3")
        soundfile.write(str(paths[-1]), _tone(0.5, SAMPLE_RATE), SAMPLE_RATE, format="MP3")
    before = os.fstat(2)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert all(s.size for s in pool.map(load_audio, paths * 3))
    after = os.fstat(2)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


def test_write_then_read_flac(tmp_path):
    signal = _tone(0.5, SAMPLE_RATE)
    write_audio(tmp_path / "a.flac", signal)
    back, rate = read_audio(tmp_path / "a.flac")
    assert rate == SAMPLE_RATE and np.abs(back - signal).max() < 1e-4
    with pytest.raises(ValueError, match="can write"):
        write_audio(tmp_path / "a.mp4", signal)


def _one_line_error(path, error=ValueError):
    with pytest.raises(error) as info:
        load_audio(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


def test_corrupt_empty_and_unsupported_files(tmp_path):
    corrupt = tmp_path / "corrupt.wav"
    corrupt.write_bytes(np.random.default_rng(0).bytes(3000))
    assert "cannot decode audio" in _one_line_error(corrupt)
    empty = tmp_path / "empty.flac"
    empty.write_bytes(b"")
    assert "empty file" in _one_line_error(empty)
    header_only = tmp_path / "header.wav"
    soundfile.write(str(header_only), np.zeros(0, np.float32), SAMPLE_RATE)
    assert "no audio samples" in _one_line_error(header_only)
    with pytest.raises(ValueError, match="no audio samples"):  # read in chunks too
        list(iter_audio_chunks(header_only, 0.2, 0.05))
    slow = tmp_path / "slow.wav"  # a header that says 1 Hz: 0.1 s would be hours
    soundfile.write(str(slow), np.zeros(1600, np.float32), 1)
    assert "a sample rate of 1 Hz, below the 4,000 Hz" in _one_line_error(slow)
    with pytest.raises(ValueError, match="a sample rate of 1 Hz"):
        list(iter_audio_chunks(slow, 0.2, 0.05))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert "unsupported audio file type" in _one_line_error(text)
    assert "no such audio file" in _one_line_error(tmp_path / "missing.wav",
                                                   FileNotFoundError)


def test_nan_or_infinite_samples_are_an_error(tmp_path):
    samples = _tone(0.5, SAMPLE_RATE).astype(np.float32)
    samples[100] = np.nan
    path = tmp_path / "nan.wav"
    soundfile.write(str(path), samples, SAMPLE_RATE, subtype="FLOAT")
    assert "NaN or infinite samples" in _one_line_error(path)
    with pytest.raises(ValueError, match="NaN or infinite samples"):
        list(iter_audio_chunks(path, 0.2, 0.05))


def test_truncated_flac_is_an_error_or_shorter(tmp_path):
    path = tmp_path / "cut.flac"
    write_audio(path, _tone(2.0, SAMPLE_RATE))
    data = path.read_bytes()
    path.write_bytes(data[:60])  # header cut inside the metadata blocks
    _one_line_error(path)


def test_rms():
    assert rms(np.zeros(0)) == 0.0
    assert rms(np.full(10, -0.5)) == pytest.approx(0.5)


def test_write_audio_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "a.flac"
    write_audio(path, np.zeros(1600, dtype=np.float32))
    before = path.read_bytes()

    def refuse(*args, **kwargs):
        raise soundfile.LibsndfileError(0, "System error.")

    monkeypatch.setattr(soundfile, "write", refuse)
    with pytest.raises(ValueError, match="a.flac: cannot encode the audio"):
        write_audio(path, np.ones(1600, dtype=np.float32))
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]


def test_write_audio_over_a_folder_is_an_os_error(tmp_path):
    (tmp_path / "b.flac").mkdir()
    with pytest.raises(OSError):
        write_audio(tmp_path / "b.flac", np.zeros(160, dtype=np.float32))
    assert [p.name for p in tmp_path.iterdir()] == ["b.flac"]


def test_chunks_that_never_advance_are_refused(tmp_path):
    path = tmp_path / "c.wav"
    write_audio(path, np.zeros(SAMPLE_RATE, dtype=np.float32))
    with pytest.raises(ValueError, match="must be shorter than chunk_seconds"):
        next(iter_audio_chunks(path, 2.0, 2.0))


def test_a_wav_cut_short_is_read_with_a_warning(tmp_path, caplog):
    whole = tmp_path / "whole.wav"
    soundfile.write(str(whole), _tone(2.0, SAMPLE_RATE), SAMPLE_RATE, subtype="PCM_16")
    data = whole.read_bytes()
    cut = tmp_path / "cut.wav"
    cut.write_bytes(data[:len(data) // 2])
    with caplog.at_level("WARNING", logger="punctum.audio.io"):
        assert len(read_audio(whole)[0]) == 2 * SAMPLE_RATE
        assert not caplog.records
        samples, _ = read_audio(cut)
        assert 0.9 * SAMPLE_RATE < len(samples) < 1.1 * SAMPLE_RATE  # what is there
        assert len(list(iter_audio_chunks(cut, 30.0, 1.0))) == 1
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2 and "announces 2.0 s of audio, the file holds 1.0 s" in messages[0]
    at = data.index(b"data") + 4
    for placeholder in (b"\xff\xff\xff\xff", b"\x00\xf0\xff\x7f"):  # ffmpeg; SoX, espeak-ng
        streamed = tmp_path / "streamed.wav"  # written to a pipe: the size is unknown
        streamed.write_bytes(data[:at] + placeholder + data[at + 4:len(data) // 2])
        caplog.clear()
        with caplog.at_level("WARNING", logger="punctum.audio.io"):
            read_audio(streamed)
        assert not caplog.records


def test_chunks_read_one_after_another_resample_as_the_whole_file(tmp_path):
    path = tmp_path / "tone48k.wav"
    samples = _tone(2.5, 48_000, freq=300.0) + _tone(2.5, 48_000, freq=2_000.0, amplitude=0.2)
    soundfile.write(str(path), samples, 48_000, subtype="FLOAT")
    chunks = list(iter_audio_chunks(path, 1.0, 0.0, SAMPLE_RATE))
    joined = np.concatenate([c for _, c in chunks])
    np.testing.assert_allclose(joined, resample(samples, 48_000, SAMPLE_RATE), atol=1e-6)
    starts = np.cumsum([0] + [len(c) for _, c in chunks[:-1]]) / SAMPLE_RATE
    assert [s for s, _ in chunks] == pytest.approx(list(starts))  # no click at the seams


def test_a_wav_that_cannot_seek_is_read_in_chunks(tmp_path):
    path = tmp_path / "gsm.wav"  # GSM 6.10: libsndfile cannot seek in it
    soundfile.write(str(path), _tone(3.0, 8_000, amplitude=0.3), 8_000, subtype="GSM610")
    chunks = list(iter_audio_chunks(path, 1.0, 0.0, SAMPLE_RATE))
    assert sum(len(c) for _, c in chunks) == pytest.approx(3 * SAMPLE_RATE, abs=1000)  # frames
