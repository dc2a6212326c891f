"""Subtitle and ASR-JSON readers and writers that keep every timing, and restoring them.

    punctum restore -i talk.srt -o talk.restored.srt
    punctum restore -i whisper.json --to srt --resegment --max-chars 42 --max-lines 2

Formats (`FORMATS`): SRT, WebVTT, YouTube's SBV, Whisper JSON, Vosk JSON (an object, a list of
objects or JSON lines), NeMo-style JSONL manifests and plain text (one paragraph per line);
Kaldi CTM and text, pocketsphinx JSON and transformers-pipeline JSON are read and written by
`asr`; whisper.cpp's JSON by `whispercpp`; sherpa-onnx's results by `sherpa`; Deepgram's,
AssemblyAI's, Google Speech-to-Text's and IBM Watson's responses by `deepgram`, `assemblyai`,
`google_stt` and `watson` (words listed as records, `wordlists`); Praat TextGrids (a
words tier) by `textgrid`; ASS and SSA scripts (the text of each Dialogue line) by `ass`; LRC
(timed lines) by `lrc`; TTML and DFXP (the text of each paragraph) by `ttml`; ELAN documents
(each speaker's tier) by `eaf`; CSV and TSV tables (a text column per row: call-centre logs) by
`tables`.
Each is read into a `Transcript` of `Cue`s of `Token`s: a token is one whitespace-separated
piece of the written text (usually one word) with its timing when the source has one, and
keeps the whitespace and markup around it (`before`, `after`), so that writing a transcript
that was read gives back its input:

- SRT, WebVTT and plain text: byte-identical, except that timestamps are re-written in the
  format's own style (SRT ``00:01:02,345``; VTT ``00:01:02.345``, or ``01:02.345`` when no
  timestamp of the input has hours), blank lines between cues are one, trailing whitespace
  after the last cue is kept as newlines only, blank lines before the first cue go, SRT
  cues written without a number are numbered (SRT requires one), and a file with any CRLF
  line ending is written with CRLF throughout (one with CR alone, with CR). SBV the same,
  its times in YouTube's form (``0:01:02.345``); its text has no markup. ASS and SSA: every
  line as written but each Dialogue line's text field; LRC likewise, but each timed line's
  text; TTML every byte but each paragraph's inner text.
  VTT NOTE, STYLE and REGION blocks are kept in place; tags (``<v Bob>``, ``<i>``, inline
  timestamps ``<00:01.500>``, SRT's ``{\\an8}``) and character references (``&amp;``) are
  kept around the tokens and never reach the model.
- Whisper, whisper.cpp, Vosk, NeMo, pocketsphinx, transformers, sherpa-onnx, Deepgram,
  AssemblyAI, Google, Watson: the same JSON
  values, every key in its order (records are kept as read and only the fields a token or cue
  owns are written back when they changed). The text read is kept and only the strings and
  numbers that changed are rewritten in it (`json_splice`), so every other byte stays: Vosk's
  ``"conf" : 1.000000``, arrays on one line, blank lines between JSON lines; a key an object
  gains after its last one (Deepgram's "punctuated_word") is written there in its spacing.
  Where the shape changes otherwise (a Vosk result without "text" gains one after its
  "result" list; records added in code) the whole value is written by Python's json module
  with the indent, separators and ASCII escaping detected from the input.

`restore_transcript` punctuates and cases a transcript across cue boundaries: all tokens of a
file go to the model as one word sequence (for plain text and NeMo manifests each line is its
own text), and each token gets back its own words with their marks and case. Timings, cues and
words never change. `resegment` rebuilds subtitle cues at sentence boundaries within line,
length and duration limits; `convert` moves a transcript to another format.

Modules: `transcript` (Token, Cue, Transcript, splitting text into tokens), `files` (reading,
writing, format detection), `subtitles` (SRT, WebVTT, SBV, plain text), `json_records` (Whisper,
Vosk, NeMo), `json_splice` (changed values written into the text read), `asr` (CTM, Kaldi,
pocketsphinx, transformers pipeline), `whispercpp` (whisper.cpp's JSON), `sherpa` (sherpa-onnx's
JSON), `wordlists` (words listed as records, and their copies), `deepgram`, `assemblyai`,
`google_stt`, `watson` (cloud recognisers' JSON), `textgrid` (Praat TextGrid), `ass` (ASS,
SSA), `lrc` (LRC), `ttml` (TTML, DFXP), `eaf` (ELAN), `tables` (CSV, TSV), `rolling` (roll-up
captions), `restoring` (restore and convert), `resegment` (subtitle cues rebuilt at sentence
boundaries).
"""


from punctum.formats.eaf import looks_like_eaf
from punctum.formats.files import (
    UNREAD,
    detect_format,
    dumps,
    loads,
    read,
    sniff_format,
    sniff_lines,
    write,
)
from punctum.formats.resegment import ResegmentOptions, resegment
from punctum.formats.restoring import (
    convert,
    restore_lines,
    restore_paragraphs,
    restore_transcript,
    speakers_tiers,
    word_pauses,
)
from punctum.formats.rolling import without_repeats
from punctum.formats.subtitles import format_time
from punctum.formats.transcript import (
    EXTENSIONS,
    FORMATS,
    INDEPENDENT_CUES,
    KEYED,
    SUBTITLES,
    TABLES,
    TEXT_KEYED,
    UNTIMED,
    WORD_LISTS,
    Cue,
    Token,
    Transcript,
    split_tokens,
)
from punctum.formats.ttml import looks_like_ttml

__all__ = ["EXTENSIONS", "FORMATS", "INDEPENDENT_CUES", "KEYED", "SUBTITLES", "TEXT_KEYED",
           "TABLES", "UNTIMED", "Cue", "ResegmentOptions", "Token", "Transcript", "convert",
           "detect_format", "UNREAD", "dumps", "format_time", "loads", "looks_like_eaf",
           "looks_like_ttml", "read", "resegment", "restore_lines", "restore_paragraphs",
           "restore_transcript",
           "sniff_format", "sniff_lines", "speakers_tiers", "split_tokens", "without_repeats",
           "WORD_LISTS", "word_pauses", "write"]
