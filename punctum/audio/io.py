"""Audio files in and out: decode, downmix to mono, resample to 16 kHz.

    from punctum.audio.io import load_audio
    samples = load_audio("clip.flac")          # (n_samples,) float32 in [-1, 1] at 16 kHz

Decoding uses soundfile (libsndfile: WAV, FLAC, OGG/Vorbis/Opus, MP3) and resampling soxr,
both from the ``audio`` extra. Unreadable, corrupt or empty files raise ValueError with one
line naming the file.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import struct
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
MIN_SAMPLE_RATE = 4_000  # below it no speech survives: a header that says so is damaged
EXTENSIONS = (".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3")


def _soundfile():
    try:
        import soundfile
    except ImportError as error:  # OSError too when libsndfile is missing
        raise ImportError(f"audio needs the audio extra: pip install 'punctum[audio]' "
                          f"({error})") from None
    return soundfile


class _DecoderNotes:
    """Collects what the MP3 decoder (mpg123) writes to file descriptor 2 about damaged
    frames ("Note: Illegal Audio-MPEG-Header ...", "Note: Trying to resync...") and reports
    it as one warning naming the file, instead of raw lines in the user's terminal."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[str] = []

    @contextlib.contextmanager
    def collect(self):
        """Run the block with file descriptor 2 sent to a temporary file (MP3 only, and only
        on the main thread: fd 2 is the whole process's, and swaps overlapping on worker
        threads could leave it on a temporary file; there the decoder's lines reach stderr
        as they are)."""
        if self.path.suffix.lower() != ".mp3" or \
                threading.current_thread() is not threading.main_thread():
            yield
            return
        with contextlib.suppress(AttributeError, ValueError, OSError):
            sys.stderr.flush()
        with tempfile.TemporaryFile() as sink:
            saved = os.dup(2)
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                sink.seek(0)
                text = sink.read().decode("utf-8", errors="replace")
                self.lines += [line.strip() for line in text.splitlines() if line.strip()]

    def report(self) -> None:
        """One warning when the decoder said anything (-v shows each line)."""
        if self.lines:
            logger.warning("%s: the MP3 decoder reported %d problem(s) with the file and "
                           "skipped what it could not decode (first: %s)", self.path,
                           len(self.lines), self.lines[0])
            for line in self.lines:
                logger.info("%s: %s", self.path, line)


def resample(samples: np.ndarray, orig_rate: int, target_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Resample a mono signal with soxr (high quality); the duration is kept.

    Args:
        samples: (n,) float signal.
        orig_rate, target_rate: sample rates in Hz.

    Returns:
        (round(n * target_rate / orig_rate),) float32.
    """
    if orig_rate <= 0 or target_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {orig_rate} and {target_rate}")
    samples = np.asarray(samples, dtype=np.float32)
    if orig_rate == target_rate or samples.size == 0:
        return samples
    try:
        import soxr
    except ImportError as error:
        raise ImportError(f"resampling needs the audio extra: pip install 'punctum[audio]' "
                          f"({error})") from None
    return soxr.resample(samples, orig_rate, target_rate, quality="HQ").astype(np.float32)


def to_mono(samples: np.ndarray) -> np.ndarray:
    """(n,) or (n, channels) float -> (n,) float32, channels averaged."""
    samples = np.asarray(samples, dtype=np.float32)
    return samples.mean(axis=1) if samples.ndim == 2 else samples


def read_audio(path: str | Path) -> tuple[np.ndarray, int]:
    """Decode a file as it is stored.

    Returns:
        ((n,) float32 mono samples in [-1, 1], the file's sample rate).

    Raises:
        FileNotFoundError: no such file.
        ValueError: unsupported extension, undecodable or empty file, NaN or infinite
            samples (one line).
    """
    path = Path(path)
    read_audio_header(path)
    soundfile = _soundfile()
    notes = _DecoderNotes(path)
    try:
        with notes.collect():
            samples, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, TypeError, EOFError) as error:
        raise ValueError(f"{path}: cannot decode audio ({_reason(error)})") from None
    notes.report()
    if samples.shape[0] == 0:
        raise ValueError(f"{path}: no audio samples (empty file)")
    warn_if_cut_short(path)
    _check_rate(int(rate), path)
    _check_finite(samples, path)
    return to_mono(samples), int(rate)


def _check_rate(rate: int, path: Path) -> None:
    """A sample rate no speech is recorded at (a damaged header: "1 Hz") is an error, not
    hours of audio made of a few thousand samples."""
    if rate < MIN_SAMPLE_RATE:
        raise ValueError(f"{path}: a sample rate of {rate:,} Hz, below the {MIN_SAMPLE_RATE:,} "
                         f"Hz of any speech recording (a damaged header?)")


def audio_seconds(path: str | Path) -> float | None:
    """How long a file's audio is by its header, None when it cannot be read (decoding
    then says why)."""
    info = _header(path)
    return info.frames / info.samplerate if info is not None and info.samplerate > 0 else None


def sample_rate_of(path: str | Path) -> int | None:
    """The sample rate a file's header gives, None when it cannot be read (decoding then
    says why)."""
    info = _header(path)
    return None if info is None else int(info.samplerate)


def _header(path: str | Path):
    """soundfile's info on a file, None when it cannot be read; the MP3 decoder's notes
    are kept out of the terminal."""
    path = Path(path)
    try:
        with _DecoderNotes(path).collect():
            return _soundfile().info(str(path))
    except Exception:  # noqa: BLE001 (unreadable: decoding reports it in one line)
        return None


def _reason(error: Exception) -> str:
    """libsndfile's reason in one line; its "File does not exist or is not a regular file"
    for a file that exists but holds no audio it knows, said so."""
    reason = " ".join((getattr(error, "error_string", "") or str(error)
                       or type(error).__name__).split())
    if reason.startswith("File does not exist or is not a regular file"):
        return "not audio in a format the decoder knows, or damaged past its header"
    return reason


def _check_finite(samples: np.ndarray, path: Path) -> None:
    """Float files can hold NaN or infinite samples, which no feature survives."""
    if not np.isfinite(samples).all():
        raise ValueError(f"{path}: the audio holds NaN or infinite samples")


def iter_audio_chunks(path: str | Path, chunk_seconds: float, overlap_seconds: float,
                      sample_rate: int = SAMPLE_RATE):
    """Overlapping chunks of a file, decoded and resampled one at a time (bounded memory).

    Yields:
        (start second, (n,) float32 mono samples at `sample_rate`) for chunks of
        chunk_seconds whose starts are chunk_seconds - overlap_seconds apart; the last chunk
        reaches the end of the file.

    Raises:
        FileNotFoundError, ValueError: as `read_audio`.
    """
    path = Path(path)
    read_audio_header(path)
    soundfile = _soundfile()
    notes = _DecoderNotes(path)
    try:
        with notes.collect():
            handle = soundfile.SoundFile(str(path))
        with handle:
            rate, total = handle.samplerate, handle.frames
            _check_rate(rate, path)
            warn_if_cut_short(path)
            size = int(round(chunk_seconds * rate))
            step = size - int(round(overlap_seconds * rate))
            if step <= 0:  # chunks that never advance would be read for ever
                raise ValueError(f"overlap_seconds ({overlap_seconds:g}) must be shorter "
                                 f"than chunk_seconds ({chunk_seconds:g})")
            # chunks read one after another (no overlap) are resampled as one stream: the
            # same samples as the whole file resampled, no click at each seam
            resampler = _stream_resampler(rate, sample_rate) if step == size else None
            start = position = emitted = 0
            while True:
                with notes.collect():
                    if position != start:  # (GSM and ADPCM WAVs cannot seek)
                        handle.seek(start)
                    block = handle.read(size, dtype="float32", always_2d=True)
                position = start + len(block)
                if not start and not len(block):
                    raise ValueError(f"{path}: no audio samples (empty file)")
                _check_finite(block, path)
                last = start + size >= total or not len(block)
                if resampler is None:
                    yield start / rate, resample(to_mono(block), rate, sample_rate)
                else:
                    out = resampler(to_mono(block), last)
                    yield emitted / sample_rate, out
                    emitted += len(out)
                if last:
                    break
                start += step
    except (soundfile.LibsndfileError, RuntimeError, TypeError, EOFError) as error:
        raise ValueError(f"{path}: cannot decode audio ({_reason(error)})") from None
    notes.report()


def warn_if_cut_short(path: Path) -> None:
    """Warn when a WAV file holds fewer bytes of audio than its header announces (a copy or
    a recording cut short): libsndfile reads what is there without a word, so the
    transcript would end early with no sign why. Streamed WAVs, whose header says 0 or a
    placeholder of 2 GB or more (`_UNKNOWN_SIZE`), are not warned about."""
    if path.suffix.lower() != ".wav":
        return
    found = _wav_data_chunk(path)
    if found is None:
        return
    announced, offset, byte_rate = found
    held = path.stat().st_size - offset
    if announced == 0 or announced >= _UNKNOWN_SIZE or held >= announced or byte_rate <= 0:
        return
    logger.warning("%s: cut short? the WAV header announces %.1f s of audio, the file holds "
                   "%.1f s; transcribing what is there", path, announced / byte_rate,
                   max(held, 0) / byte_rate)


# sizes that writers which cannot seek back leave in a WAV header (0xFFFFFFFF; SoX and
# espeak-ng --stdout 0x7FFFF000; arecord 0x7FFFFFFF): the length is unknown, not announced
_UNKNOWN_SIZE = 0x7FFF0000


def _wav_data_chunk(path: Path) -> tuple[int, int, int] | None:
    """(the data chunk's announced size in bytes, where its bytes start, the fmt chunk's
    bytes per second) of a RIFF WAVE file; None when the chunks cannot be walked."""
    with open(path, "rb") as handle:
        head = handle.read(65536)
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    byte_rate, position = 0, 12
    while position + 8 <= len(head):
        chunk_id, size = head[position:position + 4], struct.unpack_from("<I", head,
                                                                          position + 4)[0]
        if chunk_id == b"fmt " and position + 16 <= len(head):
            byte_rate = struct.unpack_from("<I", head, position + 16)[0]
        if chunk_id == b"data":
            return size, position + 8, byte_rate
        position += 8 + size + (size & 1)  # chunks are padded to an even size
    return None


def _stream_resampler(orig_rate: int, target_rate: int):
    """A function (block, last) -> the block resampled as part of one continuous signal
    (soxr's stream: the output of all blocks equals resampling them joined; the first is
    shorter by the filter's delay, which later ones make up)."""
    if orig_rate == target_rate:
        return lambda block, last: np.asarray(block, dtype=np.float32)
    import soxr

    stream = soxr.ResampleStream(orig_rate, target_rate, 1, dtype="float32", quality="HQ")
    return lambda block, last: stream.resample_chunk(
        np.asarray(block, dtype=np.float32), last=last).astype(np.float32)


def read_audio_header(path: Path) -> None:
    """The checks of `read_audio` that need no decoding: exists, known type, not empty."""
    if path.is_dir():
        raise ValueError(f"{path}: is a folder, expected an audio file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such audio file")
    if path.suffix.lower() not in EXTENSIONS:
        raise ValueError(f"{path}: unsupported audio file type {path.suffix or '(none)'!r}; "
                         f"expected one of {' '.join(EXTENSIONS)}")
    if path.stat().st_size == 0:
        raise ValueError(f"{path}: empty file (0 bytes), expected audio")


def load_audio(path: str | Path, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Decode, downmix and resample a file.

    Returns:
        (n,) float32 mono samples at `sample_rate` (default 16 kHz).
    """
    samples, rate = read_audio(path)
    return resample(samples, rate, sample_rate)


def write_audio(path: str | Path, samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> None:
    """Write a mono signal as 16-bit audio (FLAC, WAV or OGG from the extension).

    Samples outside [-1, 1] are clipped. The file is encoded in memory and written
    atomically (`fileio.atomic_writer`): a failure (a full disk) leaves no partial file
    under its name, and an earlier file there stays whole.

    Raises:
        ValueError: another extension, or samples the encoder refuses.
        OSError: the file cannot be written.
    """
    from punctum.fileio import atomic_writer

    path = Path(path)
    samples = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    fmt = {".flac": "FLAC", ".wav": "WAV", ".ogg": "OGG"}.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path}: can write .flac, .wav or .ogg, not {path.suffix!r}")
    subtype = "VORBIS" if fmt == "OGG" else "PCM_16"
    encoded = io.BytesIO()
    try:
        _soundfile().write(encoded, samples, sample_rate, format=fmt, subtype=subtype)
    except RuntimeError as error:  # soundfile.LibsndfileError
        raise ValueError(f"{path}: cannot encode the audio ({error})") from None
    with atomic_writer(path, binary=True, compress=False) as handle:
        handle.write(encoded.getvalue())


def duration(samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> float:
    """Seconds of a (n,) signal."""
    return len(samples) / sample_rate


def rms(samples: np.ndarray) -> float:
    """Root-mean-square amplitude of a (n,) signal (0.0 when empty)."""
    samples = np.asarray(samples, dtype=np.float64)
    return float(np.sqrt(np.mean(samples * samples))) if samples.size else 0.0
