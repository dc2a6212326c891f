"""pocketsphinx as the acoustic model of `punctum transcribe`: a usable English cascade.

    punctum transcribe talk.flac -m pocketsphinx                  # + en-tiny: marks and case
    punctum transcribe talk.flac -m pocketsphinx --text-model en-tiny-pauses --to srt

The pocketsphinx package ships a US English acoustic model, language model and dictionary;
it writes lowercase words without marks, with word times. Audio is read in blocks (bounded
memory) and decoded in pieces of at most 30 s, each cut in the middle of the quietest
stretch of its last 10 s (a pause: whole phrases, with the language model's context inside
each piece) and decoded after 0.25 s of silence (without it, a piece's first word was often
misheard); cutting
at the speech regions of pocketsphinx's voice activity detector instead cost 4.5 WER points
on 30-s pieces of LJ001); the words (fillers and silences left out, a pronunciation
variant's "(2)" dropped) go through the lexical model as for any cascade
(`transcribe.Transcriber`): a pause-aware model (en-tiny-pauses) hears the pauses between
them. Needs `pip install "punctum[audio,sphinx]"`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from punctum.audio.io import MIN_SAMPLE_RATE, SAMPLE_RATE, iter_audio_chunks, sample_rate_of
from punctum.transcribe import Transcriber, _RawWord

BLOCK_SECONDS = 10.0  # audio read from the file at a time
UTTERANCE_SECONDS = 30.0  # the longest piece decoded as one utterance
CUT_SEARCH_SECONDS = 10.0  # a piece ends in the quietest stretch of its last seconds
FRAME_SECONDS = 0.01  # pocketsphinx's frame shift
LEAD_SECONDS = 0.25  # silence before each piece: its first word is misheard without it
SILENT_PEAK = 3e-4  # a piece whose samples all stay under -70 dBFS holds no speech


def utterances(blocks: Iterator[np.ndarray], longest: float = UTTERANCE_SECONDS,
               search: float = CUT_SEARCH_SECONDS) -> Iterator[tuple[float, np.ndarray]]:
    """(start second, samples) of pieces of at most `longest` seconds, each cut in the
    quietest stretch of its last `search` seconds (a pause, where one is), so that a piece
    holds whole phrases and the decoder keeps its language-model context within it.

    Args:
        blocks: consecutive (n,) float32 blocks of 16 kHz audio.
    """
    frame, size = int(FRAME_SECONDS * SAMPLE_RATE), int(longest * SAMPLE_RATE)
    buffer, offset = np.zeros(0, dtype=np.float32), 0
    for block in blocks:
        buffer = np.concatenate([buffer, block])
        while len(buffer) >= size:
            cut = _quietest_cut(buffer[:size], int(search * SAMPLE_RATE), frame)
            yield offset / SAMPLE_RATE, buffer[:cut]
            buffer, offset = buffer[cut:], offset + cut
    if len(buffer):
        yield offset / SAMPLE_RATE, buffer


def _quietest_cut(samples: np.ndarray, search: int, frame: int) -> int:
    """A sample index in the middle of the quiet stretch around the quietest frame within
    the last `search` samples (frames up to twice its energy): quiet on both sides, so that
    neither piece starts or ends inside a word."""
    tail = samples[len(samples) - search:]
    n_frames = len(tail) // frame
    energy = (tail[:n_frames * frame].reshape(n_frames, frame) ** 2).sum(axis=1)
    quietest = int(np.argmin(energy))
    quiet = energy <= 2 * energy[quietest] + 1e-12
    first = last = quietest
    while first > 0 and quiet[first - 1]:
        first -= 1
    while last + 1 < n_frames and quiet[last + 1]:
        last += 1
    return len(samples) - search + ((first + last + 1) // 2) * frame


def _note_narrowband(path: str | Path) -> None:
    """Warn when audio is sampled below 16 kHz (telephone speech): the model was trained on
    wideband speech, and upsampled narrowband audio decodes with many more errors."""
    rate = sample_rate_of(path)
    if rate is not None and MIN_SAMPLE_RATE <= rate < SAMPLE_RATE:  # lower: an error
        logging.getLogger(__name__).warning(
            "%s: %d Hz audio; pocketsphinx's model is for 16 kHz speech, so expect many "
            "more errors (telephone audio needs an 8 kHz model)", path, rate)


class SphinxTranscriber(Transcriber):
    """pocketsphinx words with marks and case from a lexical Punctuator.

    Args:
        punctuator: the lexical model (marks and casing; pauses when it is pause-aware).
    """

    def __init__(self, punctuator) -> None:  # noqa: D107 (no acoustic artifact to read)
        try:
            from pocketsphinx import Decoder
        except ImportError:
            raise ImportError("the pocketsphinx engine needs the pocketsphinx package: pip "
                              "install \"punctum[audio,sphinx]\"") from None
        self.punctuator = punctuator
        self.model = punctuator.artifact  # its inventory and lexicon write the text
        self.decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")

    @classmethod
    def load(cls, text_model: str | None = None, threads: int = 0) -> SphinxTranscriber:
        """The engine with `text_model` (None: the bundled default) as its lexical model."""
        from punctum import artifact as artifacts
        from punctum.runtime import Punctuator

        return cls(Punctuator.load(text_model or artifacts.DEFAULT_MODEL, threads=threads))

    @property
    def end_to_end(self) -> bool:
        return False

    def raw_words(self, path: str | Path) -> list[_RawWord]:
        """The words of an audio file with their times in seconds, piece by piece."""
        _note_narrowband(path)
        blocks = (samples for _, samples in
                  iter_audio_chunks(path, BLOCK_SECONDS, 0.0, SAMPLE_RATE))
        words: list[_RawWord] = []
        for offset, samples in utterances(blocks):
            words.extend(self._piece_words(samples, offset))
        return words

    def _piece_words(self, samples: np.ndarray, offset: float) -> list[_RawWord]:
        if not len(samples) or np.abs(samples).max() < SILENT_PEAK:
            return []  # the decoder finds a word even in digital silence
        peak = float(np.abs(samples).max())
        if peak > 1:  # float audio louder than full scale: scaled down, not clipped
            samples = samples / peak
        lead = np.zeros(int(LEAD_SECONDS * SAMPLE_RATE), dtype=np.float32)
        pcm = (np.clip(np.concatenate([lead, samples]), -1, 1) * 32767).astype("<i2").tobytes()
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, full_utt=True)
        self.decoder.end_utt()
        offset -= LEAD_SECONDS
        words = []
        for segment in self.decoder.seg() or ():  # None for audio of under about 0.1 s
            if segment.word.startswith(("<", "[")) or segment.word == "</s>":
                continue  # silences, fillers, sentence marks
            start = max(offset + segment.start_frame * FRAME_SECONDS, offset + LEAD_SECONDS)
            end = max(offset + (segment.end_frame + 1) * FRAME_SECONDS, start)
            words.append(_RawWord(segment.word.split("(")[0], "", start, end))
        return words
