"""TTML and DFXP subtitles (`formats.ttml`): read, restored, written back, converted."""

import io

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions

# A document written for these tests: a div that starts at 10 s, clock times in frames,
# offset times, a span, a line break and character references.
TTML = ('<?xml version="1.0" encoding="UTF-8"?>\n'
        '<tt xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling" '
        'xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:frameRate="25">\n'
        '  <head><styling><style xml:id="s1" tts:color="white"/></styling></head>\n'
        '  <body style="s1">\n    <div begin="10s">\n'
        '      <p begin="00:00:01.000" end="00:00:03.500">so where are you going<br/>'
        'i think</p>\n'
        '      <p begin="00:00:03:25" dur="2s"><span tts:color="yellow">we met</span> at '
        'tom &amp; ann&apos;s</p>\n'
        '      <p begin="70.5s" end="72000ms"/>\n'
        '      <p>no times here</p>\n'
        '    </div>\n  </body>\n</tt>\n')
REFERENCE = "So where are you going? I think. We met at Tom & Ann's. No times here."


def _restored(content: str, reference: str = REFERENCE):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name="episode.ttml")
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_ttml_is_read_by_extension_content_and_pipe(tmp_path):
    transcript = formats.loads(TTML, "auto", name="episode.ttml")
    assert transcript.format == "ttml"
    assert [(c.start, c.end) for c in transcript.cues] == [(11.0, 13.5), (14.0, 16.0),
                                                           (None, None)]
    assert formats.detect_format(_write(tmp_path, "e.dfxp", TTML)) == "ttml"
    assert formats.detect_format(_write(tmp_path, "e.txt", TTML)) == "ttml"
    assert formats.sniff_format(TTML) == "ttml"
    assert formats.sniff_lines(io.StringIO(TTML))[0] == "ttml"


def test_only_the_paragraph_texts_change():
    assert formats.dumps(formats.loads(TTML, "ttml")) == TTML
    restored, punctuator = _restored(TTML)
    assert punctuator.calls == [["so", "where", "are", "you", "going", "i", "think", "we",
                                 "met", "at", "tom", "&", "ann's", "no", "times", "here"]]
    assert formats.dumps(restored) == TTML.replace(
        "so where are you going<br/>i think", "So where are you going?<br/>I think.").replace(
        "we met</span> at tom &amp; ann&apos;s", "We met</span> at Tom &amp; Ann&apos;s.").replace(
        "no times here", "No times here.")


def test_converted_to_srt_with_line_breaks_and_references_decoded():
    restored, _ = _restored(TTML.replace("      <p>no times here</p>\n", ""),
                            REFERENCE.replace(" No times here.", ""))
    assert formats.dumps(formats.convert(restored, "srt")) == (
        "1\n00:00:11,000 --> 00:00:13,500\nSo where are you going?\nI think.\n\n"
        "2\n00:00:14,000 --> 00:00:16,000\nWe met at Tom & Ann's.\n")
    with pytest.raises(ValueError, match="has no times"):
        formats.convert(_restored(TTML)[0], "srt")


@pytest.mark.parametrize("value, seconds", [
    ("00:00:01.5", 1.5), ("01:02:03", 3723.0), ("00:00:01:12", 1.48), ("2.5s", 2.5),
    ("1500ms", 1.5), ("50f", 2.0), ("1.5m", 90.0), ("0.5h", 1800.0)])
def test_time_expressions(value, seconds):
    document = TTML.replace('begin="00:00:01.000" end="00:00:03.500"',
                            f'begin="{value}" end="99999s"').replace('begin="10s"', "")
    assert formats.loads(document, "ttml").cues[0].start == pytest.approx(seconds)


def test_ticks_and_prefixed_elements():
    ebu = ('<tt:tt xmlns:tt="http://www.w3.org/ns/ttml" '
           'xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:tickRate="10000000">'
           '<tt:body><tt:div><tt:p begin="10000000t" end="25000000t">so what<tt:br/>now'
           '</tt:p></tt:div></tt:body></tt:tt>')
    transcript = formats.loads(ebu, "auto", name="ebu.xml")
    assert transcript.format == "ttml"
    assert [(c.start, c.end) for c in transcript.cues] == [(1.0, 2.5)]
    restored, _ = _restored(ebu, "So what? Now.")
    assert formats.dumps(formats.convert(restored, "srt")).endswith("So what?\nNow.\n")


@pytest.mark.parametrize("content, message", [
    ("<tt><body><p begin='1s' end='2s'>hi</body></tt>", r"x.ttml:1: not well-formed XML"),
    ("<tt><body><p begin='soon' end='2s'>hi</p></body></tt>", r"x.ttml:1: bad time 'soon'"),
    ("<tt><body><p begin='5s' end='2s'>hi</p></body></tt>", r"x.ttml:1: the paragraph ends"),
    ("<tt>\n<body>\n<p begin='1s' end='" + "9" * 12 + "s'>hi</p></body></tt>",
     r"x.ttml:3: a time beyond 1e")])
def test_malformed_documents_get_a_one_line_error_naming_the_line(content, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(content, "ttml", name="x.ttml")
    assert "\n" not in str(error.value)


def test_cli_restores_ttml_and_converts_it(tmp_path, capsys, tiny_artifact):
    path = _write(tmp_path, "e.ttml", TTML.replace("      <p>no times here</p>\n", ""))
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "--to", "srt",
                 "-o", str(tmp_path / "e.srt")]) == 0
    assert (tmp_path / "e.srt").read_text().count(" --> ") == 2
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "-o",
                 str(tmp_path / "out.ttml")]) == 0
    written = (tmp_path / "out.ttml").read_text()
    assert written.startswith('<?xml version="1.0"') and written.count("<p ") == 3


def _document(body: str, root: str = "<tt>") -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{root}<body><div>{body}</div></body></tt>\n'


def test_comments_cdata_and_tags_over_lines_stay_as_written():
    document = _document(
        '<!-- old: <div begin="10s"> <p begin="0s" end="1s">old draft</p> -->'
        '<p begin="1s" end="2s">so <!-- fix\nthis --> what <![CDATA[my friend]]> now</p>'
        '<p begin="2s" end="3s" title="a>b"><span tts:color="white"\n  tts:x="1">we '
        'see</span></p>', '<tt xmlns:tts="http://www.w3.org/ns/ttml#styling">')
    transcript = formats.loads(document, "ttml")
    assert [(c.start, c.end) for c in transcript.cues] == [(1.0, 2.0), (2.0, 3.0)]
    restored, punctuator = _restored(document, "So what, my friend, now? We see.")
    assert punctuator.calls == [["so", "what", "my", "friend", "now", "we", "see"]]  # CDATA:
    assert formats.dumps(restored) == document.replace(  # text, in its brackets
        ">so <!--", ">So <!--").replace("what <![CDATA[my friend]]> now<",
                                        "what, <![CDATA[my friend,]]> now?<").replace(
        '"1">we \nsee<'.replace("\n", ""), '"1">We see.<')


def test_a_dialogue_dash_after_a_line_break_stays():
    document = _document('<p begin="1s" end="2s"><span>-where are you going</span><br/>'
                         '<span>-home</span></p>')
    restored, _ = _restored(document, "Where are you going? Home.")
    assert "<span>-Where are you going?</span><br/><span>-Home.</span>" in formats.dumps(
        restored)
    assert formats.dumps(formats.convert(restored, "srt")).endswith(
        "-Where are you going?\n-Home.\n")


def test_begin_defaults_to_zero_and_seq_containers_are_refused():
    assert formats.loads(_document('<p end="2s">hi</p>'), "ttml").cues[0].start == 0.0
    with pytest.raises(ValueError, match=r"x.ttml:2: a sequential time container"):
        formats.loads(_document('<p dur="1s">hi</p>').replace(
            "<div>", '<div timeContainer="seq">'), "ttml", name="x.ttml")


def test_utf16_ttml_and_a_pipe_that_opens_with_a_comment(tmp_path):
    document = TTML.replace('encoding="UTF-8"', 'encoding="UTF-16"')
    path = tmp_path / "u16.ttml"
    path.write_bytes(document.encode("utf-16"))
    assert len(formats.read(path).cues) == 3
    commented = "<!-- generated -->\n" + TTML.split("\n", 1)[1]
    assert formats.sniff_lines(io.StringIO(commented))[0] == "ttml"


def test_other_xml_is_refused_by_name(tmp_path):
    srv3 = '<?xml version="1.0" encoding="utf-8" ?><timedtext format="3"><body>' \
           '<p t="160" d="2170">where are you going</p></body></timedtext>\n'
    with pytest.raises(ValueError, match="neither TTML/DFXP nor ELAN"):
        formats.read(_write(tmp_path, "v.srv3", srv3))
    assert formats.detect_format(_write(tmp_path, "v.txt", srv3)) == "text"  # (as it says)


def test_roll_up_captions_are_read_once_and_written_alike():
    document = _document(
        '<p begin="0s" end="2s">so what do you</p>'
        '<p begin="2s" end="4s">so what do you<br/>think about this</p>'
        '<p begin="4s" end="6s">think about this<br/>i think it is good</p>'
        '<p begin="6s" end="8s">i think it is good<br/>we should go</p>')
    restored, punctuator = _restored(
        document, "So what do you think about this? I think it is good. We should go.")
    assert punctuator.calls == [["so", "what", "do", "you", "think", "about", "this", "i",
                                 "think", "it", "is", "good", "we", "should", "go"]]
    written = formats.dumps(restored)
    assert written.count("think about this?") == 2 and written.count("I think it is good.") == 2
    assert formats.dumps(formats.convert(restored, "srt")).count("think about this?") == 1
