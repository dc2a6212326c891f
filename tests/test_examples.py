"""The runnable scripts in examples/ run as their docstrings say (with the bundled model)."""

import subprocess
import sys
from pathlib import Path

import pytest

from punctum.text import normalize

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(script: str, *args: str, stdin: str = "") -> str:
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], input=stdin,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_every_example_shows_a_command_line():
    for script in EXAMPLES.glob("*.py"):
        doc = script.read_text(encoding="utf-8").split('"""')[1]
        assert f"python examples/{script.name}" in doc, script.name


def test_restore_text_from_arguments_and_stdin():
    out = run("restore_text.py", "so what do you think i think it's great")
    assert normalize(out) == "so what do you think i think it's great".split()
    lines = run("restore_text.py", stdin="we see a boat\nhello there\n").splitlines()
    assert [normalize(line) for line in lines] == [["we", "see", "a", "boat"],
                                                   ["hello", "there"]]


def test_streaming_finalises_every_word_once():
    text = "so what do you think i think it's great"
    lines = run("streaming.py", "--lookahead", "2", text).splitlines()
    final = " ".join(line.split("final:", 1)[1] for line in lines)
    assert normalize(final) == text.split() and len(lines) == len(text.split()) + 1


def test_subtitles_writes_webvtt_with_the_same_words(tmp_path):
    out = run("subtitles.py")
    assert out.startswith("WEBVTT") and "-->" in out
    cues = [line for line in out.splitlines()[1:] if line and "-->" not in line]
    assert normalize(" ".join(cues)) == ("so what do you think about the plan i think it is "
                                        "great we should start next week").split()


def test_youtube_captions_become_srt_with_each_word_once():
    out = run("youtube_captions.py")
    assert out.startswith("1\n00:00:00,000 --> ")
    cues = [line for line in out.splitlines() if line and "-->" not in line
            and not line.isdigit()]
    assert normalize(" ".join(cues)) == ("so today we plant tomatoes do you have pots let's "
                                        "start").split()


def test_word_details_lists_every_word():
    out = run("word_details.py", "we see a boat")
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["we", "see", "a", "boat"]


def test_evaluate_prints_the_scorer_tables():
    out = run("evaluate.py", str(EXAMPLES / "reference.txt"))
    assert "Punctuation" in out and "Casing" in out and "Overall" in out


def test_train_tiny_trains_exports_and_restores(tmp_path):
    pytest.importorskip("torch")
    out = run("train_tiny.py", str(tmp_path / "tiny")).splitlines()
    assert out[0].startswith("trained 150 steps") and "exported" in out[1]
    assert normalize(out[2]) == "well we saw a boat did they see new york".split()
    assert (tmp_path / "tiny" / "model" / "model.onnx").is_file()
