"""Server settings: one dataclass, read from a TOML file ([serve] table) and the command line.

    [serve]
    host = "127.0.0.1"
    port = 8000
    models = ["en-tiny"]
    max_body_bytes = 1_000_000
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from punctum.config import build_dataclass, read_toml

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class ServeConfig:
    """What the server loads and the limits it enforces.

    Args:
        host, port: where to listen; loopback by default.
        models: model names, folders or hub ids loaded at start; the first is the default.
        threads: ONNX Runtime intra-op threads per model (0 = its default).
        max_body_bytes: request bodies above this get 413.
        max_chars: characters per text above this get 413.
        max_items: texts per request above this get 413.
        max_queue: requests waiting for the model above this get 429.
        request_timeout_s: requests not answered in this time get 503.
        batch_texts: texts the dynamic batcher joins into one model call at most.
        batch_wait_ms: how long the batcher waits for more requests to join a batch.
        max_audio_bytes: audio uploads above this get 413 (POST /v1/transcribe).
        max_audio_seconds: audio uploads longer than this get 413: one audio worker
            transcribes, and a request that times out cannot stop it, so a long upload
            would hold it past its 503 (pocketsphinx reads about 7 s of audio a second on
            2 cores: the default 120 s fits the default timeout). Longer audio:
            `punctum transcribe`.
        acoustic: what POST /v1/transcribe recognises speech with: "pocketsphinx" (needs
            punctum[audio,sphinx]) or an acoustic model folder, followed by the default
            model as its lexical model; "" (default): the route answers 501.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    models: tuple[str, ...] = ("en-tiny",)
    threads: int = 0
    max_body_bytes: int = 1_000_000
    max_chars: int = 100_000
    max_items: int = 256
    max_queue: int = 256
    request_timeout_s: float = 30.0
    batch_texts: int = 64
    batch_wait_ms: float = 5.0
    max_audio_bytes: int = 50_000_000
    max_audio_seconds: float = 120.0
    acoustic: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", tuple(self.models))
        if not self.models:
            raise ValueError("serve.models must name at least one model")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"serve.port must be in [0, 65535], got {self.port}")
        positive = ["max_body_bytes", "max_chars", "max_items", "max_queue", "batch_texts",
                    "max_audio_bytes", "max_audio_seconds", "request_timeout_s"]
        for name in positive:
            if not getattr(self, name) > 0 or not math.isfinite(getattr(self, name)):
                raise ValueError(f"serve.{name} must be a finite number > 0, got "
                                 f"{getattr(self, name)}")
        if not (self.batch_wait_ms >= 0 and math.isfinite(self.batch_wait_ms)) \
                or self.threads < 0:
            raise ValueError("serve.batch_wait_ms and serve.threads must be >= 0")

    @property
    def default_model(self) -> str:
        return self.models[0]

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK


def load_config(path: str | Path | None = None, **overrides) -> ServeConfig:
    """ServeConfig from a TOML file's [serve] table (optional), then non-None overrides."""
    values: dict = {}
    if path is not None:
        raw = read_toml(path)
        unknown = set(raw) - {"serve"}
        if unknown:
            raise ValueError(f"{path}: unknown table(s) {', '.join(sorted(unknown))} "
                             f"(expected [serve])")
        values = dict(raw.get("serve", {}))
    config = build_dataclass(ServeConfig, values, "serve")
    given = {key: value for key, value in overrides.items() if value is not None}
    return dataclasses.replace(config, **given) if given else config
