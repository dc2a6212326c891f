"""`punctum eval`: files in, paper-style scores out, one-line errors."""

import json
import re

import pytest

from punctum.cli import main
from punctum.evaluation import EvalOptions, evaluate_files

CHE_REF = ("so\tO\ni\tO\n'm\tCOMMA\nhappy\tPERIOD\nare\tO\nyou\tQUESTION\nwe\tO\ndo\tO\n"
           "n't\tCOMMA\nknow\tPERIOD\n")


@pytest.fixture
def che_ref(tmp_path):
    path = tmp_path / "ref.che"
    path.write_text(CHE_REF, encoding="utf-8")
    return path


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def test_che_against_itself_and_all_null(tmp_path, che_ref):
    same = evaluate_files(che_ref, che_ref, EvalOptions())
    assert same.punct.overall.f1 == 1.0
    all_null = _write(tmp_path, "null.che", "".join(
        line.split("\t")[0] + "\tO\n" for line in CHE_REF.splitlines()))
    zero = evaluate_files(che_ref, all_null, EvalOptions())
    per = zero.punct.per_label
    assert zero.punct.overall.f1 == 0.0
    assert (per["COMMA"].fn, per["PERIOD"].fn, per["QUESTION"].fn) == (2, 2, 1)
    assert zero.punct.overall.fp == 0


def test_text_hypothesis_on_che_reference_maps_words_back(tmp_path, che_ref):
    # Merged words ("i'm", "don't") and "!" counted as PERIOD, as in the IWSLT convention.
    hyp = _write(tmp_path, "hyp.txt", "So I'm happy! Are you? We don't, know.\n")
    result = evaluate_files(che_ref, hyp, EvalOptions(hyp_format="text"))
    per = result.punct.per_label
    assert (per["COMMA"].tp, per["COMMA"].fp, per["COMMA"].fn) == (1, 0, 1)
    assert (per["PERIOD"].tp, per["PERIOD"].fp, per["PERIOD"].fn) == (2, 0, 0)
    assert (per["QUESTION"].tp, per["QUESTION"].fp, per["QUESTION"].fn) == (1, 0, 0)
    assert result.alignment is None and result.case is None


def test_aligned_scores_hand_computed(tmp_path):
    ref = _write(tmp_path, "ref.txt", "Yes, hello, world. How are you?\n")
    hyp = _write(tmp_path, "hyp.txt", "hello, world, what are you doing?\n")
    result = evaluate_files(ref, hyp, EvalOptions())
    # yes(COMMA) deleted -> fn COMMA; hello COMMA tp; world PERIOD->COMMA: fn PERIOD, fp COMMA;
    # how->what substituted (both O); you QUESTION->O: fn QUESTION; doing inserted with
    # QUESTION: fp QUESTION.
    per = result.punct.per_label
    assert (per["COMMA"].tp, per["COMMA"].fp, per["COMMA"].fn) == (1, 1, 1)
    assert (per["PERIOD"].tp, per["PERIOD"].fp, per["PERIOD"].fn) == (0, 0, 1)
    assert (per["QUESTION"].tp, per["QUESTION"].fp, per["QUESTION"].fn) == (0, 1, 1)
    overall = result.punct.overall
    assert (overall.tp, overall.fp, overall.fn) == (1, 2, 3)
    assert overall.precision == pytest.approx(1 / 3) and overall.recall == pytest.approx(1 / 4)
    a = result.alignment
    assert (a.n_match, a.n_sub, a.n_del, a.n_ins) == (4, 1, 1, 1)
    assert a.wer == pytest.approx(3 / 6)
    # Casing: Yes (CAP) deleted -> fn; How (CAP) vs what (LOWER) -> fn; hello LOWER both.
    assert (result.case.overall.tp, result.case.overall.fn) == (0, 2)


@pytest.mark.parametrize("name, content", [
    ("hyp.srt", "1\n00:00:01,000 --> 00:00:02,000\nYes, <i>hello</i>, world.\n\n"
                "2\n00:00:02,000 --> 00:00:03,000\nHow are you?\n"),
    ("hyp.txt", "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nYes, hello, world. How are you?\n"),
    ("hyp.json", json.dumps({"segments": [{"start": 0, "end": 2, "text": " Yes, hello, world."},
                                          {"start": 2, "end": 3, "text": " How are you?"}]})),
    ("hyp.json", json.dumps({"segments": [  # WhisperX's speakers are not words
        {"start": 0, "end": 2, "text": " Yes, hello, world.", "speaker": "SPEAKER_00"},
        {"start": 2, "end": 3, "text": " How are you?", "speaker": "SPEAKER_01"}]})),
    ("hyp.jsonl", json.dumps({"text": "Yes, hello, world. How are you?", "words": []}))])
def test_a_restored_transcript_is_scored_by_its_words_not_its_cue_numbers(tmp_path, name,
                                                                          content):
    ref = _write(tmp_path, "ref.txt", "Yes, hello, world. How are you?\n")
    result = evaluate_files(ref, _write(tmp_path, name, content), EvalOptions())
    assert result.alignment is None and result.punct.overall.f1 == 1.0  # (the same words)


def test_tsv_by_utterance_id_and_mid_final(tmp_path):
    ref = _write(tmp_path, "ref.tsv", "utt_id\ttext\na\tOne, two.\nb\tThree four?\n")
    hyp = _write(tmp_path, "hyp.tsv", "utt_id\ttext\nb\tThree, four?\na\tOne, two\n")
    result = evaluate_files(ref, hyp, EvalOptions(mid_final=True))
    mid, final = result.mid_final.mid.overall, result.mid_final.final.overall
    assert (mid.tp, mid.fp, mid.fn) == (1, 1, 0)
    assert (final.tp, final.fp, final.fn) == (1, 0, 1)
    assert result.mid_final.weighted_f1 == pytest.approx((2 / 3 * 1 + 2 / 3 * 2) / 3)


@pytest.mark.parametrize("rows, message", [
    ("a\tOne.\na\tOne, two.\n", "utterance id 'a' is given twice"),
    ("a\tOne.\nc\tFive six.\n", "1 utterance id(s) not in the reference (first: 'c')"),
])
def test_tsv_hypothesis_ids_must_match_the_reference(tmp_path, rows, message):
    ref = _write(tmp_path, "ref.tsv", "utt_id\ttext\na\tOne, two.\nb\tThree four?\n")
    hyp = _write(tmp_path, "hyp.tsv", "utt_id\ttext\n" + rows)
    with pytest.raises(ValueError, match=re.escape(message)):
        evaluate_files(ref, hyp, EvalOptions())


def test_tsv_reference_ids_must_be_unique(tmp_path):
    ref = _write(tmp_path, "ref.tsv", "utt_id\ttext\na\tHello, world.\na\tGood bye.\n")
    hyp = _write(tmp_path, "hyp.tsv", "utt_id\ttext\na\tHello world.\n")
    with pytest.raises(ValueError, match="ref.tsv: utterance id 'a' is given twice"):
        evaluate_files(ref, hyp, EvalOptions())


def test_compare_bootstrap(tmp_path):
    sentences = ["one two, three four." for _ in range(40)]
    ref = _write(tmp_path, "ref.txt", " ".join(sentences) + "\n")
    worse = _write(tmp_path, "a.txt", " ".join("one two three four" for _ in range(40)) + "\n")
    result = evaluate_files(ref, worse, EvalOptions(bootstrap_samples=200), compare_path=ref)
    assert result.bootstrap.p_value == 0.0 and result.bootstrap.delta > 0.9


def test_a_text_that_writes_a_che_reference_exactly_scores_100(tmp_path):
    ref = _write(tmp_path, "ref.che", "we\tO\nmet\tO\ndr.\tO\nlee\tCOMMA\nwho\tO\n"
                                      "left\tO\n--\tPERIOD\nthat\tO\nwas\tO\nit\tPERIOD\n")
    hyp = _write(tmp_path, "hyp.txt", "We met Dr. Lee, who left. That was it.\n")
    result = evaluate_files(ref, hyp, EvalOptions(hyp_format="text"))
    assert result.punct.overall.f1 == 1.0  # "--" gives its mark to "left", "dr." is "dr"
    assert result.alignment.n_match == 9 and result.alignment.n_sub == 0


def test_a_che_hypothesis_with_other_words_is_read_as_the_reference_is(tmp_path):
    ref = _write(tmp_path, "ref.che", "yes\tO\n--\tCOMMA\nwe\tO\nwon\tPERIOD\n")
    hyp = _write(tmp_path, "hyp.che", "Yes\tO\n--\tCOMMA\nwe\tO\none\tPERIOD\n")
    result = evaluate_files(ref, hyp, EvalOptions())
    assert result.punct.overall.f1 == 1.0  # "--" a mark on both sides, "Yes" is "yes"
    assert (result.alignment.n_sub, result.alignment.n_ins, result.alignment.n_match) == (1, 0, 2)


def test_cli_tables_json_and_plot(tmp_path, che_ref, capsys):
    assert main(["eval", "--ref", str(che_ref), "--hyp", str(che_ref)]) == 0
    out = capsys.readouterr().out
    assert "Overall" in out and "100.0" in out
    assert main(["eval", "--ref", str(che_ref), "--hyp", str(che_ref), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["punctuation"]["overall"]["f1"] == 1.0
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    assert main(["eval", "--ref", str(che_ref), "--hyp", str(che_ref), "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    for plot, message in ((tmp_path, "expected a .png, .svg or .pdf file path"),
                          (tmp_path / "x.txt", "expected a .png, .svg or .pdf file path"),
                          (tmp_path / "no" / "c.png", "no such folder")):
        assert main(["eval", "--ref", str(che_ref), "--hyp", str(che_ref), "--plot",
                     str(plot)]) == 2
        captured = capsys.readouterr()
        assert message in captured.err and captured.out == ""  # refused before any table
    assert main(["eval", "--ref", str(che_ref), "--hyp", str(che_ref), "--mid-final"]) == 2
    assert "--mid-final needs utterance ends" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, content, message",
    [("missing.txt", None, "no such file"),
     ("binary.txt", b"\x00\xff\xfe garbage", "looks like a binary file"),
     ("bad.che", "a\tO\nb\tWHAT\n", "unknown label 'WHAT'"),
     ("first.txt", "a\tCOLON\nb\tO\n", "unknown label 'COLON'"),  # (--hyp-format auto)
     ("bad.gz", b"\x1f\x8b\x08\x00 broken gzip", "cannot be read")],
)
def test_cli_bad_files_exit_2_with_one_line(tmp_path, che_ref, capsys, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    fmt = "che" if name.endswith(".che") else "auto" if name == "first.txt" else "text"
    code = main(["eval", "--ref", str(che_ref), "--hyp", str(path), "--hyp-format", fmt])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and name in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_compare_aligned_asr_hypotheses(tmp_path):
    ref = _write(tmp_path, "ref.txt", " ".join(["one two, three four."] * 30) + "\n")
    # both hypotheses drop a word per sentence; b keeps the marks, a has none
    a = _write(tmp_path, "a.txt", " ".join(["one two three"] * 30) + "\n")
    b = _write(tmp_path, "b.txt", " ".join(["one two, three."] * 30) + "\n")
    result = evaluate_files(ref, a, EvalOptions(bootstrap_samples=200), compare_path=b)
    boot = result.bootstrap
    assert boot.f1_a == 0.0 and boot.f1_b > 0.4 and boot.p_value == 0.0
    assert boot.n_units == 30


def test_score_utterances_aligns_each_utterance_on_its_own():
    from punctum.evaluation import score_utterances
    from punctum.text import get_inventory

    inventory = get_inventory("en")
    refs = ["Hello, world. How are you?", "Fine, thanks.", "See you soon."]
    hyps = ["hello world, how are you?", "", "see you soon."]
    result = score_utterances(refs, hyps, inventory, mid_final=True)
    a = result.alignment
    assert (a.n_match, a.n_sub, a.n_del, a.n_ins) == (8, 0, 2, 0)  # "fine thanks" deleted
    punct = result.punct.overall  # ref marks: , . ? , . .  -> hyp finds ? and the last .
    assert punct.precision == pytest.approx(2 / 3) and punct.recall == pytest.approx(2 / 6)
    assert result.mid_final is not None and result.cer > 0
    with pytest.raises(ValueError, match="hypotheses"):
        score_utterances(refs, hyps[:2], inventory)


def test_a_merged_word_keeps_its_mark_whatever_the_context():
    from punctum.evaluation import score_utterances
    from punctum.text import get_inventory

    inventory = get_inventory("en")
    ref = "We went to New York, it was fun."
    for hyp in ("we went to newark, it was fun.", "we went to newark, it was funny."):
        result = score_utterances([ref], [hyp], inventory)  # no shared word / shared words
        assert result.punct.overall.f1 == pytest.approx(1.0)


def test_a_pipe_is_read_once_whole(tmp_path):
    """`--hyp <(cat ref)`: the format guess read the pipe's start, which was then lost."""
    import shutil
    import subprocess
    import sys

    if shutil.which("bash") is None:
        pytest.skip("needs bash for <(...)")
    ref = tmp_path / "ref.txt"
    ref.write_text("".join(f"Hello there, number {i}. Is it you?\n" for i in range(3000)))
    command = (f"{sys.executable} -m punctum eval --ref {ref} --hyp <(cat {ref}) --json && "
               f"{sys.executable} -m punctum eval --ref <(cat {ref}) --hyp {ref} --json")
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    decoder, text, position, runs = json.JSONDecoder(), result.stdout, 0, []
    while text[position:].strip():
        record, end = decoder.raw_decode(text[position:].lstrip())
        position = len(text) - len(text[position:].lstrip()) + end
        runs.append(record["punctuation"]["overall"])
    assert len(runs) == 2 and all(run["f1"] == 1.0 for run in runs), runs


def test_an_empty_reference_is_an_error(tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("\n")
    (tmp_path / "hyp.txt").write_text("Hello there.\n")
    assert main(["eval", "--ref", str(tmp_path / "empty.txt"), "--hyp",
                 str(tmp_path / "hyp.txt")]) == 2
    assert "has no words" in capsys.readouterr().err


def test_a_different_text_is_warned_about(tmp_path, caplog):
    (tmp_path / "ref.txt").write_text("Hello there, how are you today?\n")
    (tmp_path / "hyp.txt").write_text("Completely other words. Nothing alike!\n")
    assert main(["eval", "--ref", str(tmp_path / "ref.txt"), "--hyp",
                 str(tmp_path / "hyp.txt")]) == 0
    assert "is it a restoring of the same text?" in caplog.text


def test_a_hypothesis_tsv_missing_ids_is_warned_about(tmp_path, caplog):
    ref = _write(tmp_path, "ref.tsv", "utt_id\ttext\na\tOne, two.\nb\tThree four?\n")
    hyp = _write(tmp_path, "hyp.tsv", "utt_id\ttext\na\tOne, two.\n")
    evaluate_files(ref, hyp, EvalOptions())
    assert "no row for 1 of the reference's 2 utterance ids (first: 'b')" in caplog.text


def test_an_all_lowercase_reference_has_no_casing_table(tmp_path):
    ref = _write(tmp_path, "ref.txt", "so what do you think. i think so.\n")
    assert evaluate_files(ref, ref, EvalOptions()).case is None
    cased = _write(tmp_path, "cased.txt", "So what do you think. I think so.\n")
    assert evaluate_files(cased, ref, EvalOptions()).case is not None


def test_cer_of_a_language_written_without_spaces_counts_no_spaces(tmp_path):
    ref = _write(tmp_path, "ref.txt", "你好世界。\n")
    hyp = _write(tmp_path, "hyp.txt", "你好世间。\n")
    result = evaluate_files(ref, hyp, EvalOptions(language="zh"))
    assert result.cer == pytest.approx(1 / 4)  # one character of four (was 1 / 7)


def test_composed_and_decomposed_accents_are_the_same_words(tmp_path):
    import unicodedata

    text = "Le café est fermé. Où est René?\n"
    ref = _write(tmp_path, "nfc.txt", unicodedata.normalize("NFC", text))
    hyp = _write(tmp_path, "nfd.txt", unicodedata.normalize("NFD", text))
    result = evaluate_files(ref, hyp, EvalOptions())
    assert result.alignment is None and result.punct.overall.f1 == 1.0


def test_a_split_word_keeps_its_mark_and_an_inserted_one_the_next_capital(tmp_path):
    ref = _write(tmp_path, "ref.txt", "Alright, let us go home.\n")
    hyp = _write(tmp_path, "hyp.txt", "All right, let us go home.\n")
    result = evaluate_files(ref, hyp, EvalOptions())
    assert result.punct.overall.f1 == 1.0  # the comma after the stretch's last word
    ref = _write(tmp_path, "ref2.txt", "We visited Rome today.\n")
    hyp = _write(tmp_path, "hyp2.txt", "We visited uh Roam today.\n")
    case = evaluate_files(ref, hyp, EvalOptions()).case.per_label["CAP"]
    assert (case.tp, case.fp, case.fn) == (2, 0, 0)  # Rome against Roam, not against uh


def test_compare_scores_a_che_reference_as_the_table_does(tmp_path):
    ref = _write(tmp_path, "ref.che", "we\tO\nmet\tO\ndr.\tO\nlee\tCOMMA\nwho\tO\n"
                                      "left\tO\n--\tPERIOD\nthat\tO\nwas\tO\nit\tPERIOD\n")
    hyp = _write(tmp_path, "hyp.txt", "We met Dr. Lee, who left. That was it.\n")
    result = evaluate_files(ref, hyp, EvalOptions(hyp_format="text", bootstrap_samples=50),
                            compare_path=hyp)
    assert result.punct.overall.f1 == 1.0 and result.bootstrap.f1_a == pytest.approx(1.0)


@pytest.mark.parametrize("flag, value", [("--samples", "99999999999999999"), ("--samples", "0"),
                                         ("--seed", "-1")])
def test_bootstrap_options_out_of_range_are_one_line_errors(tmp_path, che_ref, capsys, flag,
                                                            value):
    assert main(["eval", "--ref", str(che_ref), "--hyp", str(che_ref), "--compare",
                 str(che_ref), flag, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"punctum eval: error: {flag} must be in") and err.count("\n") == 1


def test_json_of_no_known_kind_names_what_eval_reads(tmp_path, che_ref, capsys):
    hyp = _write(tmp_path, "hyp.json", "[1, 2, 3]\n")
    assert main(["eval", "--ref", str(che_ref), "--hyp", str(hyp)]) == 2
    err = capsys.readouterr().err
    assert "punctum eval reads Whisper" in err and "give the format" not in err


def test_speaker_labels_and_sound_descriptions_are_not_scored(tmp_path):
    ref = _write(tmp_path, "ref.txt", "Hello there, how are you?\nFine, thanks. Bye.\n")
    hyp = _write(tmp_path, "hyp.txt",
                 "JOHN: Hello there. How are you?\n[00:03] MARY: Fine [laughs] thanks. Bye.\n")
    result = evaluate_files(ref, hyp, EvalOptions())
    assert result.alignment is None  # the same words: no label counted as one
    per = result.punct.per_label
    assert (per["COMMA"].tp, per["COMMA"].fn, per["PERIOD"].fp) == (0, 2, 1)
    assert evaluate_files(hyp, hyp, EvalOptions()).case.per_label["UPPER"].support == 0
    rows = _write(tmp_path, "hyp.tsv", "utt_id\ttext\na\t- Agent: Hello, how are you?\n")
    refs = _write(tmp_path, "ref.tsv", "utt_id\ttext\na\tHello, how are you?\n")
    assert evaluate_files(refs, rows, EvalOptions()).punct.overall.f1 == 1.0


def test_a_word_one_side_writes_as_a_label_is_scored_as_a_word(tmp_path):
    ref = _write(tmp_path, "ref.txt", "Note: do not touch the wire. It is live.\n")
    hyp = _write(tmp_path, "hyp.txt", "Note, do not touch the wire. It is live.\n")
    result = evaluate_files(ref, hyp, EvalOptions())  # the words agree only as written
    assert result.alignment is None and result.punct.overall.f1 == 1.0
    assert evaluate_files(ref, ref, EvalOptions(), compare_path=hyp).bootstrap is not None


@pytest.mark.parametrize("first", ["Results\tI", "ID\tTEXT", "Act\tIV"])
def test_a_text_line_with_a_tab_is_no_che_line(tmp_path, first):
    ref = _write(tmp_path, "ref.txt", f"{first}\nThis is a test, of things.\n")
    assert evaluate_files(ref, ref, EvalOptions()).punct.overall.f1 == 1.0
