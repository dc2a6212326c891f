"""punctum.audio: the speech layer (extra ``audio``: soundfile, soxr); numpy only, no torch.

- io: read wav/flac/ogg/mp3, mono, resample to 16 kHz; write FLAC.
- features: 80-dim log-mel filterbank (librosa-compatible), mean/variance normalisation.
- augment: SpecAugment (time warp, frequency and time masks), additive noise at an SNR.
- manifest: JSONL manifests, LJSpeech-style tables, text sources.
- voices: the Debian TTS voices (espeak-ng, flite, festival) and one utterance's synthesis.
- synth: build a speech corpus from punctuated text (`punctum synth`).
- glue: utterance gluing (Samsung 3.2) and random concatenation (`punctum glue`).

Nothing is imported here, so ``import punctum.audio`` stays cheap.
"""
