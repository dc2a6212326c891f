"""ELAN documents (`formats.eaf`): read, restored, written back, converted."""

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions


def _eaf(tiers: list[tuple[str, str | None, list[tuple[str, str]]]],
         slots: dict[str, int | None]) -> str:
    """An ELAN document written for these tests: tiers of (TIER_ID, PARENT_REF, annotations
    as (slot pair "ts1 ts2" or a referred annotation id "=a1", value))."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<ANNOTATION_DOCUMENT FORMAT="3.0" VERSION="3.0">',
             '    <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds"/>', "    <TIME_ORDER>"]
    lines += [f'        <TIME_SLOT TIME_SLOT_ID="{k}"' + (f' TIME_VALUE="{v}"/>' if v is not None
                                                          else "/>") for k, v in slots.items()]
    lines.append("    </TIME_ORDER>")
    n = 0
    for tier, parent, annotations in tiers:
        lines.append(f'    <TIER LINGUISTIC_TYPE_REF="lt" TIER_ID="{tier}"'
                     + (f' PARENT_REF="{parent}">' if parent else ">"))
        for where, value in annotations:
            n += 1
            if where.startswith("="):
                head = f'<REF_ANNOTATION ANNOTATION_ID="a{n}" ANNOTATION_REF="{where[1:]}">'
                tail = "</REF_ANNOTATION>"
            else:
                one, two = where.split()
                head = (f'<ALIGNABLE_ANNOTATION ANNOTATION_ID="a{n}" TIME_SLOT_REF1="{one}" '
                        f'TIME_SLOT_REF2="{two}">')
                tail = "</ALIGNABLE_ANNOTATION>"
            body = f"<ANNOTATION_VALUE>{value}</ANNOTATION_VALUE>" if value else \
                "<ANNOTATION_VALUE/>"
            lines.append(f"        <ANNOTATION>{head}{body}{tail}</ANNOTATION>")
        lines.append("    </TIER>")
    lines += ['    <LINGUISTIC_TYPE LINGUISTIC_TYPE_ID="lt" TIME_ALIGNABLE="true"/>',
              "</ANNOTATION_DOCUMENT>"]
    return "\n".join(lines) + "\n"


SLOTS = {"ts1": 1000, "ts2": 3500, "ts3": 4000, "ts4": 6000, "ts5": None}
DOCUMENT = _eaf([("Ann", None, [("ts1 ts2", "so where are you going"), ("ts4 ts5", "")]),
                 ("Ann-fr", "Ann", [("=a1", "alors tu vas ou")]),
                 ("Bob", None, [("ts3 ts4", "we met tom &amp; ann"), ("ts4 ts5", "i see")]),
                 ("notes", None, [("ts1 ts4", "check the overlap")])], SLOTS)


def _restored(content: str, reference: str, tier: str | None = None):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name="talk.eaf", text_key=tier)
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_eaf_is_read_by_extension_and_content(tmp_path):
    transcript = formats.loads(DOCUMENT, "auto", name="talk.eaf")
    assert transcript.format == "eaf"
    assert [(c.start, c.end, c.text) for c in transcript.cues] == [
        (1.0, 3.5, "so where are you going"), (4.0, 6.0, "we met tom &amp; ann"),
        (6.0, None, "i see")]  # an unaligned slot leaves its annotation untimed
    assert transcript.meta["documents"] == [[0], [1, 2]]
    assert formats.detect_format(_write(tmp_path, "t.eaf", DOCUMENT)) == "eaf"
    assert formats.sniff_format(DOCUMENT) == "eaf"


def test_each_speakers_tier_is_a_text_and_only_its_values_change():
    assert formats.dumps(formats.loads(DOCUMENT, "eaf")) == DOCUMENT
    restored, punctuator = _restored(DOCUMENT, "So where are you going? We met Tom & Ann. "
                                               "I see.")
    assert sorted(punctuator.calls) == [["so", "where", "are", "you", "going"],
                                        ["we", "met", "tom", "&", "ann", "i", "see"]]
    assert formats.dumps(restored) == DOCUMENT.replace(
        ">so where are you going<", ">So where are you going?<").replace(
        ">we met tom &amp; ann<", ">We met Tom &amp; Ann.<").replace(">i see<", ">I see.<")
    assert formats.dumps(formats.convert(restored, "text")) == (  # a line per turn, by time
        "[Ann]: So where are you going?\n[Bob]: We met Tom & Ann. I see.\n")
    assert formats.dumps(formats.convert(restored, "text", speakers=False)) == (
        "So where are you going?\nWe met Tom & Ann. I see.\n")  # a line per tier
    timed, _ = _restored(DOCUMENT.replace('TIME_SLOT_ID="ts5"/>',
                                          'TIME_SLOT_ID="ts5" TIME_VALUE="7000"/>'),
                         "So where are you going? We met Tom & Ann. I see.")
    assert formats.dumps(formats.convert(timed, "srt")) == (  # one timeline, speakers labelled
        "1\n00:00:01,000 --> 00:00:03,500\n[Ann]: So where are you going?\n\n"
        "2\n00:00:04,000 --> 00:00:06,000\n[Bob]: We met Tom & Ann.\n\n"
        "3\n00:00:06,000 --> 00:00:07,000\nI see.\n")
    assert formats.dumps(formats.convert(timed, "vtt")).count("<v Bob>") == 2


def test_the_tier_named_by_text_key():
    restored, punctuator = _restored(DOCUMENT, "Check the overlap.", tier="notes")
    assert punctuator.calls == [["check", "the", "overlap"]]
    assert formats.dumps(formats.convert(restored, "srt")) == (
        "1\n00:00:01,000 --> 00:00:06,000\nCheck the overlap.\n")
    with pytest.raises(ValueError, match="no tier named 'Cy' .*'Ann', 'Ann-fr', 'Bob'"):
        formats.loads(DOCUMENT, "eaf", name="talk.eaf", text_key="Cy")


@pytest.mark.parametrize("content, message", [
    ("<ANNOTATION_DOCUMENT><TIER></ANNOTATION_DOCUMENT>", r"t.eaf:1: not well-formed XML"),
    ("<OTHER/>", r"t.eaf: not an ELAN document \(its root is 'OTHER'"),
    (_eaf([], {"ts1": "soon"}), r"time slot 'ts1' has TIME_VALUE 'soon'"),
    (_eaf([("A", None, [("ts2 ts1", "hi")])], {"ts1": 1000, "ts2": 5000}),
     r"annotation 'a1' ends \(1 s\) before it starts \(5 s\)")])
def test_malformed_documents_get_a_one_line_error(content, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(content, "eaf", name="t.eaf")
    assert "\n" not in str(error.value)


def test_cli_restores_an_eaf_and_takes_text_key(tmp_path, capsys, tiny_artifact):
    path = _write(tmp_path, "t.eaf", DOCUMENT)
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "--to", "srt",
                 "--text-key", "Ann"]) == 0
    assert capsys.readouterr().out.startswith("1\n00:00:01,000 --> 00:00:03,500\n")
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "-o",
                 str(tmp_path / "out.eaf")]) == 0
    written = (tmp_path / "out.eaf").read_text()
    assert written.count("\n") == DOCUMENT.count("\n") and ">alors tu vas ou<" in written


def test_cdata_comments_and_a_doctype_stay_as_written():
    document = DOCUMENT.replace(
        ">so where are you going<", "><![CDATA[so where]]> are <!-- a\nnote --> you going<"
    ).replace("<HEADER", '<!-- <ANNOTATION_VALUE>old</ANNOTATION_VALUE> -->\n    <HEADER')
    document = document.replace("<ANNOTATION_DOCUMENT", "<!DOCTYPE x>\n<ANNOTATION_DOCUMENT", 1)
    assert formats.sniff_format(document) == "eaf"
    restored, punctuator = _restored(document, "So where are you going? We met Tom & Ann. "
                                               "I see.")
    assert ["so", "where", "are", "you", "going"] in punctuator.calls
    written = formats.dumps(restored)
    assert "><![CDATA[So where]]> are <!-- a\nnote --> you going?<" in written
    assert formats.loads(written, "eaf").cues  # (still well-formed)


def test_references_that_would_be_tags_stay_references_in_srt():
    document = DOCUMENT.replace("we met tom &amp; ann", "i said &lt;b&gt; hi").replace(
        'TIME_SLOT_ID="ts5"/>', 'TIME_SLOT_ID="ts5" TIME_VALUE="7000"/>')
    restored, _ = _restored(document, "I said <b> hi. I see.", tier="Bob")
    assert "I said &lt;b> hi." in formats.dumps(formats.convert(restored, "srt"))


def test_text_under_a_tier_of_record_ids_is_chosen_and_timed_by_its_parent():
    toolbox = _eaf([("ref@A", None, [("ts1 ts2", "kw_001"), ("ts3 ts4", "kw_002")]),
                    ("tx@A", "ref@A", [("=a1", "so where are you going"),
                                       ("=a2", "we met in town")])], SLOTS)
    transcript = formats.loads(toolbox, "eaf")
    assert [(c.start, c.end, c.text) for c in transcript.cues] == [
        (1.0, 3.5, "so where are you going"), (4.0, 6.0, "we met in town")]


def test_utf16_documents_are_written_back_declared_utf8(tmp_path):
    path = tmp_path / "u16.eaf"
    path.write_bytes(DOCUMENT.replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16"))
    transcript = formats.read(path)
    written = formats.dumps(transcript)
    assert written.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert formats.loads(written, "eaf").cues == transcript.cues


def test_resegmenting_several_speakers_tiers_asks_for_one(tmp_path, capsys, tiny_artifact):
    timed = DOCUMENT.replace('TIME_SLOT_ID="ts5"/>', 'TIME_SLOT_ID="ts5" TIME_VALUE="7000"/>')
    path = _write(tmp_path, "t.eaf", timed)
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "--to", "srt",
                 "--resegment"]) == 2
    assert "several speakers' tiers: give --text-key TIER" in capsys.readouterr().err
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "--to", "srt",
                 "--resegment", "--text-key", "Bob"]) == 0


def test_speakers_tiers_to_whisper_json_carry_whisperx_speakers():
    import json

    timed = DOCUMENT.replace('TIME_SLOT_ID="ts5"/>', 'TIME_SLOT_ID="ts5" TIME_VALUE="7000"/>')
    restored, _ = _restored(timed, "So where are you going? We met Tom & Ann. I see.")
    segments = json.loads(formats.dumps(formats.convert(restored, "whisper")))["segments"]
    assert [(s["start"], s["speaker"], s["text"]) for s in segments] == [
        (1.0, "Ann", " So where are you going?"), (4.0, "Bob", " We met Tom & Ann."),
        (6.0, "Bob", " I see.")]
    again = formats.loads(formats.dumps(formats.convert(restored, "whisper")), "whisper")
    assert [t.text for t in again.tokens][:2] == ["So", "where"]
    plain = json.loads(formats.dumps(formats.convert(restored, "whisper", speakers=False)))
    assert all("speaker" not in s for s in plain["segments"])


def test_the_conversation_keeps_each_speakers_order_and_short_replies():
    slots = {"ts1": 1000, "ts2": 2000, "ts3": None, "ts4": None, "ts5": 5000, "ts6": 6000,
             "ts7": 2500, "ts8": 3000, "ts9": 5500, "ts10": 5800}
    content = _eaf([("Ann", None, [("ts1 ts2", "one two three"), ("ts3 ts4", "four five six"),
                                   ("ts5 ts6", "seven eight nine")]),
                    ("Bob", None, [("ts7 ts8", "yes"), ("ts9 ts10", "ok")])], slots)
    restored, _ = _restored(content, "One two three four five six seven eight nine. Yes. OK.")
    assert formats.dumps(formats.convert(restored, "text")) == (
        "[Ann]: One two three four five six\n[Bob]: Yes.\n[Ann]: seven eight nine.\n"
        "[Bob]: OK.\n")  # an unaligned annotation follows the one before it; one-word replies
    unnamed = content.replace('TIER_ID="Ann"', 'TIER_ID="Ann [1]"')
    restored, _ = _restored(unnamed, "One two three four five six seven eight nine. Yes. OK.")
    assert formats.dumps(formats.convert(restored, "text")).splitlines()[:2] == [
        "One two three four five six", "[Bob]: Yes."]  # a name a label cannot hold: none
