"""The task store on JetStream key-value: the runtime's record bytes under the key ``<id>`` of one bucket, for tasks
completed by many hosts (fisk-ai itself has no stream backend for tasks).

Submitting publishes with "the key must be absent", so of two submitters of one id exactly one succeeds.
Completing reads the record and its revision, refuses a completed one, and writes the answer with "the revision
must still be the one read": of several completers exactly one writes; the others re-read, find the record
completed and get ``TaskAlreadyCompleted`` naming when the first answer landed.
"""

from __future__ import annotations

from typing import Final

from journaltools._base.aio import run_sync
from journaltools.errors import InvalidTask, TaskExists, TaskNotFound
from journaltools.sources.nats import JetStreamOptions
from journaltools.stores.natskv import BucketLocation, CasBucket, parse_bucket_url
from journaltools.stores.tasks import (
    STATE_COMPLETED,
    Clock,
    StoredTask,
    Task,
    TaskStore,
    already_completed,
    stored_task,
    validate_task_id,
)

DEFAULT_BUCKET: Final = "TASKS"
#: Completion attempts: each lost one means another writer changed the record, which only a completion does, so
#: the next read already refuses; the bound only guards against a misbehaving writer.
MAX_COMPLETE_ATTEMPTS: Final = 8


class NatsTaskStore(TaskStore):
    """Tasks in the key-value bucket of ``nats://host:port/BUCKET`` (default bucket ``TASKS``)."""

    def __init__(self, bucket: CasBucket, now: Clock | None = None) -> None:
        super().__init__(now)
        self.bucket = bucket
        self.url = bucket.url

    @classmethod
    def open(
        cls, url: str, *, create: bool = False, options: JetStreamOptions | None = None, now: Clock | None = None
    ) -> NatsTaskStore:
        """Open (``create=True``: create the bucket if missing) ``nats://host:port/BUCKET[?replicas=N]``."""
        location: BucketLocation = parse_bucket_url(url, DEFAULT_BUCKET)
        return cls(run_sync(CasBucket.open_async(location, create=create, options=options)), now)

    def _read(self, task_id: str) -> tuple[Task, int]:
        stored = self.bucket.get(validate_task_id(task_id))
        if stored is None:
            raise TaskNotFound(f"task {task_id!r} is not in {self.url}")
        found = stored_task(task_id, stored.data, task_id)
        if found.task is None or found.problem is not None:
            raise InvalidTask(f"task record {task_id!r} in {self.url}: {found.problem}")
        return found.task, stored.revision

    def submit(self, request: bytes) -> Task:
        task = self._new(request)
        if self.bucket.put(task.id, task.to_bytes(), 0) is None:
            raise TaskExists(f"task {task.id!r} already exists in {self.url}")
        return task

    def get(self, task_id: str) -> Task:
        return self._read(task_id)[0]

    def complete(self, task_id: str, result: bytes) -> Task:
        for _ in range(MAX_COMPLETE_ATTEMPTS):
            current, revision = self._read(task_id)
            if current.state == STATE_COMPLETED:
                raise already_completed(current)
            done = self._completed(current, result)
            if self.bucket.put(task_id, done.to_bytes(), revision) is not None:
                return done
        raise InvalidTask(f"task {task_id!r} in {self.url}: changed under {MAX_COMPLETE_ATTEMPTS} completion attempts")

    def scan(self) -> list[StoredTask]:
        keys = [key for key in self.bucket.keys("") if "." not in key]
        values = self.bucket.get_many(keys)
        return [stored_task(key, values[key].data, key) for key in sorted(values)]

    def close(self) -> None:
        self.bucket.close()


__all__ = ["DEFAULT_BUCKET", "NatsTaskStore"]
