"""The HTTP API: routes, limits (413/422/429/503), dynamic batching, config."""

import asyncio
import json
import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from punctum.cli import main  # noqa: E402
from punctum.runtime import Punctuator, RestoreOptions  # noqa: E402
from punctum.serve import ServeConfig, create_app, load_config  # noqa: E402
from punctum.serve.batcher import DynamicBatcher, QueueFull  # noqa: E402
from punctum.text import normalize  # noqa: E402

SRT = ("1\n00:00:01,000 --> 00:00:02,500\nwell i went to the market\n\n"
       "2\n00:00:02,500 --> 00:00:04,000\nand bought some bread did you\n")


@pytest.fixture(scope="module")
def bundled():
    return Punctuator.load()


@pytest.fixture(scope="module")
def client(bundled):
    config = ServeConfig(max_body_bytes=20_000, max_chars=2_000, max_items=8)
    with TestClient(create_app(config, {"en-tiny": bundled})) as test_client:
        yield test_client


def words_of(text: str) -> list[str]:
    return normalize(text)


def test_the_lines_of_a_text_stay_lines(client, bundled):
    text = "hello there\nso what do you think\n\nbye now"
    response = client.post("/v1/restore", json={"text": text})
    assert response.status_code == 200
    assert response.json()["text"] == "\n".join(bundled.restore(line)
                                                 for line in text.split("\n"))
    crlf = client.post("/v1/restore", json={"text": text.replace("\n", "\r\n")}).json()
    assert crlf["text"] == response.json()["text"].replace("\n", "\r\n")
    cr = client.post("/v1/restore", json={"text": text.replace("\n", "\r")}).json()
    assert cr["text"] == response.json()["text"].replace("\n", "\r")  # classic Mac OS
    detailed = client.post("/v1/restore", json={"texts": [text], "words": True}).json()
    assert detailed["texts"] == [response.json()["text"]]
    assert [w["word"] for w in detailed["details"][0]["words"]] == words_of(text)


def test_restore_one_text_keeps_words(client):
    text = "so what do you think i think it's great"
    response = client.post("/v1/restore", json={"text": text})
    assert response.status_code == 200
    body = response.json()
    assert body["model"] == "en-tiny" and body["format"] == "text"
    assert words_of(body["text"]) == text.split()
    assert body["text"] != text  # marks or case were restored


def test_restore_list_in_order_and_matches_library(client, bundled):
    texts = ["hello there how are you", "", "we met in new york last week", "ok"]
    response = client.post("/v1/restore", json={"texts": texts})
    assert response.status_code == 200
    assert response.json()["texts"] == bundled.restore_batch(texts)


def test_words_option_answers_labels_like_the_cli(client, bundled):
    texts = ["hello there how are you", "we met in new york"]
    response = client.post("/v1/restore", json={"texts": texts, "words": True})
    assert response.status_code == 200
    body = response.json()
    assert body["texts"] == bundled.restore_batch(texts)
    expected = [r.to_dict() for r in bundled.restore_detailed(texts)]
    assert [d["words"] for d in body["details"]] == [e["words"] for e in expected]
    assert [w["word"] for w in body["details"][1]["words"]] == texts[1].split()
    plain = client.post("/v1/restore", json={"text": texts[0]}).json()
    assert "details" not in plain
    refused = client.post("/v1/restore", json={"text": SRT, "format": "srt", "words": True})
    assert refused.status_code == 422 and "words" in refused.json()["error"]["message"]


def test_paragraphs_option_restores_lines_as_one_text_like_the_cli(client, bundled):
    from punctum import formats

    text = "so what do you think about\r\nthe new plan i think it is\r\ngreat\r\n\r\nok thanks"
    response = client.post("/v1/restore", json={"text": text, "paragraphs": True})
    assert response.status_code == 200
    lines = text.split("\r\n")
    expected = list(formats.restore_paragraphs(bundled, lines, RestoreOptions()))
    assert response.json()["text"] == "\r\n".join(expected)
    assert expected[0] == "So what do you think about"  # no sentence closed at the line end
    each = client.post("/v1/restore", json={"text": text}).json()["text"]
    assert each.split("\r\n")[0] != expected[0]  # without it: each line a text
    for refused in ({"text": SRT, "format": "srt"}, {"text": text, "words": True}):
        answer = client.post("/v1/restore", json={**refused, "paragraphs": True})
        assert answer.status_code == 422 and "paragraphs" in answer.json()["error"]["message"]


def test_no_case_option(client):
    response = client.post("/v1/restore", json={"text": "we met in new york", "case": False})
    assert response.json()["text"].split()[0] == "we"


def test_subtitle_document_keeps_timings(client):
    response = client.post("/v1/restore", json={"text": SRT, "format": "srt"})
    assert response.status_code == 200
    restored = response.json()["text"]
    timings = [line for line in restored.splitlines() if "-->" in line]
    assert timings == [line for line in SRT.splitlines() if "-->" in line]
    def cue_words(document):
        lines = [ln for ln in document.splitlines() if ln and "-->" not in ln and not ln.isdigit()]
        return words_of(" ".join(lines))

    assert cue_words(restored) == cue_words(SRT) and restored != SRT


def test_keep_existing_fills_the_missing_kinds_or_all(client):
    text = ("We like the house. My friend visits New York and we like it so we go there "
            "often. Do you see the car?")
    answers = {fill: client.post("/v1/restore", json={"text": text, "keep_existing": True,
                                                      "fill": fill}).json()["text"]
               for fill in ("missing", "all")}
    for answer in answers.values():
        assert normalize(answer) == normalize(text)
    assert answers["missing"].count(".") == 2  # its sentence ends, no new ones
    bad = client.post("/v1/restore", json={"text": text, "keep_existing": True, "fill": "x"})
    assert bad.status_code == 422
    alone = client.post("/v1/restore", json={"text": text, "fill": "all"})
    assert alone.status_code == 422 and "keep_existing" in alone.json()["error"]["message"]


def test_ctm_document_keeps_every_field(client):
    ctm = "u1 A 0.00 0.30 so 0.9\nu1 A 0.30 0.20 what\nu1 A 0.50 0.10 <unk>\nu1 A 0.60 0.2 now\n"
    response = client.post("/v1/restore", json={"text": ctm, "format": "ctm"})
    assert response.status_code == 200
    restored = response.json()["text"].splitlines()
    assert [line.split()[:4] for line in restored] == [line.split()[:4]
                                                       for line in ctm.splitlines()]
    assert words_of(" ".join(line.split()[4] for line in restored)) == ["so", "what", "now"]
    assert restored[2] == "u1 A 0.50 0.10 <unk>" and restored[0].endswith(" 0.9")  # no word


def test_whispercpp_document_keeps_its_tokens(client):
    tokens = [{"text": " so", "offsets": {"from": 0, "to": 300}, "id": 370, "p": 0.9}]
    document = json.dumps({"result": {"language": "en"}, "transcription": [
        {"offsets": {"from": 0, "to": 900}, "text": " so what now", "tokens": tokens}]})
    response = client.post("/v1/restore", json={"text": document, "format": "whispercpp"})
    assert response.status_code == 200
    segment = json.loads(response.json()["text"])["transcription"][0]
    assert segment["tokens"] == tokens and segment["offsets"] == {"from": 0, "to": 900}
    assert words_of(segment["text"]) == ["so", "what", "now"]


def test_deepgram_response_gets_punctuated_words(client):
    words = [{"word": w, "start": k * 0.3, "end": k * 0.3 + 0.2, "confidence": 0.9}
             for k, w in enumerate(["so", "what", "now"])]
    document = json.dumps({"results": {"channels": [{"alternatives": [
        {"transcript": "so what now", "words": words}]}]}})
    response = client.post("/v1/restore", json={"text": document, "format": "deepgram"})
    assert response.status_code == 200
    restored = json.loads(response.json()["text"])["results"]["channels"][0]["alternatives"][0]
    assert [w["word"] for w in restored["words"]] == ["so", "what", "now"]
    assert words_of(" ".join(w["punctuated_word"] for w in restored["words"])) == [
        "so", "what", "now"]
    wrong = client.post("/v1/restore", json={"text": document, "format": "google"})
    assert wrong.status_code == 422 and "Speech-to-Text" in wrong.json()["error"]["message"]


def test_textgrid_document_restores_the_tier_named(client):
    grid = ('File type = "ooTextFile"\nObject class = "TextGrid"\n\n0\n2\n<exists>\n2\n'
            '"IntervalTier"\n"words"\n0\n2\n1\n0\n2\n"so what now"\n'
            '"IntervalTier"\n"notes"\n0\n2\n1\n0\n2\n"we see"\n')
    response = client.post("/v1/restore", json={"text": grid, "format": "textgrid",
                                                "text_key": "notes"})
    assert response.status_code == 200
    text = response.json()["text"]
    assert '"so what now"' in text and '"we see"' not in text
    assert words_of(text.split('"notes"')[1].split("\n")[-2]) == ["we", "see"]
    wrong = client.post("/v1/restore", json={"text": grid, "format": "textgrid",
                                             "output_key": "x"})
    assert wrong.status_code == 422 and "output_key" in wrong.json()["error"]["message"]


def test_ass_document_keeps_every_other_line_and_field(client):
    script = ("[Script Info]\nTitle: x\n\n[Events]\nFormat: Layer, Start, End, Style, Name, "
              "MarginL, MarginR, MarginV, Effect, Text\n"
              "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\i1}so what\\Nnow\n")
    response = client.post("/v1/restore", json={"text": script, "format": "ass"})
    assert response.status_code == 200
    text = response.json()["text"]
    prefix = "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\i1}"
    assert text.startswith(script.split("Dialogue")[0]) and prefix in text
    assert words_of(text.split(prefix)[1].replace("\\N", " ")) == ["so", "what", "now"]


def test_eaf_document_restores_the_tier_named(client):
    document = ('<?xml version="1.0" encoding="UTF-8"?>\n<ANNOTATION_DOCUMENT><TIME_ORDER>'
                '<TIME_SLOT TIME_SLOT_ID="t1" TIME_VALUE="0"/><TIME_SLOT TIME_SLOT_ID="t2" '
                'TIME_VALUE="900"/></TIME_ORDER>' + "".join(
                    f'<TIER TIER_ID="{tier}"><ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID='
                    f'"{tier}1" TIME_SLOT_REF1="t1" TIME_SLOT_REF2="t2"><ANNOTATION_VALUE>'
                    f"{text}</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION></TIER>"
                    for tier, text in (("Ann", "so what now"), ("Bob", "we see it"))) +
                "</ANNOTATION_DOCUMENT>\n")
    response = client.post("/v1/restore", json={"text": document, "format": "eaf",
                                                "text_key": "Bob"})
    assert response.status_code == 200
    text = response.json()["text"]
    assert ">so what now<" in text and ">we see it<" not in text
    bob = text.split('TIER_ID="Bob"')[1].split("VALUE>")[1].split("</ANNOTATION_")[0]
    assert words_of(bob) == ["we", "see", "it"]


def test_table_document_restores_the_column_named(client):
    table = "id,utterance,body\n7,x,so what now\n"
    response = client.post("/v1/restore", json={"text": table, "format": "csv",
                                                "text_key": "body", "output_key": "restored"})
    assert response.status_code == 200
    header, row, _ = response.json()["text"].split("\n")
    assert header == "id,utterance,body,restored"
    assert row.startswith("7,x,so what now,") and words_of(row.split(",", 3)[3]) == [
        "so", "what", "now"]


@pytest.mark.parametrize("payload, status, kind", [
    ({"text": "a", "texts": ["b"]}, 422, "invalid_request"),
    ({"text": "a", "text_key": "body"}, 422, "invalid_request"),
    ({"text": "id,body\n1,a\n", "format": "csv"}, 422, "invalid_document"),
    ({}, 422, "invalid_request"),
    ({"text": "a", "colour": "red"}, 422, "invalid_request"),
    ({"text": "a", "format": "docx"}, 422, "invalid_request"),
    ({"text": "a", "model": "en-huge"}, 422, "unknown_model"),
    ({"text": "1\nnot a timing\nhello\n", "format": "srt"}, 422, "invalid_document"),
    ({"texts": ["a"] * 9}, 413, "too_many_items"),
    ({"text": "word " * 500}, 413, "text_too_long"),
])
def test_errors_are_json(client, payload, status, kind):
    response = client.post("/v1/restore", json=payload)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["status"] == status and error["type"] == kind and error["message"]


def test_body_limit_with_and_without_content_length(client):
    big = b'{"text": "' + b"a " * 15_000 + b'"}'
    assert client.post("/v1/restore", content=big).status_code == 413

    def chunks():  # no Content-Length: the limit is enforced while reading
        for _ in range(40):
            yield b"x" * 1000

    response = client.post("/v1/restore", content=chunks())
    assert response.status_code == 413
    assert response.json()["error"]["type"] == "too_large"


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe\x00binary", b"[" * 5000])
def test_malformed_json_is_422(client, body):
    response = client.post("/v1/restore", content=body,
                           headers={"content-type": "application/json"})
    assert response.status_code == 422 and response.json()["error"]["type"] == "invalid_request"


@pytest.mark.parametrize("body, message", [
    (b'{"text": "hi",}', "the body is not JSON (Expecting property name enclosed in double "
                         "quotes at character 14)"),
    (b"", "the body is empty"), (b"null", "the body is not a JSON object")])
def test_a_body_that_is_not_json_or_empty_is_named(client, body, message):
    response = client.post("/v1/restore", content=body,
                           headers={"content-type": "application/json"})
    assert response.status_code == 422 and response.json()["error"]["message"].startswith(
        message)


def test_an_unreadable_upload_is_422_naming_the_form(client):
    response = client.post("/v1/transcribe", content=b"garbage",
                           headers={"content-type": "multipart/form-data"})
    message = response.json()["error"]["message"]
    assert response.status_code == 422 and "not a readable multipart form" in message
    assert "JSON" not in message


@pytest.mark.parametrize("field, value", [("case", "no"), ("case", 0), ("keep_existing", "true"),
                                          ("model", ""), ("output_key", ""), ("text_key", "")])
def test_values_of_the_wrong_kind_are_422(client, field, value):
    body = {"text": "id,text\n1,hello there\n", "format": "csv", field: value}
    response = client.post("/v1/restore", json=body)
    assert response.status_code == 422 and response.json()["error"]["message"].startswith(field)


def test_models_health_page_schema(client):
    models = client.get("/v1/models").json()
    assert models["default"] == "en-tiny" and models["acoustic"] == []
    assert models["models"][0]["language"] == "en"
    assert client.get("/healthz").json()["status"] == "ok"
    page = client.get("/")
    assert page.status_code == 200 and 'id="input"' in page.text
    from punctum.formats import FORMATS

    assert all(f'<option value="{name}">' in page.text for name in FORMATS)  # every format
    schema = client.get("/openapi.json").json()
    assert "/v1/restore" in schema["paths"] and "/v1/transcribe" in schema["paths"]


def test_transcribe_without_acoustic_model_is_501(client):
    response = client.post("/v1/transcribe", files={"audio": ("a.wav", b"RIFF0000")})
    assert response.status_code == 501
    assert "acoustic" in response.json()["error"]["message"]


class BlockingPunctuator:
    """restore_batch waits for `release`; records the batches it was given."""

    def __init__(self):
        self.release = threading.Event()
        self.started = threading.Event()
        self.calls: list[list[str]] = []
        self.artifact = SimpleNamespace(name="stub", meta={})
        self.inventory = SimpleNamespace(language="en")

    def restore_batch(self, texts, options=None):
        self.calls.append(list(texts))
        self.started.set()
        self.release.wait(10)
        return [t.upper() for t in texts]


def post_in_thread(client, payload, results, key):
    thread = threading.Thread(
        target=lambda: results.__setitem__(key, client.post("/v1/restore", json=payload)))
    thread.start()
    return thread


def test_queue_full_is_429_then_requests_complete():
    stub = BlockingPunctuator()
    config = ServeConfig(max_queue=1, batch_wait_ms=0, request_timeout_s=10)
    with TestClient(create_app(config, {"stub": stub})) as client:
        results: dict = {}
        first = post_in_thread(client, {"text": "one"}, results, 1)
        assert stub.started.wait(5)  # the first request is inside the model
        second = post_in_thread(client, {"text": "two"}, results, 2)
        batcher = client.app.state.punctum.batchers["stub"]
        deadline = time.monotonic() + 5
        while batcher.waiting < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        third = client.post("/v1/restore", json={"text": "three"})
        assert third.status_code == 429
        assert third.json()["error"]["type"] == "queue_full"
        assert third.headers["retry-after"] == "1"
        stub.release.set()
        first.join(5)
        second.join(5)
        assert results[1].json()["text"] == "ONE" and results[2].json()["text"] == "TWO"


def test_timeout_is_503():
    stub = BlockingPunctuator()
    config = ServeConfig(request_timeout_s=0.2, batch_wait_ms=0)
    with TestClient(create_app(config, {"stub": stub})) as client:
        response = client.post("/v1/restore", json={"text": "slow"})
        assert response.status_code == 503
        assert response.json()["error"]["type"] == "timeout"
        stub.release.set()


class RecordingPunctuator:
    def __init__(self):
        self.calls: list[list[str]] = []

    def restore_batch(self, texts, options=None):
        self.calls.append(list(texts))
        return [f"<{t}>" for t in texts]


def test_batcher_joins_concurrent_requests_in_order():
    from concurrent.futures import ThreadPoolExecutor

    model = RecordingPunctuator()

    async def scenario():
        batcher = DynamicBatcher(model, ThreadPoolExecutor(1), max_texts=64, wait_s=0.05)
        batcher.start()
        requests = [batcher.submit([f"a{i}", f"b{i}"], None) for i in range(10)]
        results = await asyncio.gather(*requests)
        await batcher.stop()
        return results

    results = asyncio.run(scenario())
    assert results == [[f"<a{i}>", f"<b{i}>"] for i in range(10)]
    assert len(model.calls) == 1 and len(model.calls[0]) == 20


class PickyPunctuator(RecordingPunctuator):
    """Refuses any batch that holds the text "bad", as the runtime refuses a lone surrogate."""

    def restore_batch(self, texts, options=None):
        if "bad" in texts:
            raise ValueError("the word 'bad' cannot be read")
        return super().restore_batch(texts, options)


def test_one_bad_text_fails_only_its_own_request():
    from concurrent.futures import ThreadPoolExecutor

    model = PickyPunctuator()

    async def scenario():
        batcher = DynamicBatcher(model, ThreadPoolExecutor(1), max_texts=64, wait_s=0.05)
        batcher.start()
        texts = [["a"], ["bad"], ["c", "d"]]
        results = await asyncio.gather(*(batcher.submit(t, None) for t in texts),
                                       return_exceptions=True)
        await batcher.stop()
        return results

    good, bad, other = asyncio.run(scenario())
    assert good == ["<a>"] and other == ["<c>", "<d>"] and isinstance(bad, ValueError)
    with TestClient(create_app(ServeConfig(batch_wait_ms=0), {"stub": PickyPunctuator()})) \
            as client:
        response = client.post("/v1/restore", json={"text": "bad"})
    assert response.status_code == 422 and response.json()["error"]["type"] == "invalid_text"


def test_batcher_caps_batch_size_and_refuses_when_full():
    from concurrent.futures import ThreadPoolExecutor

    model = RecordingPunctuator()

    async def scenario():
        batcher = DynamicBatcher(model, ThreadPoolExecutor(1), max_texts=4, wait_s=0.05,
                                 max_queue=3)
        requests = [asyncio.ensure_future(batcher.submit([f"t{i}"], None)) for i in range(3)]
        await asyncio.sleep(0)
        with pytest.raises(QueueFull):
            await batcher.submit(["extra"], None)
        batcher.start()
        results = await asyncio.gather(*requests)
        await batcher.stop()
        return results

    assert asyncio.run(scenario()) == [["<t0>"], ["<t1>"], ["<t2>"]]
    assert all(len(call) <= 4 for call in model.calls)


def test_config_from_toml_and_errors(tmp_path):
    good = tmp_path / "serve.toml"
    good.write_text('[serve]\nport = 9001\nmodels = ["en-tiny"]\nmax_queue = 4\n')
    config = load_config(good, port=None, host="0.0.0.0")
    assert (config.port, config.max_queue, config.host) == (9001, 4, "0.0.0.0")
    assert not config.loopback and ServeConfig().loopback
    bad = tmp_path / "bad.toml"
    bad.write_text("[serve]\nmax_queu = 4\n")
    with pytest.raises(ValueError, match="unknown key serve.max_queu"):
        load_config(bad)
    bad.write_text("[serve]\nmax_queue = 0\n")
    with pytest.raises(ValueError, match="max_queue must be a finite number > 0"):
        load_config(bad)
    bad.write_text("[serve]\nrequest_timeout_s = nan\n")
    with pytest.raises(ValueError, match="request_timeout_s must be a finite number > 0"):
        load_config(bad)


def test_cli_serve_bad_config_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[serve]\nport = 'eighty'\n")
    assert main(["serve", "--config", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "serve.port" in err
    assert main(["serve", "--model", "no-such-model", "--port", "0"]) == 2
    assert "no model 'no-such-model'" in capsys.readouterr().err


def test_stop_fails_waiting_and_running_requests_with_shutting_down():
    from concurrent.futures import ThreadPoolExecutor

    from punctum.serve.batcher import ShuttingDown

    stub = BlockingPunctuator()

    async def scenario():
        batcher = DynamicBatcher(stub, ThreadPoolExecutor(1), wait_s=0.0)
        batcher.start()
        running = asyncio.ensure_future(batcher.submit(["a"], None))
        while not stub.started.is_set():
            await asyncio.sleep(0.01)
        waiting = asyncio.ensure_future(batcher.submit(["b"], None))
        await asyncio.sleep(0.01)
        await batcher.stop()
        stub.release.set()
        return await asyncio.wait_for(
            asyncio.gather(running, waiting, return_exceptions=True), 5)

    results = asyncio.run(scenario())
    assert all(isinstance(r, ShuttingDown) for r in results)


class FailingPunctuator(RecordingPunctuator):
    def restore_batch(self, texts, options=None):
        raise RuntimeError("model exploded")


def test_unexpected_model_error_is_json_500():
    app = create_app(ServeConfig(batch_wait_ms=0), {"stub": FailingPunctuator()})
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/v1/restore", json={"text": "boom"})
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "RuntimeError: model exploded"


def test_documents_have_a_queue_limit(bundled):
    config = ServeConfig(max_queue=1)
    with TestClient(create_app(config, {"en-tiny": bundled})) as client:
        client.app.state.punctum.documents_waiting = 1  # one document already waiting
        response = client.post("/v1/restore", json={"text": SRT, "format": "srt"})
        assert response.status_code == 429
        client.app.state.punctum.documents_waiting = 0
        assert client.post("/v1/restore", json={"text": SRT, "format": "srt"}).status_code == 200


def test_two_models_with_one_name_are_refused(tiny_artifact, tmp_path):
    import shutil

    from punctum.serve.app import load_punctuators

    copy = shutil.copytree(tiny_artifact, tmp_path / "copy")  # the same name in punctum.json
    with pytest.raises(ValueError, match="are both named"):
        load_punctuators(ServeConfig(models=(str(tiny_artifact), str(copy))))


def test_transcribe_with_pocketsphinx(tmp_path):
    import shutil
    import subprocess

    pytest.importorskip("pocketsphinx")
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng to make speech")

    wav = tmp_path / "speech.wav"
    subprocess.run(["espeak-ng", "-s", "140", "-w", str(wav), "we are going to the park"],
                   check=True)
    with TestClient(create_app(ServeConfig(acoustic="pocketsphinx"))) as client:
        good = client.post("/v1/transcribe", files={"audio": ("talk.wav", wav.read_bytes())})
        bad = client.post("/v1/transcribe", files={"audio": ("bad.wav", b"RIFF0000junk")})
        odd = [client.post("/v1/transcribe", files={"audio": (name, wav.read_bytes())})
               for name in ("a." + "w" * 300, "a.wav\x00", "x" * 300 + ".wav")]
    assert [r.status_code for r in odd] == [422, 422, 200]  # (no 500: a name too long)
    assert "unsupported audio file type" in odd[0].json()["error"]["message"]
    assert good.status_code == 200
    body = good.json()
    assert body["path"] == "talk.wav" and body["words"] and body["text"][-1] in ".?!"
    assert body["warnings"] == []
    assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("bad.wav: ")


def test_transcribe_returns_the_warnings_of_its_upload(tmp_path):
    import shutil
    import subprocess

    import soundfile

    pytest.importorskip("pocketsphinx")
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng to make speech")
    wav = tmp_path / "speech.wav"
    subprocess.run(["espeak-ng", "-w", str(wav), "we are going home"], check=True)
    samples, rate = soundfile.read(wav)
    narrow = tmp_path / "phone.wav"
    soundfile.write(narrow, samples[::rate // 8000], 8000)  # (espeak-ng writes 22,050 Hz)
    with TestClient(create_app(ServeConfig(acoustic="pocketsphinx"))) as client:
        response = client.post("/v1/transcribe",
                               files={"audio": ("call.wav", narrow.read_bytes())})
    assert response.status_code == 200
    [warning] = response.json()["warnings"]
    assert warning.startswith("call.wav: 8000 Hz audio") and "punctum-audio-" not in warning


def test_transcribe_refuses_audio_longer_than_the_limit(tmp_path):
    pytest.importorskip("pocketsphinx")
    import io

    import numpy as np
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.zeros(16_000 * 3, dtype=np.float32), 16_000, format="WAV")
    app = create_app(ServeConfig(acoustic="pocketsphinx", max_audio_seconds=2.5))
    with TestClient(app) as client:
        response = client.post("/v1/transcribe", files={"audio": ("long.wav", buffer.getvalue())})
    assert response.status_code == 413
    assert response.json()["error"]["message"] == ("long.wav: 3 s of audio; this server "
                                                   "transcribes 2.5 s at most "
                                                   "(serve.max_audio_seconds)")


def test_transcribe_uploads_have_a_queue_limit():
    pytest.importorskip("pocketsphinx")
    app = create_app(ServeConfig(acoustic="pocketsphinx", max_queue=2))
    with TestClient(app) as client:
        app.state.punctum.audio_waiting = 2  # two uploads already waiting
        response = client.post("/v1/transcribe", files={"audio": ("a.wav", b"RIFF0000")})
    assert response.status_code == 429 and response.headers["Retry-After"] == "1"


def test_models_list_the_acoustic_model_for_the_page():
    pytest.importorskip("pocketsphinx")
    with TestClient(create_app(ServeConfig(acoustic="pocketsphinx"))) as client:
        assert client.get("/v1/models").json()["acoustic"] == ["pocketsphinx"]
    with TestClient(create_app(ServeConfig())) as client:
        assert client.get("/v1/models").json()["acoustic"] == []
