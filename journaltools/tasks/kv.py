"""The task store on JetStream key-value: one key per task in a bucket, for tasks completed by many hosts.

Creation publishes with "the key must be absent", so of two creators of one id exactly one succeeds.
Completion reads the task and its revision, refuses unless it is ``pending``, and writes the outcome with
"the revision must still be the one read": of several completers exactly one writes, the others re-read,
find the task completed and are refused (``TaskAlreadyCompleted``). A success and a failure racing are decided
the same way; nothing ever overwrites a completed task.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from journaltools.aio import run_sync
from journaltools.backends.nats_connection import JetStreamOptions
from journaltools.errors import TaskError, TaskNotFound
from journaltools.natskv import BucketLocation, CasBucket, parse_bucket_url
from journaltools.ops.clock import now_ts
from journaltools.protocol.runid import is_valid_run_id, validate_run_id
from journaltools.tasks import Task, TaskStore, already_completed

DEFAULT_BUCKET = "TASKS"
#: Completion attempts before giving up: each lost attempt means another writer changed the task, which only a
#: completion does, so the second read already refuses; the bound only guards against a misbehaving writer.
MAX_COMPLETE_ATTEMPTS = 8


class NatsTaskStore(TaskStore):
    """Tasks in the key-value bucket of ``nats://host:port/BUCKET`` (default bucket ``TASKS``)."""

    def __init__(self, bucket: CasBucket) -> None:
        self.bucket = bucket
        self.url = bucket.url

    @classmethod
    async def open_async(
        cls, location: BucketLocation, *, create: bool = False, options: JetStreamOptions | None = None
    ) -> NatsTaskStore:
        return cls(await CasBucket.open_async(location, create=create, options=options))

    @classmethod
    def open(cls, url: str, *, create: bool = False, options: JetStreamOptions | None = None) -> NatsTaskStore:
        """Open (``create=True``: create the bucket if missing) ``nats://host:port/BUCKET[?replicas=N]``."""
        return run_sync(cls.open_async(parse_bucket_url(url, DEFAULT_BUCKET), create=create, options=options))

    async def create_async(self, task_id: str, request: Any, *, ts: str | None = None) -> Task:
        task = Task(validate_run_id(task_id), "pending", request, created=ts or now_ts())
        if await self.bucket.put_async(task_id, task.to_bytes(), 0) is None:
            raise TaskError(f"task {task_id!r} already exists in {self.url}")
        return task

    async def _read(self, task_id: str) -> tuple[Task, int]:
        stored = await self.bucket.get_async(validate_run_id(task_id))
        if stored is None:
            raise TaskNotFound(f"task {task_id!r} is not in {self.url}")
        return Task.from_bytes(stored.data, task_id, self.url), stored.revision

    async def get_async(self, task_id: str) -> Task:
        return (await self._read(task_id))[0]

    async def complete_async(
        self, task_id: str, *, result: Any = None, error: str | None = None, ts: str | None = None
    ) -> Task:
        for _ in range(MAX_COMPLETE_ATTEMPTS):
            current, revision = await self._read(task_id)
            if current.state != "pending":
                raise already_completed(current)
            done = current.completed_as(result, error, ts)
            if await self.bucket.put_async(task_id, done.to_bytes(), revision) is not None:
                return done
        raise TaskError(f"task {task_id!r} in {self.url}: changed under {MAX_COMPLETE_ATTEMPTS} completion attempts")

    async def get_many_async(self, task_ids: Iterable[str]) -> dict[str, Task]:
        wanted = [task_id for task_id in dict.fromkeys(task_ids) if is_valid_run_id(task_id)]
        stored = await self.bucket.get_many_async(wanted)
        return {task_id: Task.from_bytes(value.data, task_id, self.url) for task_id, value in stored.items()}

    async def aclose(self) -> None:
        await self.bucket.aclose()

    # -- the blocking face -------------------------------------------------------------------------

    def create(self, task_id: str, request: Any, *, ts: str | None = None) -> Task:
        return run_sync(self.create_async(task_id, request, ts=ts))

    def get(self, task_id: str) -> Task:
        return run_sync(self.get_async(task_id))

    def complete(self, task_id: str, *, result: Any = None, error: str | None = None, ts: str | None = None) -> Task:
        return run_sync(self.complete_async(task_id, result=result, error=error, ts=ts))

    def get_many(self, task_ids: Iterable[str]) -> dict[str, Task]:
        return run_sync(self.get_many_async(task_ids))

    def close(self) -> None:
        run_sync(self.aclose())


__all__ = ["DEFAULT_BUCKET", "NatsTaskStore"]
