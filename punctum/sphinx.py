"""pocketsphinx as the acoustic model of `punctum transcribe`: a usable English cascade.

    punctum transcribe talk.flac -m pocketsphinx                  # + en-tiny: marks and case
    punctum transcribe talk.flac -m pocketsphinx --text-model en-tiny-pauses --to srt

The pocketsphinx package ships a US English acoustic model, language model and dictionary;
it writes lowercase words without marks, with word times. Audio is read in blocks (bounded
memory), cut into speech regions by pocketsphinx's voice activity detector (`Segmenter`),
and each region is decoded as one utterance; its words (fillers and silences left out, a
pronunciation variant's "(2)" dropped) go through the lexical model as for any cascade
(`transcribe.Transcriber`): a pause-aware model (en-tiny-pauses) hears the pauses between
them. Needs `pip install "punctum[audio,sphinx]"`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from punctum.transcribe import Transcriber, _RawWord

NAME = "pocketsphinx"  # the model name `punctum transcribe -m` takes for this engine
SAMPLE_RATE = 16_000
BLOCK_SECONDS = 30.0  # audio decoded from the file at a time
FRAME_SECONDS = 0.01  # pocketsphinx's frame shift


class _PcmStream:
    """A file-like stream of 16-bit PCM bytes over float blocks (what `Segmenter` reads)."""

    def __init__(self, blocks: Iterator[np.ndarray]) -> None:
        self.blocks, self.buffer = blocks, b""

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            block = next(self.blocks, None)
            if block is None:
                break
            self.buffer += (np.clip(block, -1, 1) * 32767).astype("<i2").tobytes()
        out, self.buffer = self.buffer[:size], self.buffer[size:]
        return out


class SphinxTranscriber(Transcriber):
    """pocketsphinx words with marks and case from a lexical Punctuator.

    Args:
        punctuator: the lexical model (marks and casing; pauses when it is pause-aware).
    """

    def __init__(self, punctuator) -> None:  # noqa: D107 (no acoustic artifact to read)
        try:
            from pocketsphinx import Decoder, Segmenter
        except ImportError:
            raise ImportError("the pocketsphinx engine needs the pocketsphinx package: pip "
                              "install \"punctum[audio,sphinx]\"") from None
        self.punctuator = punctuator
        self.model = punctuator.artifact  # its inventory and lexicon write the text
        self.decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")
        self.segmenter = Segmenter(sample_rate=SAMPLE_RATE)

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
        """The words of an audio file with their times in seconds, region by region."""
        from punctum.audio.io import iter_audio_chunks

        blocks = (samples for _, samples in
                  iter_audio_chunks(path, BLOCK_SECONDS, 0.0, SAMPLE_RATE))
        words: list[_RawWord] = []
        for region in self.segmenter.segment(_PcmStream(blocks)):
            words.extend(self._region_words(region.pcm, region.start_time))
        return words

    def _region_words(self, pcm: bytes, offset: float) -> list[_RawWord]:
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, full_utt=True)
        self.decoder.end_utt()
        words = []
        for segment in self.decoder.seg():
            if segment.word.startswith(("<", "[")) or segment.word == "</s>":
                continue  # silences, fillers, sentence marks
            words.append(_RawWord(segment.word.split("(")[0], "",
                                  offset + segment.start_frame * FRAME_SECONDS,
                                  offset + (segment.end_frame + 1) * FRAME_SECONDS))
        return words
