"""Dynamic batching: requests that arrive close together share one model call.

Requests wait in a bounded asyncio queue; one loop task takes the first waiting request,
gathers more for up to `wait_s` or until `max_texts` texts, groups them by restore options
and runs each group through `Punctuator.restore_batch` (or `restore_detailed`, for requests
that want each word's labels) on a worker thread, so the event loop never blocks on the
model. A full queue refuses at once (QueueFull -> 429); a request abandoned by its caller
(timeout) is skipped when its turn comes. A model call that fails is run again request by
request, so that one request's bad text fails only that request.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any


class QueueFull(Exception):
    """The batcher's queue is at its limit."""


class ShuttingDown(Exception):
    """The server stopped before the request was answered."""


@dataclass
class _Request:
    texts: list[str]
    options: Any  # RestoreOptions (frozen, hashable): requests group by it
    future: asyncio.Future = field(repr=False)
    detailed: bool = False  # answer Restored.to_dict() objects instead of strings


class DynamicBatcher:
    """Joins restore requests for one Punctuator into batched model calls.

    Args:
        punctuator: anything with restore_batch(texts, options) -> list[str] (and, for
            detailed requests, restore_detailed(texts, options) -> list[Restored]).
        executor: where model calls run (one worker thread keeps them in order).
        max_texts: texts per model call at most (a larger single request runs alone).
        wait_s: how long to wait for more requests after the first one arrives.
        max_queue: requests waiting at most; more raise QueueFull.
    """

    def __init__(self, punctuator, executor: Executor, max_texts: int = 64,
                 wait_s: float = 0.005, max_queue: int = 256) -> None:
        self.punctuator = punctuator
        self.executor = executor
        self.max_texts = max_texts
        self.wait_s = wait_s
        self.queue: asyncio.Queue[_Request] = asyncio.Queue(maxsize=max_queue)
        self._task: asyncio.Task | None = None
        self._running: list[_Request] = []  # the requests of the model call under way
        self.batches = 0  # model calls made (for /healthz and tests)

    def start(self) -> None:
        """Start the batching loop on the running event loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Stop the loop; requests waiting or in the model call fail with ShuttingDown."""
        pending = list(self._running)  # read before the cancelled call clears it
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        while not self.queue.empty():
            pending.append(self.queue.get_nowait())
        for request in pending:
            if not request.future.done():
                request.future.set_exception(ShuttingDown("the server is shutting down"))

    @property
    def waiting(self) -> int:
        return self.queue.qsize()

    async def submit(self, texts: list[str], options, detailed: bool = False) -> list:
        """Restored texts, in order (with `detailed`, each as `Restored.to_dict()`); raises
        QueueFull when the queue is at its limit."""
        future = asyncio.get_running_loop().create_future()
        try:
            self.queue.put_nowait(_Request(list(texts), options, future, detailed))
        except asyncio.QueueFull:
            raise QueueFull(f"{self.queue.maxsize} requests are already waiting") from None
        return await future

    async def _loop(self) -> None:
        while True:
            batch = await self._gather()
            for (options, detailed), requests in _by_options(batch).items():
                await self._run(requests, options, detailed)

    async def _gather(self) -> list[_Request]:
        """The first waiting request plus those that arrive within wait_s, up to max_texts."""
        batch = [await self.queue.get()]
        size = len(batch[0].texts)
        deadline = time.monotonic() + self.wait_s
        while size < self.max_texts:
            left = deadline - time.monotonic()
            try:
                if left > 0:
                    request = await asyncio.wait_for(self.queue.get(), left)
                else:  # past the deadline: take only what is already waiting
                    request = self.queue.get_nowait()
            except (TimeoutError, asyncio.QueueEmpty):
                break
            batch.append(request)
            size += len(request.texts)
        return [r for r in batch if not r.future.done()]  # skip abandoned requests

    async def _run(self, requests: list[_Request], options, detailed: bool = False) -> None:
        texts = [text for request in requests for text in request.texts]
        loop = asyncio.get_running_loop()
        self._running = requests
        call = self._detailed if detailed else self.punctuator.restore_batch
        try:
            restored = await loop.run_in_executor(self.executor, call, texts, options)
        except Exception as error:  # one bad batch fails its requests, not the server
            self._running = []
            if len(requests) > 1:  # one request's bad text must not fail the others
                for request in requests:
                    await self._run([request], options, detailed)
                return
            if not requests[0].future.done():
                requests[0].future.set_exception(error)
            return
        finally:
            self._running = []
        self.batches += 1
        start = 0
        for request in requests:
            end = start + len(request.texts)
            if not request.future.done():
                request.future.set_result(restored[start:end])
            start = end


    def _detailed(self, texts: list[str], options) -> list[dict]:
        return [r.to_dict() for r in self.punctuator.restore_detailed(texts, options)]


def _by_options(batch: list[_Request]) -> dict[tuple[Any, bool], list[_Request]]:
    """Requests grouped by (options, detailed): each group is one model call."""
    groups: dict[tuple[Any, bool], list[_Request]] = {}
    for request in batch:
        groups.setdefault((request.options, request.detailed), []).append(request)
    return groups
