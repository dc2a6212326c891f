"""Property tests for the markup-heavy formats (ASS, TTML, LRC, ELAN): whatever markup stands
around and inside the words, a restore changes only marks and case, keeps every cue and time,
and the file reads back as the same format."""

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_formats import ScriptedPunctuator

from punctum import formats
from punctum.restored import Prediction
from punctum.runtime import RestoreOptions
from punctum.text import normalize


class HashPunctuator(ScriptedPunctuator):
    """Predicts a mark and a case for each word from a hash of it and its neighbour: any
    words, every label in turn, deterministic."""

    def _predict(self, words: list[str]) -> Prediction:
        post_labels, case_labels = self.inventory.post_labels, self.inventory.case_labels
        post_probs = np.zeros((len(words), len(post_labels)), np.float32)
        case_probs = np.zeros((len(words), len(case_labels)), np.float32)
        for k, word in enumerate(words):
            digest = hashlib.md5(f"{word}|{words[k - 1] if k else ''}".encode()).digest()
            post_probs[k, digest[0] % len(post_labels)] = 1
            case_probs[k, digest[1] % len(case_labels)] = 1
        return Prediction(tuple(words), tuple(post_labels[i] for i in post_probs.argmax(1)),
                          tuple(case_labels[i] for i in case_probs.argmax(1)), post_probs,
                          case_probs, post_labels, case_labels)


_WORDS = st.lists(st.sampled_from(["so", "what", "do", "you", "think", "i", "new", "york",
                                   "it's", "okay", "don't", "a.m.", "5", "x"]),
                  min_size=1, max_size=6)
_ASS_MARKUP = st.sampled_from(["", " ", "\\N", "\\h", "{\\i1}", "{\\i0}", "{\\k20}",
                               "{\\an8}", "<i>", "</i>", " - "])
_TTML_MARKUP = st.sampled_from(["", " ", "<br/>", '<span tts:color="a>b">', "</span>",
                                "<!-- a\nnote -->", "&amp;", "<![CDATA[x]]>", "\n  "])
_LRC_MARKUP = st.sampled_from(["", " ", "<00:01.50>", " <00:02.00>"])


def _text(words: list[str], markup: list[str]) -> str:
    """Words with the markup between them in turn (a space where there is none; markup with
    no space glues the words around it into one)."""
    gaps = markup or [" "]
    return words[0] + "".join(gaps[k % len(gaps)] + word for k, word in enumerate(words[1:]))


def _check(document: str, format: str) -> None:
    original = formats.loads(document, format)
    assert formats.dumps(original) == document
    restored = formats.restore_transcript(original, HashPunctuator(""), RestoreOptions())
    again = formats.loads(formats.dumps(restored), format)
    assert [(c.start, c.end) for c in again.cues] == [(c.start, c.end) for c in original.cues]
    words = [normalize(" ".join(t.text for t in c.tokens)) for c in original.cues]
    assert [normalize(" ".join(t.text for t in c.tokens)) for c in again.cues] == words


@settings(max_examples=60)
@given(cues=st.lists(st.tuples(_WORDS, st.lists(_ASS_MARKUP, max_size=4)), min_size=1,
                     max_size=5))
def test_ass_scripts_keep_their_words_and_times(cues):
    lines = [f"Dialogue: 0,0:00:{k:02d}.00,0:00:{k + 1:02d}.00,Default,"
             f"{'AB'[k % 2]},0,0,0,,{_text(words, markup)}" for k, (words, markup) in
             enumerate(cues)]
    _check("[Script Info]\n\n[Events]\n" + "\n".join(lines) + "\n", "ass")


@settings(max_examples=60)
@given(cues=st.lists(st.tuples(_WORDS, st.lists(_TTML_MARKUP, max_size=4)), min_size=1,
                     max_size=5))
def test_ttml_documents_keep_their_words_and_times(cues):
    paragraphs = "".join(
        f'<p begin="{k}s" end="{k + 1}s">{_text(words, markup)}</p>\n'
        for k, (words, markup) in enumerate(cues))
    spans = sum(p.count("<span") for p in paragraphs.split("\n"))
    closes = sum(p.count("</span>") for p in paragraphs.split("\n"))
    if spans != closes or any(p.count("<span") != p.count("</span>")
                              or p.find("</span>") < p.find("<span")
                              for p in paragraphs.split("\n")):
        paragraphs = paragraphs.replace('<span tts:color="a>b">', "").replace("</span>", "")
    document = ('<?xml version="1.0"?>\n<tt xmlns="http://www.w3.org/ns/ttml" '
                'xmlns:tts="http://www.w3.org/ns/ttml#styling"><body><div>\n'
                + paragraphs + "</div></body></tt>\n")
    _check(document, "ttml")


@settings(max_examples=60)
@given(cues=st.lists(st.tuples(_WORDS, st.lists(_LRC_MARKUP, max_size=3)), min_size=1,
                     max_size=5))
def test_lrc_files_keep_their_words_and_times(cues):
    lines = [f"[00:{k:02d}.50]{_text(words, markup)}" for k, (words, markup) in
             enumerate(cues)]
    _check("[ti:a song]\n" + "\n".join(lines) + "\n", "lrc")
