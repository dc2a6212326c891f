"""CSV and TSV tables: a text column restored per row, everything else kept as written."""

import gzip
import io

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.text import normalize

# Written for these tests: a call-centre log with a quoted cell, a blank line and a short row.
CALLS = ('call,speaker,start,text\n'
         '1,agent,0.0,hello thank you for calling\n'
         '1,customer,3.2,"hi i have a problem, with my bill"\n'
         '\n'
         '2,agent,0.0\n'
         '2,agent,1.5,good morning\n')
REFERENCE = "Hello, thank you for calling. Hi, I have a problem with my bill. Good morning."

ROUND_TRIPS = {
    "minimal quoting": CALLS,
    "every field quoted": '"id","text"\r\n"1","so what, now"\r\n"2","ok"\r\n',
    "semicolons": 'id;Transcript;note\n1;so what;"a;b"\n',
    "a line break in a cell": 'id,text\n1,"so what\nnow"\n2,"say ""hi"""',
    "a byte-order mark": '\ufeffid,utterance\n1,so what\n',
    "blank lines only": "\n\n",
    "empty": "",
    "header only": "text\n",
    "tsv": 'path\tsentence\tup_votes\na.mp3\tthe "quick" fox\t2\n\nb.mp3\tso\n',
    "carriage returns alone": 'id,text\r1,"so what,\rnow"\r2,ok\r',  # classic Mac OS
    "carriage returns and a line feed in a cell": 'id,text\r1,"so what\nnow"\r2,ok\r',
}


@pytest.mark.parametrize("sample", sorted(ROUND_TRIPS))
def test_a_table_read_and_written_back_is_byte_identical(tmp_path, sample):
    content = ROUND_TRIPS[sample]
    suffix = ".tsv" if sample == "tsv" else ".csv"
    path = _write(tmp_path, "calls" + suffix, content)
    assert formats.detect_format(path) == suffix[1:]
    assert formats.dumps(formats.read(path)) == content


def _restored(content: str, reference: str = REFERENCE, format: str = "csv", **keys):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, format, text_key=keys.pop("text_key", None))
    restored = formats.restore_transcript(transcript, punctuator)
    return formats.dumps(restored, **keys), punctuator


def test_rows_ended_by_two_carriage_returns_and_a_line_feed_are_rows():
    content = "id,text\r\r\n1,so what\r\r\n2,ok\r\r\n"  # Python's csv on Windows, no newline=""
    transcript = formats.loads(content, "csv")
    assert [c.text for c in transcript.cues] == ["so what", "ok"]
    assert formats.dumps(transcript) == content


def test_rows_ended_by_carriage_returns_alone_are_rows():
    out, punctuator = _restored("id,text\r1,so what\r2,good morning\r", "So what. Good morning.")
    assert punctuator.calls == [["so", "what"], ["good", "morning"]]
    assert out == "id,text\r1,So what.\r2,Good morning.\r"


def test_each_row_is_restored_as_a_text_of_its_own_and_the_rest_is_kept():
    out, punctuator = _restored(CALLS)
    assert punctuator.calls == [["hello", "thank", "you", "for", "calling"],
                                ["hi", "i", "have", "a", "problem", "with", "my", "bill"],
                                ["good", "morning"]]
    assert out == ('call,speaker,start,text\n'
                   '1,agent,0.0,"Hello, thank you for calling."\n'
                   '1,customer,3.2,"Hi, I have a problem with my bill."\n'
                   '\n'
                   '2,agent,0.0\n'  # a short row has no text: kept as it is
                   '2,agent,1.5,Good morning.\n')


# Written for these tests: Whisper's TSV (start and end in milliseconds), a sentence across rows.
WHISPER_TSV = ("start\tend\ttext\n"
               "0\t1500\tso what do you think about\n"
               "1500\t3000\tthe new plan i think it is\n"
               "3000\t4200\tgreat\n")


def test_rows_with_start_times_are_segments_and_context_flows_across_them():
    reference = "So what do you think about the new plan? I think it is great."
    out, punctuator = _restored(WHISPER_TSV, reference, format="tsv")
    assert punctuator.calls == [normalize(reference)]  # one text, not three
    assert out == ("start\tend\ttext\n"
                   "0\t1500\tSo what do you think about\n"  # no sentence end forced here
                   "1500\t3000\tthe new plan? I think it is\n"
                   "3000\t4200\tgreat.\n")
    untimed = "text\n" + "".join(line.split("\t")[2] for line in WHISPER_TSV.splitlines(True)[1:])
    _, punctuator = _restored(untimed, reference, format="tsv")
    assert len(punctuator.calls) == 3  # no start column: each row a text of its own


@pytest.mark.parametrize("content, documents", [
    ("start,text\n0,a\n1,b\n2,c\n", [[0, 1, 2]]),
    ("Start_Time,text\n00:00:01.5,a\n00:01:00,b\n1:00:00,c\n", [[0, 1, 2]]),
    ("begin,text\n5,a\n1,b\n2,c\n", [[0], [1, 2]]),  # the time goes back: another recording
    ("start,speaker,text\n0,A,a\n1,A,b\n2,B,c\n3,A,d\n", [[0, 1], [2], [3]]),
    ("call_id,start,text\n7,0,a\n7,1,b\n8,2,c\n", [[0, 1], [2]]),
    ("start,text\n0,a\nsoon,b\n1,c\n\n0.5,d\n", [[0, 1, 2], [3]]),  # unread time: skipped
    ("id,speaker,text\n1,A,a\n2,A,b\n", None),  # no start column
])
def test_a_table_with_a_start_column_is_cut_into_texts_by_speaker_recording_and_time(
        content, documents):
    assert formats.loads(content, "csv").meta.get("documents") == documents


def test_a_streamed_table_of_segments_flows_across_rows_within_a_chunk():
    from punctum.formats.tables import stream_table

    reference = "So what do you think about the new plan? I think it is great."
    punctuator = ScriptedPunctuator(reference)
    pieces = stream_table(io.StringIO(WHISPER_TSV, newline=""), "tsv", "t",
                          lambda t: formats.restore_transcript(t, punctuator))
    assert "".join(pieces) == _restored(WHISPER_TSV, reference, format="tsv")[0]
    assert punctuator.calls == [normalize(reference)]


def test_a_changed_row_is_written_in_the_quoting_of_the_file():
    content = '"id","text"\r\n"1","so what now"\r\n'
    out, _ = _restored(content, "So, what now?")
    assert out == '"id","text"\r\n"1","So, what now?"\r\n'
    out, _ = _restored('id;text\n1;so what now\n', "So, what now?")
    assert out == 'id;text\n1;So, what now?\n'  # a comma needs no quotes between semicolons


def test_the_restored_text_can_go_to_a_new_column():
    out, _ = _restored(CALLS, output_key="restored")
    lines = out.split("\n")
    assert lines[0] == "call,speaker,start,text,restored"
    assert lines[1] == '1,agent,0.0,hello thank you for calling,"Hello, thank you for calling."'
    assert lines[4] == "2,agent,0.0,,"  # the short row is filled out to the new column
    with pytest.raises(ValueError, match="already has a 'speaker' column"):
        _restored(CALLS, output_key="speaker")
    assert _restored(CALLS, output_key="text")[0] == _restored(CALLS)[0]
    tsv = CALLS.replace(",", "\t")
    with pytest.raises(ValueError, match="TSV header cannot hold"):
        _restored(tsv, format="tsv", output_key="new\tkey")
    assert _restored(CALLS, output_key="new,key")[0].startswith(
        'call,speaker,start,text,"new,key"\n')  # CSV quotes it


def test_the_text_column_is_found_by_name_or_given():
    transcript = formats.loads("ID,Speaker,Utterance\n1,a,so what\n", "csv")
    assert transcript.meta["text_key"] == "Utterance"
    assert [c.text for c in transcript.cues] == ["so what"]
    transcript = formats.loads("id,text,words\n1,x,so what\n", "csv", text_key="words")
    assert [c.text for c in transcript.cues] == ["so what"]
    with pytest.raises(ValueError, match=r"t\.csv:2: no text column \(columns: 'id', 'words'\); "
                                         r"name the column to restore \(--text-key\)"):
        formats.loads("\nid,words\n1,so\n", "csv", "t.csv")
    with pytest.raises(ValueError, match=r"t\.csv:1: no 'body' column"):
        formats.loads("id,text\n", "csv", "t.csv", text_key="body")


def test_tsv_cells_are_split_at_tabs_without_quoting():
    content = 'path\tsentence\na.mp3\t"so" what\tnow\n'
    transcript = formats.loads(content, "tsv")
    assert [c.text for c in transcript.cues] == ['"so" what']
    out, _ = _restored(content, 'So, what?', format="tsv")
    assert out == 'path\tsentence\na.mp3\t"So", what?\tnow\n'


def test_a_broken_csv_row_is_an_error_naming_its_line():
    with pytest.raises(ValueError, match=r"x\.csv:3: not a readable CSV row"):
        formats.loads('id,text\n1,ok\n2,"never closed\n3,ok\n4,ok\n', "csv", "x.csv")
    with pytest.raises(ValueError, match=r"x\.csv:2: .*a carriage return inside a cell"):
        formats.loads('id,text\n1,so\rwhat\n', "csv", "x.csv")


def test_a_rewritten_row_quotes_line_breaks_and_keeps_every_other_byte():
    content = 'id,note,text\r\n1,"line1\nline2",so what now\r\n2,"a\nb",ok\r\n'
    out, _ = _restored(content, "So, what now? Ok.")
    assert out == content.replace("so what now", '"So, what now?"').replace(",ok", ",Ok.")
    out, _ = _restored('id,text\n1,"so\nwhat now"\n', "So, what now?")
    assert out == 'id,text\n1,"So,\nwhat now?"\n'
    assert [c.text for c in formats.loads(out, "csv").cues] == ["So,\nwhat now?"]
    mixed = 'id,text\r\n1,so what now\n2,ok\r\n'  # each row keeps its own line ending
    assert _restored(mixed, "So, what now? Ok.")[0] == mixed.replace(
        "so what now", '"So, what now?"').replace(",ok", ",Ok.")


def test_cells_beyond_the_header_move_right_of_a_new_column():
    out, _ = _restored('id,text\n1,so what now,EXTRA\n', "So, what now?", output_key="out")
    assert out == 'id,text,out\n1,so what now,"So, what now?",EXTRA\n'


def test_numbers_stay_bare_where_the_file_quotes_only_text():
    content = '"","id","text"\n"1",101,"so what now"\n"2",1.50,"ok"\n'
    out, _ = _restored(content, "So, what now? Ok.")
    assert out == '"","id","text"\n"1",101,"So, what now?"\n"2",1.50,"Ok."\n'


def test_a_column_name_given_matches_with_or_without_its_spaces():
    transcript = formats.loads("id,Text \n1,so what\n", "csv", text_key="Text")
    assert [c.text for c in transcript.cues] == ["so what"]
    with pytest.raises(ValueError, match=r"columns: 'id', 'Text '"):
        formats.loads("id,Text \n", "csv", text_key="Body")


def test_the_delimiter_is_the_one_every_first_line_holds():
    transcript = formats.loads("id,a|b|c|d,text\n1,x,so what\n", "csv")
    assert transcript.meta["table"].delimiter == ","
    assert [c.text for c in transcript.cues] == ["so what"]


def test_a_table_built_in_code_is_written_with_every_row():
    cues = tuple(formats.Cue(None, None, formats.split_tokens(text))
                 for text in ["Hello, world.", "", "A\nb"])
    written = formats.dumps(formats.Transcript("csv", cues))
    assert [c.text for c in formats.loads(written, "csv").cues] == ["Hello, world.", "", "A\nb"]


def test_restore_cli_reads_and_writes_tables(tmp_path, capsys, tiny_artifact):
    path = _write(tmp_path, "calls.csv.gz", "")
    path.write_bytes(gzip.compress(CALLS.encode()))
    out = tmp_path / "out.csv"
    assert main(["restore", "-i", str(path), "-o", str(out), "-m", str(tiny_artifact),
                 "--output-key", "restored"]) == 0
    lines = out.read_text().split("\n")
    assert lines[0] == "call,speaker,start,text,restored"
    assert [line.split(",")[:3] for line in lines[1:3]] == [["1", "agent", "0.0"],
                                                          ["1", "customer", "3.2"]]
    assert main(["restore", "-i", str(path), "--to", "text", "-m", str(tiny_artifact)]) == 0
    texts = capsys.readouterr().out.split("\n")
    # a line for each text: a speaker's turn in a call (call 2's agent: a row without text
    # and one with, one turn)
    assert len(texts) == 4 and texts[3] == "" and all(texts[:3])
    srt = _write(tmp_path, "a.srt", "1\n00:00:00,000 --> 00:00:01,000\nso\n")
    assert main(["restore", "-i", str(srt), "--text-key", "x", "-m", str(tiny_artifact)]) == 2
    assert "for NeMo manifests and CSV/TSV tables (--text-key also for TextGrid and ELAN " \
        "tiers), not srt input" in capsys.readouterr().err
    assert main(["restore", "-i", str(path), "--to", "srt", "-m", str(tiny_artifact)]) == 2
    assert "csv input has no timings" in capsys.readouterr().err
    assert main(["restore", "-i", str(path), "--to", "json", "-m", str(tiny_artifact)]) == 2
    assert "cannot write Whisper JSON (--to json)" in capsys.readouterr().err


@pytest.mark.parametrize("sample", sorted(ROUND_TRIPS))
def test_a_table_streamed_in_chunks_is_the_table_restored_whole(sample):
    from punctum.formats.tables import stream_table

    content = ROUND_TRIPS[sample].removeprefix("\ufeff")
    format = "tsv" if sample == "tsv" else "csv"
    words = formats.loads(content, format).tokens
    reference = " ".join(t.text.strip('"') for t in words if t.text) + "."
    whole, _ = _restored(content, reference, format=format, output_key="out")
    lines = list(io.StringIO(content, newline=""))  # as a file is read: endings kept
    punctuator = ScriptedPunctuator(reference)
    for chunk_words in (1, 3, 1000):
        pieces = stream_table(lines, format, "t", lambda t: formats.restore_transcript(
            t, punctuator), output_key="out", chunk_words=chunk_words)
        assert "".join(pieces) == whole


def test_restore_cli_streams_a_table_keeping_its_bom_and_line_ends(tmp_path, tiny_artifact):
    path = _write(tmp_path, "calls.csv", "\ufeffid,text\r\n1,so what\r\n\r\n2,now\r\n")
    out = tmp_path / "out.csv"
    assert main(["restore", "-i", str(path), "-o", str(out), "-m", str(tiny_artifact)]) == 0
    written = out.read_bytes().decode()
    assert written.startswith("\ufeffid,text\r\n1,") and written.count("\r\n") == 4
    assert [normalize(c.text) for c in formats.read(out).cues] == [["so", "what"], ["now"]]
    bad = _write(tmp_path, "bad.csv", 'id,text\n1,ok\n2,"never closed\n')
    assert main(["restore", "-i", str(bad), "-o", str(tmp_path / "b.csv"),
                 "-m", str(tiny_artifact)]) == 2
    assert not (tmp_path / "b.csv").exists()  # nothing half written


def test_a_table_from_stdin_keeps_its_bom_and_line_ends(tiny_artifact, capsys, monkeypatch):
    import io
    import sys

    data = '\ufeffid,note,text\r\n1,"a\r\nb",so what\r\n'.encode()
    piped = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)))  # a pipe: it can peek
    monkeypatch.setattr(sys, "stdin", piped)
    assert main(["restore", "--format", "csv", "-m", str(tiny_artifact)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('\ufeffid,note,text\r\n1,"a\r\nb",') and out.endswith("\r\n")


def test_the_delimiter_is_found_past_line_breaks_inside_quoted_cells():
    content = 'id;text\n1;"hello there\nhow are you"\n2;fine thanks\n'
    transcript = formats.loads(content, "csv")
    assert transcript.meta["table"].delimiter == ";"
    assert [c.text for c in transcript.cues] == ["hello there\nhow are you", "fine thanks"]


def test_a_folder_of_tables_is_restored_with_its_output_key(tmp_path, tiny_artifact):
    source = tmp_path / "in"
    source.mkdir()
    _write(source, "calls.csv", CALLS)
    _write(source, "corpus.tsv", "path\tsentence\na.mp3\tso what now\n")
    assert main(["restore", "--input-dir", str(source), "--output-dir", str(tmp_path / "out"),
                 "--output-key", "restored", "-m", str(tiny_artifact), "--no-progress"]) == 0
    calls = (tmp_path / "out" / "calls.csv").read_text().split("\n")
    assert calls[0] == "call,speaker,start,text,restored" and calls[4] == "2,agent,0.0,,"
    corpus = (tmp_path / "out" / "corpus.tsv").read_text().split("\n")
    assert corpus[0] == "path\tsentence\trestored" and corpus[1].startswith(
        "a.mp3\tso what now\t")
    for flag in (["--stream"], ["--line-buffered"]):
        assert main(["restore", "--input-dir", str(source), "--output-dir",
                     str(tmp_path / "o2"), *flag]) == 2
        assert main(["batch", "--input-dir", str(source), "--output-dir",
                     str(tmp_path / "o3"), *flag]) == 2


def test_subtitles_are_known_gzipped_by_their_bytes(tmp_path, tiny_artifact, capsys):
    srt = "1\n00:00:00,000 --> 00:00:01,000\nso what\n"
    plain = _write(tmp_path, "plain.srt.gz", srt)  # named .gz, not gzipped
    zipped = tmp_path / "zipped.srt"
    zipped.write_bytes(gzip.compress(srt.encode()))
    for path in (plain, zipped):
        assert main(["restore", "-i", str(path), "-m", str(tiny_artifact)]) == 0
        assert capsys.readouterr().out.startswith("1\n00:00:00,000 --> 00:00:01,000\n")
