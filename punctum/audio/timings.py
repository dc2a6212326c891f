"""Speech with word timings from espeak-ng's synthesis events (libespeak-ng via ctypes).

    speech = speak_with_timings("Well, I went home. Did you?", voice="en-us+f3")
    speech.starts, speech.ends      # (n_words,) seconds, NaN for a word spoken with its
    speech.pauses_after             # neighbour; silence after each word, NaN after the last

espeak-ng reports a WORD event with the character offset and audio position of each word it
speaks. Events are mapped to whitespace-separated words by character offset: a word with
several events ("$400", "1990s") keeps its first, and a word without one ("not" in "did
not", which espeak-ng speaks as one unit) belongs to the word before it, with no pause
between them. The audio between one spoken unit's event and the next is trimmed to its
first and last 10 ms frame above 3% of the peak, because espeak-ng places a word's event
before the silence that precedes it; the pause after a unit is the silence up to the next
unit's first loud frame. So the pause a voice makes at a comma or a period is measured,
not assumed. These are the timings a pause-aware model trains on (docs/PAUSES.md).

Needs Debian's espeak-ng (libespeak-ng1), which `make test` installs.
"""

from __future__ import annotations

import ctypes
import re
import threading
from dataclasses import dataclass

import numpy as np

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_EVENT_WORD = 1
_RATE, _PITCH = 1, 3  # espeak_PARAMETER
_LOUD_FRACTION = 0.03
_LOCK = threading.Lock()  # libespeak-ng keeps global state
_LIBRARY: dict = {}


class _Event(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint),
                ("text_position", ctypes.c_int), ("length", ctypes.c_int),
                ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_int64)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                             ctypes.POINTER(_Event))


@dataclass(frozen=True)
class TimedSpeech:
    """Synthesized speech and where each word is.

    Attributes:
        samples: (n,) float32 mono in [-1, 1].
        sample_rate: Hz (espeak-ng's 22,050).
        starts, ends: (n_words,) float64 seconds of the sound of each whitespace-separated
            word; NaN for a word that espeak-ng spoke as one unit with the word before it.
        pauses_after: (n_words,) float64 seconds of silence after each word; 0 inside a
            unit, NaN after the last word.
    """

    samples: np.ndarray
    sample_rate: int
    starts: np.ndarray
    ends: np.ndarray
    pauses_after: np.ndarray


def _library():
    if "lib" not in _LIBRARY:
        try:
            lib = ctypes.CDLL("libespeak-ng.so.1")
        except OSError as error:
            raise OSError(f"espeak-ng is not installed (libespeak-ng.so.1: {error}); "
                          f"run scripts/system-deps.sh") from None
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, None, 0)
        if rate <= 0:
            raise OSError("libespeak-ng could not be initialised")
        _LIBRARY.update(lib=lib, rate=rate)
    return _LIBRARY["lib"], _LIBRARY["rate"]


def _synthesize(text: str, voice: str, words_per_minute: int, pitch: int):
    """(samples (n,) float64, sample rate, [(character offset, audio seconds)] of the WORD
    events that have a length)."""
    lib, rate = _library()
    chunks: list[np.ndarray] = []
    events: list[tuple[int, float]] = []

    def collect(wav, n, event_list):
        if n > 0 and wav:
            chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        i = 0
        while event_list[i].type != 0:
            event = event_list[i]
            if event.type == _EVENT_WORD and event.length > 0:
                events.append((event.text_position - 1, event.audio_position / 1000.0))
            i += 1
        return 0

    callback = _CALLBACK(collect)
    data = text.encode("utf-8")
    with _LOCK:
        lib.espeak_SetSynthCallback(callback)
        if lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice {voice!r}")
        lib.espeak_SetParameter(_RATE, int(words_per_minute), 0)
        lib.espeak_SetParameter(_PITCH, int(pitch), 0)
        lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
    samples = np.concatenate(chunks) / 32768.0 if chunks else np.zeros(0)
    return samples, rate, events


def _character_offsets(text: str) -> list[tuple[int, int]]:
    """(start, end) UTF-8 byte offsets of each whitespace-separated word (espeak-ng counts
    positions in the bytes it was given)."""
    data = text.encode("utf-8")
    return [(m.start(), m.end()) for m in re.finditer(rb"\S+", data)]


def _unit_starts(spans: list[tuple[int, int]], events: list[tuple[int, float]]) -> dict:
    """{word index: event seconds} for the first event inside each word's span."""
    firsts: dict[int, float] = {}
    starts = np.asarray([s for s, _ in spans])
    for offset, seconds in events:
        word = int(np.searchsorted(starts, offset, side="right")) - 1
        if word >= 0 and offset < spans[word][1] and word not in firsts:
            firsts[word] = seconds
    return firsts


def speak_with_timings(text: str, voice: str = "en-us", words_per_minute: int = 175,
                       pitch: int = 50) -> TimedSpeech:
    """Synthesize `text` with espeak-ng and time its whitespace-separated words.

    Args:
        text: the words to speak, with their marks (the marks make the pauses).
        voice: an espeak-ng voice ("en-us", "en+f3", ...).
        words_per_minute: espeak-ng speed (its default is 175).
        pitch: espeak-ng pitch 0..99 (default 50).

    Raises:
        ValueError: no words, an unknown voice, or the first word was not spoken (no event
            falls inside it), so that nothing can anchor the timings.
    """
    spans = _character_offsets(text)
    if not spans:
        raise ValueError("no words to speak")
    samples, rate, events = _synthesize(text, voice, words_per_minute, pitch)
    firsts = _unit_starts(spans, events)
    if 0 not in firsts:
        raise ValueError(f"espeak-ng gave no timing for the first word of {text[:40]!r}")
    units = sorted(firsts)
    sound = _sounding_spans(samples, rate, np.asarray([firsts[u] for u in units]))
    n = len(spans)
    starts, ends = np.full(n, np.nan), np.full(n, np.nan)
    pauses = np.zeros(n)
    for k, word in enumerate(units):
        starts[word], ends[word] = sound[0][k], sound[1][k]
        last_word = units[k + 1] - 1 if k + 1 < len(units) else n - 1
        pauses[last_word] = (max(sound[0][k + 1] - sound[1][k], 0.0)
                             if k + 1 < len(units) else np.nan)
    return TimedSpeech(samples.astype(np.float32), rate, starts, ends, pauses)


def _sounding_spans(samples: np.ndarray, rate: int, events: np.ndarray):
    """(starts, ends) seconds of each spoken unit.

    espeak-ng's WORD event marks the onset of a word's sound (within a frame or two) and
    comes after the silence before it, so a unit starts at the first loud 10 ms frame within
    20 ms of its event and the previous unit ends where the quiet run before that onset
    begins. The last unit ends at the last loud frame.
    """
    frame = max(1, rate // 100)
    n_frames = len(samples) // frame
    energy = np.abs(samples[:n_frames * frame]).reshape(n_frames, frame).max(axis=1)
    loud = energy > _LOUD_FRACTION * (energy.max() if n_frames else 1.0)
    event_frames = np.minimum((events * 100).astype(int), max(n_frames - 1, 0))
    onsets = []
    for f in event_frames:
        near = np.flatnonzero(loud[max(f - 2, 0):f + 3])
        onsets.append(max(f - 2, 0) + near[0] if len(near) else f)
    ends = []
    for k in range(1, len(onsets)):
        end = onsets[k]
        while end - 1 > onsets[k - 1] and not loud[end - 1]:
            end -= 1
        ends.append(end)
    sounding = np.flatnonzero(loud)
    ends.append(max(sounding[-1] + 1 if len(sounding) else n_frames, onsets[-1]))
    return np.asarray(onsets) / 100, np.asarray(ends) / 100
