"""JSON written back over the text it was read from (`punctum.formats.json_splice`)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from test_formats import ScriptedPunctuator

from punctum import formats
from punctum.formats.json_splice import splice

# What Vosk's C++ writer prints (KaldiRecognizer::Result): " : ", six decimals, "}, {".
VOSK = """{
  "result" : [{
      "conf" : 1.000000,
      "end" : 1.110000,
      "start" : 0.840000,
      "word" : "so"
    }, {
      "conf" : 0.953214,
      "end" : 1.530000,
      "start" : 1.110000,
      "word" : "what"
    }, {
      "conf" : 1.000000,
      "end" : 2.100000,
      "start" : 1.800000,
      "word" : "now"
    }],
  "text" : "so what now"
}"""


def _spliced(text: str, new) -> str | None:
    return splice(text, json.loads(text), new, lambda value: json.dumps(value, ensure_ascii=False))


def test_an_unchanged_value_keeps_every_byte():
    texts = [VOSK, '[1.50, 1e3, -0.0, NaN, -Infinity, true, null]\n', '  {"a" :{} ,"b":[ ]}  ',
             '{"w": "caf\\u00e9 \\/ \\"q\\"", "t": [[1,2],[3]]}', '"only a string"', "7"]
    for text in texts:
        assert _spliced(text, json.loads(text)) == text


def test_a_changed_string_is_the_only_change():
    value = json.loads(VOSK)
    value["result"][0]["word"] = "So,"
    value["text"] = "So, what now?"
    out = _spliced(VOSK, value)
    changed = [(a, b) for a, b in zip(VOSK.split("\n"), out.split("\n")) if a != b]
    assert changed == [('      "word" : "so"', '      "word" : "So,"'),
                       ('  "text" : "so what now"', '  "text" : "So, what now?"')]


def test_a_string_escaped_as_ascii_stays_escaped():
    out = _spliced('{"w": "caf\\u00e9", "v": "caf\u00e9"}', {"w": "Caf\u00e9.", "v": "Caf\u00e9."})
    assert out == '{"w": "Caf\\u00e9.", "v": "Caf\u00e9."}'


def test_another_shape_is_not_spliced():
    text = '{"segments": [{"id": 0}], "n" : 1.0}'
    for new in [{"segments": [{"id": 0}, {"id": 1}], "n": 1.0}, {"n": 1.0},
                {"n": 1.0, "segments": [{"id": 0}]}, {"segments": {"id": 0}, "n": 1.0},
                {"segments": [[]], "n": 1.0}, {"segments": [{"id": 0}], "n": 1.0, "x": []}]:
        assert _spliced(text, new) is None
    assert _spliced('{"a": "x", "a": "y"}', {"a": "z"}) is None  # duplicate keys
    assert _spliced('{"a": "x", "a": "y"}', {"a": "y"}) == '{"a": "x", "a": "y"}'  # unchanged
    deep = "[" * 5000 + '"x"' + "]" * 5000
    value: list = ["y"]
    for _ in range(4999):
        value = [value]
    assert splice(deep, value, value, json.dumps) is None  # too deep to walk


def test_keys_added_after_an_objects_last_scalar_are_written_in_its_spacing():
    assert _spliced('{"segments": [{"id": 0}], "n" : 1.0}',
                    {"segments": [{"id": 0, "x": 1}], "n": 1.0}) == (
        '{"segments": [{"id": 0, "x": 1}], "n" : 1.0}')
    pretty = '{\n    "word": "so",\n    "start": 0.080\n}'
    assert _spliced(pretty, {"word": "so", "start": 0.08, "punctuated_word": "So,"}) == (
        '{\n    "word": "so",\n    "start": 0.080,\n    "punctuated_word": "So,"\n}')
    assert _spliced('{"a" : [1]}', {"a": [1], "b": 2}) is None  # after a container: afresh
    assert _spliced('{}', {"b": 2}) is None
    assert _spliced('[{"id":0}]', [{"id": 0, "x": 1}]) == '[{"id":0,"x":1}]'  # compact


def test_a_changed_number_or_literal_is_written_in_place():
    text = '{"a": 1.000000, "b": true, "c": [1, 2.50]}'
    new = {"a": 1.5, "b": None, "c": [1.0, 2.5]}
    assert _spliced(text, new) == '{"a": 1.5, "b": null, "c": [1.0, 2.50]}'


# Random JSON values, written by Python in random styles, then changed in random strings.
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                     st.floats(allow_nan=False), st.text(max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=20)
_STYLES = st.fixed_dictionaries({
    "indent": st.sampled_from([None, 0, 2, "\t"]), "ensure_ascii": st.booleans(),
    "separators": st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")])})


def _changed(value, suffix: str):
    """`value` with `suffix` added to every string value (not to keys)."""
    if isinstance(value, str):
        return value + suffix
    if isinstance(value, list):
        return [_changed(v, suffix) for v in value]
    if isinstance(value, dict):
        return {k: _changed(v, suffix) for k, v in value.items()}
    return value


@settings(max_examples=200)
@given(_VALUES, _STYLES, st.sampled_from(["", ".", "?\u00e9"]))
def test_random_json_round_trips_and_takes_its_changes(value, style, suffix):
    text = json.dumps(value, **style)
    assert splice(text, json.loads(text), value, json.dumps) == text
    new = _changed(value, suffix)
    out = splice(text, json.loads(text), new, json.dumps)
    assert out is not None and json.loads(out) == new
    if not suffix:
        assert out == text


def test_a_vosk_result_restored_differs_only_in_its_words_and_text():
    restored = formats.restore_transcript(formats.loads(VOSK + "\n", "vosk"),
                                          ScriptedPunctuator("So what now?"))
    out = formats.dumps(restored)
    assert out == VOSK.replace('"now"', '"now?"').replace(
        '"so what now"', '"So what now?"').replace('"so"', '"So"') + "\n"


def test_json_lines_keep_their_blank_lines_and_line_ends():
    content = ('{"audio_filepath" : "a.wav", "duration": 1.50, "pred_text": "so what"}\r\n\r\n'
               '{"audio_filepath" : "b.wav", "duration": 2.00, "pred_text": "now"}\r\n')
    restored = formats.restore_transcript(formats.loads(content, "nemo"),
                                          ScriptedPunctuator("So what? Now."))
    assert formats.dumps(restored) == content.replace('"so what"', '"So what?"').replace(
        '"now"', '"Now."')


def test_records_edited_in_code_are_written_with_their_edits():
    text = '{"result" : [{"conf" : 1.000000, "end" : 1.0, "start" : 0.5, "word" : "hi"}]}\n'
    transcript = formats.loads(text, "vosk")
    transcript.cues[0].tokens[0].extra["conf"] = 0.25  # the record the transcript holds
    assert formats.dumps(transcript) == text.replace("1.000000", "0.25")


def test_only_escapes_of_characters_outside_ascii_keep_a_string_escaped():
    assert _spliced('{"p": "C:\\\\users"}', {"p": "C:\\users \u00bf"}) == (
        '{"p": "C:\\\\users \u00bf"}')  # "\\u" there is a backslash, then "u"
    nan = '{"x": NaN, "x": NaN, "w": "a"}'
    assert splice(nan, json.loads(nan), json.loads(nan), json.dumps) == nan


def test_whisper_sphinx_and_pipeline_json_differ_only_in_their_texts():
    whisper = ('{"text": " so what", "segments": [{"id": 0, "start": 0.000, "end": 1.50, '
               '"text": " so what", "words": [{"word": " so", "start": 0.00, "end": 0.5, '
               '"probability": 0.900}, {"word": " what", "start": 0.5, "end": 1.50, '
               '"probability": 1.0}]}], "language": "en"}\n')
    sphinx = '{"b":0.000,"d":1.500,"p":1.000,"t":"so what","w":[{"b":0.000,"d":0.500,' \
             '"p":1.000,"t":"so"},{"b":0.500,"d":1.000,"p":1.000,"t":"what"}]}\n'
    pipeline = ('{"text": " so what", "chunks": [{"text": " so", "timestamp": [0.00, 0.50]}, '
                '{"text": " what", "timestamp": [0.50, 1.50]}]}\n')
    for content, format in [(whisper, "whisper"), (sphinx, "sphinx"), (pipeline, "hf")]:
        restored = formats.restore_transcript(formats.loads(content, format),
                                              ScriptedPunctuator("So what?"))
        out = formats.dumps(restored)
        assert out == content.replace("so what", "So what?").replace(
            '"so"', '"So"').replace('" so"', '" So"').replace('"what"', '"what?"').replace(
            '" what"', '" what?"'), format
