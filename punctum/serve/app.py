"""The HTTP API: FastAPI routes over loaded Punctuators and their dynamic batchers.

    POST /v1/restore     one text or a list; model, casing, format options
    POST /v1/transcribe  audio upload (when an acoustic model is installed)
    GET  /v1/models      loaded models with their recorded scores
    GET  /healthz        liveness, queue lengths
    GET  /               a page to paste text into
    GET  /openapi.json   the schema (FastAPI)

Every error is JSON: {"error": {"status", "type", "message"}}, with 413 (too large), 422
(malformed or unknown option), 429 (queue full), 500 (unexpected), 501 (no acoustic model)
and 503 (timeout, shutting down).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from fastapi import FastAPI, File, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from punctum.formats import FORMATS, KEYED, TEXT_KEYED
from punctum.formats.transcript import shown
from punctum.runtime import Punctuator, RestoreOptions
from punctum.serve.batcher import DynamicBatcher, QueueFull, ShuttingDown
from punctum.serve.config import ServeConfig
from punctum.serve.limits import BodyLimit, error_body
from punctum.version import __version__


class ApiError(Exception):
    """An error answered as JSON with its HTTP status."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


class RestoreRequest(BaseModel):
    """Give `text` (one string) or `texts` (a list), not both."""

    model_config = ConfigDict(extra="forbid", strict=True)  # "case": "no" is no boolean
    text: str | None = Field(None, description="one text (or a whole subtitle/JSON file)")
    texts: list[str] | None = Field(None, description="several texts, restored independently")
    model: str | None = Field(None, min_length=1,
                              description="a loaded model (default: the first)")
    case: bool = Field(True, description="restore casing")
    keep_existing: bool = Field(False, description="keep marks and case already present")
    fill: Literal["missing", "all"] | None = Field(
        None, description="with keep_existing, where the model's marks go: the kinds of "
        "mark the text leaves out (missing, the default) or every word it left without one "
        "(all)")
    annotations: bool = Field(True, description="keep speaker labels (JOHN:), dialogue "
                              "dashes, >>, [sound descriptions] and line-start timestamps as "
                              "written, a speaker's turn starting a sentence; with words=true "
                              "each text lists them under 'annotations'")
    words: bool = Field(False, description="also answer each word's mark, case and "
                        "probabilities (format 'text' only)")
    paragraphs: bool = Field(False, description="format 'text': the lines up to a blank "
                             "line are one text, line breaks kept (a recogniser's segment a "
                             "line), not each line")
    format: Literal[FORMATS] = Field(  # type: ignore[valid-type]
        "text", description="what `text` holds; subtitle and JSON formats keep every timing")
    text_key: str | None = Field(None, min_length=1, description="NeMo manifests and CSV/TSV "
                                 "tables: the key or column to restore (default: the format's)")
    output_key: str | None = Field(None, min_length=1, description="NeMo manifests and CSV/TSV "
                                   "tables: the key or column to write (default: text_key's)")


class RestoreResponse(BaseModel):
    model: str
    format: str
    text: str | None = None
    texts: list[str] | None = None
    details: list[dict] | None = Field(
        None, description="with words=true, per text: {text, words: [{word, mark, case, "
        "mark_prob, case_prob, ...}]}, as `punctum restore --json` prints")


class ModelInfo(BaseModel):
    name: str
    default: bool
    kind: str
    language: str
    precision: str | None = None
    scores: dict = {}


class ModelsResponse(BaseModel):
    default: str
    models: list[ModelInfo]
    acoustic: list[str]


class ErrorDetail(BaseModel):
    status: int
    type: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorDetail


ERRORS = {code: {"model": ErrorResponse} for code in (413, 422, 429, 501, 503)}


class ServerState:
    """Loaded models, one single-thread executor and batcher each, and the limits."""

    def __init__(self, config: ServeConfig, punctuators: dict[str, Punctuator]):
        self.config = config
        self.punctuators = punctuators
        self.executors = {name: ThreadPoolExecutor(1, thread_name_prefix=f"punctum-{name}")
                          for name in punctuators}
        self.batchers = {
            name: DynamicBatcher(p, self.executors[name], config.batch_texts,
                                 config.batch_wait_ms / 1000, config.max_queue)
            for name, p in punctuators.items()}
        self.default = next(iter(punctuators))
        self.documents_waiting = 0  # subtitle/JSON documents queued or running
        self.transcriber = None  # POST /v1/transcribe's recogniser (`load_transcriber`)
        self.audio_executor = ThreadPoolExecutor(1, thread_name_prefix="punctum-audio")
        self.audio_waiting = 0  # uploads queued or being transcribed

    def model(self, name: str | None) -> str:
        name = name or self.default
        if name not in self.punctuators:
            raise ApiError(422, "unknown_model", f"model {name!r} is not loaded "
                           f"(loaded: {', '.join(self.punctuators)})")
        return name

    def check_size(self, texts: list[str]) -> None:
        if len(texts) > self.config.max_items:
            raise ApiError(413, "too_many_items", f"{len(texts)} texts; the limit is "
                           f"{self.config.max_items} per request")
        longest = max((len(t) for t in texts), default=0)
        if longest > self.config.max_chars:
            raise ApiError(413, "text_too_long", f"a text has {longest} characters; the limit "
                           f"is {self.config.max_chars}")

    async def within_timeout(self, awaitable):
        try:
            return await asyncio.wait_for(awaitable, self.config.request_timeout_s)
        except TimeoutError:
            raise ApiError(503, "timeout", f"no answer within "
                           f"{self.config.request_timeout_s:g} s; try again later") from None
        except QueueFull as error:
            raise ApiError(429, "queue_full", f"server busy: {error}; retry shortly") from None
        except ShuttingDown as error:
            raise ApiError(503, "shutting_down", str(error)) from None

    async def run_document(self, name: str, job):
        """Run a document job on the model's thread, within the queue limit and the timeout;
        a job whose caller gave up before its turn is skipped."""
        if self.documents_waiting >= self.config.max_queue:
            raise ApiError(429, "queue_full", f"server busy: {self.documents_waiting} "
                           f"documents are already waiting; retry shortly")
        abandoned = threading.Event()

        def run():
            if abandoned.is_set():
                return None
            return job()

        self.documents_waiting += 1
        try:
            future = asyncio.get_running_loop().run_in_executor(self.executors[name], run)
            return await self.within_timeout(future)
        finally:
            abandoned.set()
            self.documents_waiting -= 1


def load_punctuators(config: ServeConfig) -> dict[str, Punctuator]:
    """Load every model of the config once, keyed by artifact name (first = default)."""
    loaded: dict[str, Punctuator] = {}
    specs: dict[str, str] = {}
    for spec in config.models:
        punctuator = Punctuator.load(spec, threads=config.threads)
        name = punctuator.artifact.name
        if name in loaded:  # requests name models: the second would hide the first
            raise ValueError(f"--model {spec} and --model {specs[name]} are both named "
                             f"{name!r} (punctum.json); give one another name")
        loaded[name], specs[name] = punctuator, spec
    return loaded


def load_transcriber(config: ServeConfig):
    """The speech recogniser of POST /v1/transcribe (`config.acoustic`), or None."""
    if not config.acoustic:
        return None
    from punctum.transcribe import Transcriber

    return Transcriber.load(config.acoustic, text_model=config.default_model,
                            threads=config.threads)


def create_app(config: ServeConfig | None = None,
               punctuators: dict[str, Punctuator] | None = None) -> FastAPI:
    """The ASGI app; models load here (before the server binds) unless given."""
    config = config or ServeConfig()
    state = ServerState(config, punctuators or load_punctuators(config))
    state.transcriber = load_transcriber(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        for batcher in state.batchers.values():
            batcher.start()
        yield
        for batcher in state.batchers.values():
            await batcher.stop()
        for executor in [*state.executors.values(), state.audio_executor]:
            executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(title="punctum", version=__version__, lifespan=lifespan,
                  description="Restore punctuation, casing and sentence boundaries.")
    app.state.punctum = state
    _add_error_handlers(app)
    _add_routes(app, state)
    app.add_middleware(BodyLimit, default_bytes=config.max_body_bytes,
                       per_path={"/v1/transcribe": config.max_audio_bytes})
    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError):
        headers = {"Retry-After": "1"} if error.status in (429, 503) else None
        return JSONResponse(error_body(error.status, error.kind, error.message),
                            status_code=error.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError):
        first = error.errors()[0] if error.errors() else {}
        place = [str(p) for p in first.get("loc", ()) if p != "body"]
        where = ".".join(place)
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else \
            first.get("msg", "invalid request")
        if first.get("type") == "json_invalid":  # ('{"text": "hi",}': loc is a character)
            detail = (first.get("ctx") or {}).get("error") or first.get("msg", "")
            at = f" at character {place[0]}" if place else ""
            message = f"the body is not JSON ({detail}{at})"
        elif first.get("type") == "missing" and not place:  # no body
            message = "the body is empty: send a JSON object (see /docs)"
        elif not place:  # JSON, not an object ("null", "[1]")
            message = f"the body is not a JSON object ({first.get('msg', '')})"
        return JSONResponse(error_body(422, "invalid_request", message), status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception):
        logging.getLogger("punctum.serve").exception("unexpected error")
        return JSONResponse(error_body(500, "internal", f"{type(error).__name__}: {error}"),
                            status_code=500)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException):
        if error.status_code == 400:  # a body FastAPI cannot parse at all
            what = "the body is not JSON" if request.url.path == "/v1/restore" else \
                "the body is not a readable multipart form with an 'audio' file" \
                if request.url.path == "/v1/transcribe" else "the body cannot be read"
            return JSONResponse(error_body(422, "invalid_request", f"{what} ({error.detail})"),
                                status_code=422)
        return JSONResponse(error_body(error.status_code, "http", str(error.detail)),
                            status_code=error.status_code)


def _line_break(text: str) -> str:
    """What a text's lines are split at: "\n" ("\r\n" lines keep their "\r"), or "\r"
    where that alone ends them (classic Mac OS), as `punctum restore` reads them."""
    return "\r" if "\r" in text and "\n" not in text else "\n"


def _rejoin(restored: list, lines: list[list[str]], breaks: list[str], detailed: bool) -> list:
    """Restored lines joined back into their texts with the texts' own line endings ("\n",
    "\r\n" or "\r": `breaks`); for `detailed` results, the texts joined and the words
    listed in order."""
    out, start = [], 0
    for group, line_break in zip(lines, breaks):
        part = restored[start:start + len(group)]
        start += len(group)
        texts = [p["text"] if detailed else p for p in part]
        text = line_break.join(t + ("\r" if line_break == "\n" and line.endswith("\r") else "")
                               for t, line in zip(texts, group))
        if not detailed:
            out.append(text)
            continue
        joined = {**part[0], "text": text,
                  "words": [w for p in part for w in p.get("words", [])]}
        if any("annotations" in p for p in part):
            joined["annotations"] = [a for p in part for a in p.get("annotations", [])]
        out.append(joined)
    return out


def _add_routes(app: FastAPI, state: ServerState) -> None:
    @app.post("/v1/restore", response_model=RestoreResponse, response_model_exclude_none=True,
              responses=ERRORS)
    async def restore(body: RestoreRequest) -> RestoreResponse:
        """Restore punctuation and casing of one text, a list of texts, or a transcript."""
        name = state.model(body.model)
        texts = _request_texts(body)
        state.check_size(texts)
        options = RestoreOptions(case=body.case, keep_existing=body.keep_existing,
                                 annotations=body.annotations, fill=body.fill or "missing")
        if body.format != "text":
            document = await state.within_timeout(_restore_document(state, name, body, options))
            return RestoreResponse(model=name, format=body.format, text=document)
        breaks = [_line_break(text) for text in texts]
        lines = [text.split(b) for text, b in zip(texts, breaks)]  # each line as a line
        try:
            restored = await state.within_timeout(
                _restore_paragraphs(state, name, lines, options) if body.paragraphs else
                _restore_lines(state, name, [line for group in lines for line in group],
                               options, body.words))
        except ValueError as error:  # a text the model cannot read (a lone surrogate)
            raise ApiError(422, "invalid_text", str(error)) from None
        restored = _rejoin(restored, lines, breaks, body.words)
        details = restored if body.words else None
        if body.words:
            restored = [detail["text"] for detail in restored]
        if body.texts is not None:
            return RestoreResponse(model=name, format="text", texts=restored, details=details)
        return RestoreResponse(model=name, format="text", text=restored[0], details=details)

    @app.post("/v1/transcribe", responses=ERRORS)
    async def transcribe(audio: Annotated[UploadFile, File()]) -> dict:
        """Transcribe uploaded audio to punctuated text with word times (needs `--acoustic`:
        pocketsphinx or an acoustic model folder)."""
        if state.transcriber is None:
            raise ApiError(501, "no_acoustic_model", "no acoustic model is loaded on this "
                           "server (start it with --acoustic pocketsphinx); /v1/restore "
                           "takes text")
        if state.audio_waiting >= state.config.max_queue:
            raise ApiError(429, "queue_full", f"server busy: {state.audio_waiting} uploads "
                           f"are already waiting; retry shortly")
        state.audio_waiting += 1
        try:
            data = await audio.read()
            name = audio.filename or "audio.wav"
            return await state.within_timeout(asyncio.get_running_loop().run_in_executor(
                state.audio_executor, _transcribe_upload, state.transcriber, data, name,
                state.config.max_audio_seconds))
        finally:
            state.audio_waiting -= 1

    @app.get("/v1/models", response_model=ModelsResponse)
    async def models() -> ModelsResponse:
        """The loaded models; the first is used when a request names none."""
        infos = [_model_info(name, p, name == state.default)
                 for name, p in state.punctuators.items()]
        acoustic = [state.config.acoustic] if state.transcriber is not None else []
        return ModelsResponse(default=state.default, models=infos, acoustic=acoustic)

    @app.get("/healthz")
    async def healthz() -> dict:
        """Liveness: the loaded models and how many requests wait for each."""
        return {"status": "ok", "version": __version__,
                "queue": {name: b.waiting for name, b in state.batchers.items()}}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> str:
        return resources.files("punctum.serve").joinpath("static/index.html").read_text(
            encoding="utf-8")


def _transcribe_upload(transcriber, data: bytes, name: str,
                       max_seconds: float = math.inf) -> dict:
    """An uploaded file's transcription ({"path": its name, "text", "words"}); its audio
    type is told by its name's extension, as for files; audio longer than `max_seconds`
    (by its header) is a 413."""
    import tempfile

    from punctum.audio.io import EXTENSIONS, audio_seconds

    suffix = Path(name).suffix.lower() or ".wav"
    if suffix not in EXTENSIONS:  # (checked before the name is used for a file)
        raise ApiError(422, "invalid_audio", f"{shown(name)}: unsupported audio file type "
                       f"{shown(suffix)}; expected one of {' '.join(EXTENSIONS)}")
    with tempfile.TemporaryDirectory(prefix="punctum-audio-") as folder:
        # named like the upload, so that warnings in the server's log say which it was
        stem = re.sub(r"[^\w.-]", "_", Path(name).stem).encode()[:80].decode(
            "utf-8", "ignore") or "upload"  # (80 bytes: a file name holds 255)
        path = Path(folder) / f"{stem}{suffix}"
        path.write_bytes(data)
        seconds = audio_seconds(path)
        if seconds is not None and seconds > max_seconds:
            raise ApiError(413, "too_long", f"{name}: {seconds:,.0f} s of audio; this server "
                           f"transcribes {max_seconds:g} s at most (serve.max_audio_seconds)")
        warned: list[str] = []
        try:
            with _warnings_logged(warned):
                result = transcriber.transcribe(path)
        except (ValueError, FileNotFoundError) as error:
            raise ApiError(422, "invalid_audio", str(error).replace(str(path), name)) \
                from None
    return {**result.to_dict(), "path": name,
            "warnings": [w.replace(str(path), name) for w in warned]}


class _ThreadWarnings(logging.Handler):
    """Collects the warnings that punctum logs on one thread (an upload's transcription)."""

    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.thread, self.into = threading.get_ident(), into

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.into.append(record.getMessage())


@contextlib.contextmanager
def _warnings_logged(into: list[str]):
    """Within the block, punctum's warnings on this thread are also appended to `into` (the
    8 kHz and cut-short notices of an upload, for its response as well as the log)."""
    handler = _ThreadWarnings(into)
    logger = logging.getLogger("punctum")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _request_texts(body: RestoreRequest) -> list[str]:
    if (body.text is None) == (body.texts is None):
        raise ApiError(422, "invalid_request", "give exactly one of 'text' or 'texts'")
    if body.format != "text" and body.texts is not None:
        raise ApiError(422, "invalid_request", f"format {body.format!r} takes one document "
                       f"in 'text'")
    if body.format not in KEYED and (body.output_key or (
            body.text_key and body.format not in TEXT_KEYED)):
        raise ApiError(422, "invalid_request", f"'text_key' and 'output_key' are for NeMo "
                       f"manifests and CSV/TSV tables ('text_key' also for a TextGrid's or "
                       f"ELAN tier), not {body.format!r}")
    if body.fill is not None and not body.keep_existing:
        raise ApiError(422, "invalid_request", "'fill' is for 'keep_existing' (without it "
                       "every mark is the model's)")
    if body.paragraphs and (body.format != "text" or body.words):
        raise ApiError(422, "invalid_request", "'paragraphs' is for format 'text' without "
                       "'words'" + (f", not {body.format!r}" if body.format != "text" else ""))
    if body.format != "text" and body.words:
        raise ApiError(422, "invalid_request", f"'words' is for format 'text', not "
                       f"{body.format!r} (whose output keeps its own timings)")
    return [body.text] if body.text is not None else list(body.texts)


async def _restore_lines(state: ServerState, name: str, lines: list[str],
                         options: RestoreOptions, detailed: bool) -> list:
    """Lines restored by the model's batcher, those holding annotations (`formats.annotations`,
    unless options say otherwise) on its worker thread as transcript lines (`detailed`: as
    `punctum restore --json` gives them, with their "annotations")."""
    from punctum import formats
    from punctum.batch import json_line
    from punctum.formats.annotations import annotated_cue

    marked = ([] if not options.annotations else
              [i for i, line in enumerate(lines) if annotated_cue(line) is not None])
    skip = set(marked)
    plain = [line for i, line in enumerate(lines) if i not in skip]
    restored = (await state.batchers[name].submit(plain, options, detailed=detailed)
                if plain else [])
    if not marked:
        return restored
    punctuator, chosen = state.punctuators[name], [lines[i] for i in marked]
    annotated = await state.run_document(name, lambda: (
        [json_line(punctuator, line, options) for line in chosen] if detailed
        else list(formats.restore_lines(punctuator, chosen, options))))
    by_index = dict(zip(marked, annotated))
    rest = iter(restored)
    return [by_index[i] if i in by_index else next(rest) for i in range(len(lines))]


async def _restore_paragraphs(state: ServerState, name: str, lines: list[list[str]],
                              options: RestoreOptions) -> list[str]:
    """Each text's lines restored a paragraph at a time (`formats.restore_paragraphs`) on
    the model's worker thread, as one flat list of lines."""
    from punctum import formats

    punctuator = state.punctuators[name]
    return await state.run_document(name, lambda: [
        line for group in lines for line in formats.restore_paragraphs(punctuator, group,
                                                                       options)])


async def _restore_document(state: ServerState, name: str, body: RestoreRequest,
                            options: RestoreOptions) -> str:
    """A subtitle or ASR JSON document restored on the model's worker thread."""
    from punctum import formats

    def run() -> str:
        transcript = formats.loads(body.text, body.format, "<request>", body.text_key)
        restored = formats.restore_transcript(transcript, state.punctuators[name], options)
        return formats.dumps(restored, body.output_key)

    try:
        return await state.run_document(name, run)
    except ValueError as error:  # malformed document: its one-line message
        raise ApiError(422, "invalid_document", str(error)) from None


def _model_info(name: str, punctuator: Punctuator, default: bool) -> ModelInfo:
    meta = punctuator.artifact.meta
    return ModelInfo(name=name, default=default, kind=str(meta.get("kind", "")),
                     language=punctuator.inventory.language,
                     precision=meta.get("model", {}).get("precision"),
                     scores=meta.get("scores", {}) or {})
