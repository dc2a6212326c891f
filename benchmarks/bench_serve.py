"""Load test of `punctum serve` on loopback: concurrent clients, mixed sizes, limits.

    python benchmarks/bench_serve.py                       # 100 clients, 1,000 requests
    python benchmarks/bench_serve.py --clients 20 --requests 200   # quicker

Two phases, each against a fresh server process (`python -m punctum serve`) on 127.0.0.1:
- within limits: default limits; every request must succeed (200) — failures or lost
  requests (connection errors, missing answers) are counted and printed;
- over limits: the same load against a server with a small queue (--tight-queue) and a short
  request timeout, where the excess must be refused cleanly with 429 or 503 JSON errors.
Request mix (texts generated from a word list written here): 60% short (5-20 words), 25%
paragraphs (40-100 words), 10% long (400-1,200 words), 5% lists of 8 short texts.
Reports status counts, p50/p90/p99 latency, requests/s and words/s.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

import httpx
from common import hardware

WORDS = ("the a and to of in it is that you we they i was for on with as have this be at "
         "but not what so if or can will one all there about would like just know think "
         "people time really going make very good well right now then because how when "
         "market data model team customer question answer today week year city river "
         "music school game plan call money problem idea house morning report change").split()


def make_request(rng: random.Random) -> tuple[dict, int]:
    """(JSON body, number of words) of one request drawn from the mix."""
    def text(low, high):
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))

    kind = rng.random()
    if kind < 0.60:
        body = {"text": text(5, 20)}
    elif kind < 0.85:
        body = {"text": text(40, 100)}
    elif kind < 0.95:
        body = {"text": text(400, 1200)}
    else:
        body = {"texts": [text(5, 20) for _ in range(8)]}
    texts = body.get("texts") or [body["text"]]
    return body, sum(len(t.split()) for t in texts)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(settings: dict, threads: int) -> tuple[subprocess.Popen, str, str]:
    """A `punctum serve` child process with a [serve] table; waits for /healthz."""
    port = free_port()
    config = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    config.write("[serve]\n" + "\n".join(lines) + "\n")
    config.close()
    process = subprocess.Popen(
        [sys.executable, "-m", "punctum", "serve", "--config", config.name, "--port",
         str(port), "--threads", str(threads)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited: {process.stderr.read().strip()[-500:]}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return process, url, config.name
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("server did not answer /healthz within 60 s")


async def run_load(url: str, clients: int, requests: int, seed: int,
                   deadline_s: float) -> dict:
    """Send `requests` requests from `clients` concurrent clients; collect outcomes."""
    rng = random.Random(seed)
    work = [make_request(rng) for _ in range(requests)]
    queue: asyncio.Queue = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)
    outcomes: list[tuple[str, float, int]] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        async def worker():
            while not queue.empty():
                body, n_words = queue.get_nowait()
                start = time.perf_counter()
                try:
                    response = await client.post("/v1/restore", json=body)
                    outcome = _outcome(response)
                except httpx.HTTPError as error:
                    outcome = f"error:{type(error).__name__}"
                outcomes.append((outcome, time.perf_counter() - start, n_words))

        started = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(clients))), deadline_s)
        elapsed = time.perf_counter() - started
    return summarise(outcomes, requests, elapsed)


def _outcome(response: httpx.Response) -> str:
    """'200', '429', ... or 'bad:<status>' when an error is not the JSON error shape."""
    if response.status_code == 200:
        return "200"
    try:
        error = response.json()["error"]
        assert error["status"] == response.status_code and error["message"]
    except (ValueError, KeyError, TypeError, AssertionError):
        return f"bad:{response.status_code}"
    return str(response.status_code)


def summarise(outcomes, requests: int, elapsed: float) -> dict:
    ok = [(latency, n) for outcome, latency, n in outcomes if outcome == "200"]
    latencies = sorted(latency for latency, _ in ok) or [float("nan")]

    def quantile(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {
        "requests": requests,
        "answered": len(outcomes),
        "lost": requests - len(outcomes),
        "statuses": dict(sorted(Counter(o for o, _, _ in outcomes).items())),
        "p50_ms": round(quantile(0.50), 1),
        "p90_ms": round(quantile(0.90), 1),
        "p99_ms": round(quantile(0.99), 1),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1),
        "seconds": round(elapsed, 2),
        "ok_per_s": round(len(ok) / elapsed, 1),
        "words_per_s": round(sum(n for _, n in ok) / elapsed),
    }


def phase(name: str, settings: dict, args) -> dict:
    process, url, config = start_server(settings, args.threads)
    try:
        result = asyncio.run(run_load(url, args.clients, args.requests, args.seed,
                                      args.deadline))
    finally:
        process.terminate()
        process.wait(10)
        os.unlink(config)
    print(f"{name}: {json.dumps(result)}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2, help="server ONNX threads")
    parser.add_argument("--tight-queue", type=int, default=8,
                        help="queue length of the over-limits server")
    parser.add_argument("--tight-timeout", type=float, default=2.0,
                        help="request timeout (s) of the over-limits server")
    parser.add_argument("--deadline", type=float, default=600, help="seconds per phase")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"# {datetime.date.today()} · {hardware()} · {args.clients} clients, "
          f"{args.requests} requests per phase", flush=True)
    within = phase("within limits", {}, args)
    over = phase("over limits", {"max_queue": args.tight_queue,
                                 "request_timeout_s": args.tight_timeout}, args)
    clean = all(s in ("200", "429", "503") for s in over["statuses"]) and over["lost"] == 0
    print(f"within limits: {within['statuses'].get('200', 0)}/{args.requests} succeeded, "
          f"{within['lost']} lost; over limits: clean refusals = {clean}")


if __name__ == "__main__":
    main()
