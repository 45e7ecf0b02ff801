"""A soul's agenda: the tasks with ``@due`` in its TASKS.md, kept in the ``due`` table.

The file is what people (and the soul) write; the table is the source of truth for
wake-ups. :meth:`Agenda.sync` reconciles the two in one transaction
(:meth:`souls.store.interface.SoulStore.record_due`):

* a pending task in the file is (re)recorded under its key (text + due time), so
  editing the time of a task replaces it with a new one;
* a task that has not fired and is no longer pending in the file (checked, deleted,
  edited) is cancelled;
* a task that fired stays fired: re-reading the file never fires it again;
* a task whose text holds a secret is never recorded: it is reported as a problem of its
  line, without its text (the hygiene gate's credential rule).

:meth:`Agenda.add` (a reminder) appends a line only when the file does not hold that task
yet, so setting the same reminder twice stores it once.
"""

from __future__ import annotations

import msgspec

from souls.actor.brain import Brain
from souls.intake.field_screen import WITHHELD
from souls.intake.hygiene_gate import HygieneGate
from souls.knowledge.tasks import append_task, parse_tasks, task_line
from souls.results import DueTask, TaskProblem, TasksResult
from souls.store.interface import SoulStore

__all__ = ["Agenda"]

_FIRED_SHOWN = 20


class Agenda:
    def __init__(self, store: SoulStore, brain: Brain, gate: HygieneGate) -> None:
        self._store = store
        self._brain = brain
        self._gate = gate

    async def sync(self) -> TasksResult:
        """Re-read TASKS.md into the due table; what is pending afterwards."""
        parsed = parse_tasks(await self._brain.tasks())
        errors = [TaskProblem(e.line, e.source, e.problem) for e in parsed.errors]
        pending = {}
        for task in parsed.pending():
            what = self._gate.find_secret(task.text)
            if what is None:
                pending[task.key] = task
            else:
                problem = f"looks like it contains a credential ({what}); remove the secret"
                errors.append(TaskProblem(task.line, WITHHELD, problem))
        await self._store.record_due(
            [DueTask(t.key, t.due, t.text, t.line) for t in pending.values()]
        )
        errors.sort(key=lambda problem: problem.line)
        return TasksResult(await self.pending(), errors, await self._fired())

    async def pending(self) -> list[DueTask]:
        return await self._store.pending_due()

    async def task(self, key: str) -> DueTask | None:
        """The task under ``key`` if it is still to fire."""
        return await self._store.due_task(key)

    async def add(self, text: str, due: float) -> TasksResult:
        """Append a task line to TASKS.md (keeping the user's formatting), then sync.

        Idempotent: when the file already holds the task (the same key: text and due time,
        pending or checked) nothing is written, and the result says ``existing``; a second
        line would only be reported as a duplicate of the first."""
        line = task_line(text, due)
        [task] = parse_tasks(line).tasks
        document = await self._brain.tasks()
        existing = any(t.key == task.key for t in parse_tasks(document).tasks)
        if not existing:
            await self._brain.write_tasks(append_task(document, line))
        result = await self.sync()
        return msgspec.structs.replace(result, key=task.key, existing=existing)

    async def _fired(self) -> list[DueTask]:
        return await self._store.fired_due(_FIRED_SHOWN)
