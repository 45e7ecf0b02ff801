"""The supervision tree, driven by real children that crash, exit and boot-fail on command."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest
from structlog.testing import capture_logs

import supervisor.tree as tree
from supervisor.errors import ChildStartError, RestartIntensityExceeded, SupervisorError
from supervisor.tree import (
    ChildSpec,
    Restart,
    Supervisor,
    shielded_cleanup,
)


class Boom(Exception):
    pass


class Lab:
    """Children that log their lifecycle and crash, return or fail to boot when told."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.boot_failures: dict[str, int] = {}
        self._orders: dict[str, tuple[anyio.Event, list[str]]] = {}

    def spec(
        self, child_id: str, restart: Restart = "permanent", shutdown: float = 1.0
    ) -> ChildSpec:
        async def start(task_status: anyio.abc.TaskStatus[Any]) -> None:
            generation = self.starts(child_id) + 1
            self.log.append(("start", child_id))
            if self.boot_failures.get(child_id, 0) > 0:
                self.boot_failures[child_id] -= 1
                raise Boom(f"{child_id} cannot boot")
            order: tuple[anyio.Event, list[str]] = (anyio.Event(), [])
            self._orders[child_id] = order
            task_status.started(f"{child_id}#{generation}")
            try:
                await order[0].wait()
            except anyio.get_cancelled_exc_class():
                self.log.append(("stop", child_id))
                raise
            if order[1] == ["crash"]:
                self.log.append(("crash", child_id))
                raise Boom(f"{child_id} crashed")
            self.log.append(("exit", child_id))

        return ChildSpec(child_id, start, restart=restart, shutdown=shutdown)

    def _order(self, child_id: str, what: str) -> None:
        event, box = self._orders.pop(child_id)
        box.append(what)
        event.set()

    def crash(self, child_id: str) -> None:
        self._order(child_id, "crash")

    def finish(self, child_id: str) -> None:
        self._order(child_id, "exit")

    def starts(self, child_id: str) -> int:
        return self.log.count(("start", child_id))

    def since(self, mark: int) -> list[tuple[str, str]]:
        return self.log[mark:]


async def wait_until(predicate: Callable[[], bool]) -> None:
    # The tree publishes no change events, so tests poll what a caller can observe.
    with anyio.fail_after(5):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.001)


async def wait_up(sup: Supervisor, lab: Lab, child_id: str, starts: int) -> None:
    """Wait until ``child_id`` was started ``starts`` times and is running again."""
    await wait_until(lambda: lab.starts(child_id) == starts)
    await wait_until(running(sup, child_id))


def ids(sup: Supervisor) -> list[str]:
    return [info.id for info in sup.which_children()]


def running(sup: Supervisor, *child_ids: str) -> Callable[[], bool]:
    def check() -> bool:
        states = {info.id: info.state for info in sup.which_children()}
        return all(states.get(i) == "running" for i in child_ids)

    return check


async def until_run_fails() -> None:
    """Park the host of a task group until a failing ``run()`` cancels it (or time out)."""
    with anyio.fail_after(5):
        await anyio.sleep_forever()


@asynccontextmanager
async def supervised(sup: Supervisor) -> AsyncIterator[Supervisor]:
    """Run ``sup`` for the body, then cancel it; a hang anywhere fails instead of blocking."""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            assert await tg.start(sup.run) is sup
            yield sup
            tg.cancel_scope.cancel()


async def test_public_surface_is_what_all_claims() -> None:
    for name in tree.__all__:
        assert hasattr(tree, name), name
    assert {"ChildSpec", "Supervisor", "shielded_cleanup", "Strategy"} <= set(tree.__all__)


async def test_children_start_in_order_and_stop_in_reverse() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a"), lab.spec("b"), lab.spec("c")])
    async with supervised(sup):
        assert lab.log == [("start", "a"), ("start", "b"), ("start", "c")]
        infos = sup.which_children()
        assert [(i.id, i.state, i.value, i.restarts) for i in infos] == [
            ("a", "running", "a#1", 0),
            ("b", "running", "b#1", 0),
            ("c", "running", "c#1", 0),
        ]
    assert lab.since(3) == [("stop", "c"), ("stop", "b"), ("stop", "a")]
    assert sup.which_children() == []


async def test_cancelling_run_propagates_and_is_not_swallowed() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a")])
    after_run: list[str] = []
    scope = anyio.CancelScope()

    async def runner(*, task_status: anyio.abc.TaskStatus[Supervisor]) -> None:
        with scope:
            await sup.run(task_status=task_status)
            after_run.append("run returned")

    async with anyio.create_task_group() as tg:
        await tg.start(runner)
        scope.cancel()
    assert scope.cancelled_caught
    assert after_run == []
    assert lab.log == [("start", "a"), ("stop", "a")]
    assert not sup.statistics().running


async def test_cancelling_run_during_a_boot_stops_what_started() -> None:
    lab = Lab()
    booting = anyio.Event()
    abandoned: list[str] = []

    async def slow_boot(task_status: anyio.abc.TaskStatus[Any]) -> None:
        booting.set()
        try:
            await anyio.sleep_forever()
        finally:
            abandoned.append("boot cancelled")
        task_status.started()

    sup = Supervisor("root", [lab.spec("a"), ChildSpec("slow", slow_boot), lab.spec("c")])
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(sup.run)
            await booting.wait()
            tg.cancel_scope.cancel()
    assert abandoned == ["boot cancelled"]
    assert lab.log == [("start", "a"), ("stop", "a")]
    assert sup.which_children() == []


async def test_boot_failure_stops_earlier_children_and_raises_child_start_error() -> None:
    lab = Lab()
    lab.boot_failures["b"] = 1
    sup = Supervisor("root", [lab.spec("a"), lab.spec("b"), lab.spec("c")])
    reached: list[Supervisor] = []

    class Status:
        def started(self, value: Any = None) -> None:
            reached.append(value)

    with pytest.raises(ChildStartError, match=r"'root'.*'b'") as info:
        await sup.run(task_status=Status())
    assert isinstance(info.value.__cause__, Boom)
    assert lab.log == [("start", "a"), ("start", "b"), ("stop", "a")]
    assert reached == []
    assert sup.which_children() == []


async def test_one_for_one_restarts_only_the_crashed_child() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a"), lab.spec("b"), lab.spec("c")])
    async with supervised(sup):
        lab.crash("b")
        await wait_until(lambda: lab.starts("b") == 2)
        await wait_until(running(sup, "b"))
        assert lab.since(3) == [("crash", "b"), ("start", "b")]
        assert ids(sup) == ["a", "b", "c"]
        b = sup.which_children()[1]
        assert (b.restarts, b.value) == (1, "b#2")


@pytest.mark.parametrize(
    ("restart", "how", "restarted"),
    [
        ("permanent", "crash", True),
        ("permanent", "exit", True),
        ("transient", "crash", True),
        ("transient", "exit", False),
        ("temporary", "crash", False),
        ("temporary", "exit", False),
    ],
)
async def test_restart_type_decides_whether_a_child_comes_back(
    restart: Restart, how: str, restarted: bool
) -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a", restart=restart), lab.spec("b")])
    async with supervised(sup):
        (lab.crash if how == "crash" else lab.finish)("a")
        if restarted:
            await wait_until(running(sup, "a"))
            await wait_until(lambda: lab.starts("a") == 2)
            assert ids(sup) == ["a", "b"]
        else:
            await wait_until(lambda: ids(sup) == ["b"])
            assert lab.starts("a") == 1
        assert lab.starts("b") == 1


async def test_one_for_all_stops_the_others_in_reverse_and_restarts_all_in_order() -> None:
    lab = Lab()
    specs = [lab.spec("a"), lab.spec("b"), lab.spec("c")]
    sup = Supervisor("root", specs, strategy="one_for_all")
    async with supervised(sup):
        lab.crash("b")
        await wait_until(running(sup, "a", "b", "c"))
        await wait_until(lambda: lab.starts("c") == 2)
        assert lab.since(3) == [
            ("crash", "b"),
            ("stop", "c"),
            ("stop", "a"),
            ("start", "a"),
            ("start", "b"),
            ("start", "c"),
        ]
        assert sup.statistics().restarts_total == 1


async def test_one_for_all_does_not_bring_back_a_temporary_sibling() -> None:
    lab = Lab()
    specs = [lab.spec("a"), lab.spec("t", restart="temporary"), lab.spec("c")]
    sup = Supervisor("root", specs, strategy="one_for_all")
    async with supervised(sup):
        lab.crash("a")
        await wait_until(lambda: lab.starts("c") == 2)
        await wait_until(running(sup, "a", "c"))
        assert ids(sup) == ["a", "c"]
        assert lab.starts("t") == 1


async def test_rest_for_one_restarts_the_crashed_child_and_those_after_it() -> None:
    lab = Lab()
    specs = [lab.spec("a"), lab.spec("b"), lab.spec("c"), lab.spec("d")]
    sup = Supervisor("root", specs, strategy="rest_for_one")
    async with supervised(sup):
        lab.crash("b")
        await wait_until(lambda: lab.starts("d") == 2)
        await wait_until(running(sup, "b", "c", "d"))
        assert lab.since(4) == [
            ("crash", "b"),
            ("stop", "d"),
            ("stop", "c"),
            ("start", "b"),
            ("start", "c"),
            ("start", "d"),
        ]
        assert lab.starts("a") == 1


async def test_intensity_exceeded_stops_everything_and_raises_from_run() -> None:
    lab = Lab()
    specs = [lab.spec("a"), lab.spec("b"), lab.spec("c")]
    sup = Supervisor("root", specs, max_restarts=2, max_seconds=60)
    with pytest.RaisesGroup(RestartIntensityExceeded) as info:
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            for n in (2, 3):
                lab.crash("b")
                await wait_up(sup, lab, "b", n)
            mark = len(lab.log)
            lab.crash("b")
            await until_run_fails()
    error = info.value.exceptions[0]
    assert isinstance(error, RestartIntensityExceeded)
    assert isinstance(error.__cause__, Boom)
    assert "'root'" in str(error)
    assert "2 restarts within 60" in str(error)
    assert "'b'" in str(error)
    assert lab.since(mark) == [("crash", "b"), ("stop", "c"), ("stop", "a")]
    assert sup.statistics().crashes_total == 3
    assert sup.which_children() == []


async def test_restarts_outside_the_window_are_forgotten() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a")], max_restarts=1, max_seconds=0.05)
    async with supervised(sup):
        for n in (2, 3, 4):
            lab.crash("a")
            await wait_up(sup, lab, "a", n)
            await anyio.sleep(0.1)
        assert sup.statistics().restarts_total == 3


async def test_max_restarts_zero_escalates_the_first_crash() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a")], max_restarts=0)
    with pytest.RaisesGroup(RestartIntensityExceeded):
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            lab.crash("a")
            await until_run_fails()
    assert lab.starts("a") == 1


def nested(inner: Supervisor) -> ChildSpec:
    async def start(task_status: anyio.abc.TaskStatus[Any]) -> None:
        await inner.run(task_status=task_status)

    return ChildSpec(inner.name, start)


async def test_a_failing_inner_supervisor_is_restarted_by_its_parent() -> None:
    lab = Lab()
    inner = Supervisor("inner", [lab.spec("w")], max_restarts=0)
    outer = Supervisor("outer", [nested(inner), lab.spec("x")])
    async with supervised(outer):
        lab.crash("w")
        await wait_until(lambda: lab.starts("w") == 2)
        await wait_until(running(outer, "inner"))
        assert outer.statistics().crashes_total == 1
        assert outer.which_children()[0].restarts == 1
        assert lab.starts("x") == 1


async def test_escalation_climbs_until_a_supervisor_can_absorb_it() -> None:
    lab = Lab()
    inner = Supervisor("inner", [lab.spec("w")], max_restarts=0)
    outer = Supervisor("outer", [lab.spec("x"), nested(inner)], max_restarts=0)
    with pytest.RaisesGroup(RestartIntensityExceeded) as info:
        async with anyio.create_task_group() as tg:
            await tg.start(outer.run)
            lab.crash("w")
            await until_run_fails()
    error = info.value.exceptions[0]
    assert "'outer'" in str(error)
    assert isinstance(error.__cause__, RestartIntensityExceeded)
    assert "'inner'" in str(error.__cause__)
    assert lab.log == [("start", "x"), ("start", "w"), ("crash", "w"), ("stop", "x")]


async def test_a_restart_that_fails_its_handshake_counts_as_a_crash() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a")], max_restarts=5)
    async with supervised(sup):
        lab.boot_failures["a"] = 2
        lab.crash("a")
        await wait_until(lambda: lab.starts("a") == 4)
        await wait_until(running(sup, "a"))
        stats = sup.statistics()
        assert (stats.crashes_total, stats.restarts_total) == (3, 3)


async def test_a_restart_handshake_failure_is_subject_to_intensity() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a")], max_restarts=1)
    with pytest.RaisesGroup(RestartIntensityExceeded) as info:
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            lab.boot_failures["a"] = 1
            lab.crash("a")
            await until_run_fails()
    assert "cannot boot" in str(info.value.exceptions[0].__cause__)
    assert lab.starts("a") == 2


async def test_start_child_and_terminate_child() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a")])
    async with supervised(sup):
        assert await sup.start_child(lab.spec("x")) == "x#1"
        assert await sup.start_child(lab.spec("y")) == "y#1"
        assert ids(sup) == ["a", "x", "y"]
        with pytest.raises(SupervisorError, match="'x'"):
            await sup.start_child(lab.spec("x"))
        lab.boot_failures["z"] = 1
        with pytest.raises(ChildStartError, match="'z'") as info:
            await sup.start_child(lab.spec("z"))
        assert isinstance(info.value.__cause__, Boom)
        assert ids(sup) == ["a", "x", "y"]
        assert await sup.start_child(lab.spec("z")) == "z#2"
        await sup.terminate_child("z")
        assert ids(sup) == ["a", "x", "y"]
        assert lab.log[-1] == ("stop", "z")
        with pytest.raises(SupervisorError, match="'nope'"):
            await sup.terminate_child("nope")
        lab.crash("x")
        await wait_until(lambda: lab.starts("x") == 2)
        await wait_until(running(sup, "x"))
        mark = len(lab.log)
    assert lab.since(mark) == [("stop", "y"), ("stop", "x"), ("stop", "a")]


async def test_start_child_needs_a_running_supervisor() -> None:
    lab = Lab()
    sup = Supervisor("root")
    with pytest.raises(SupervisorError, match="not running"):
        await sup.start_child(lab.spec("x"))
    async with supervised(sup):
        pass
    with pytest.raises(SupervisorError, match="not running"):
        await sup.start_child(lab.spec("x"))
    assert lab.log == []


async def test_start_child_is_refused_while_the_supervisor_stops() -> None:
    lab = Lab()
    refused: list[str] = []

    async def needy(task_status: anyio.abc.TaskStatus[Any]) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with shielded_cleanup():
                try:
                    await sup.start_child(lab.spec("late"))
                except SupervisorError as exc:
                    refused.append(str(exc))

    sup = Supervisor("root", [ChildSpec("n", needy, shutdown=0.5)])
    async with supervised(sup):
        pass
    assert len(refused) == 1
    assert "not running" in refused[0]
    assert lab.log == []


async def test_child_states_while_starting_restarting_and_stopping() -> None:
    release = anyio.Event()
    boots = 0
    seen: dict[str, str] = {}

    async def slow(task_status: anyio.abc.TaskStatus[Any]) -> None:
        nonlocal boots
        boots += 1
        if boots > 1:
            await release.wait()
        task_status.started(boots)
        try:
            await anyio.sleep_forever()
        finally:
            with shielded_cleanup():
                await release.wait()

    sup = Supervisor("root")

    def state() -> str | None:
        return {i.id: i.state for i in sup.which_children()}.get("s")

    async with supervised(sup), anyio.create_task_group() as tg:
        tg.start_soon(sup.start_child, ChildSpec("s", slow))
        await wait_until(lambda: state() == "running")
        tg.start_soon(sup.terminate_child, "s")
        await wait_until(lambda: state() == "stopping")
        release.set()
        await wait_until(lambda: state() is None)
        release = anyio.Event()
        tg.start_soon(sup.start_child, ChildSpec("s", slow))
        await wait_until(lambda: state() is not None)
        seen["boot"] = str(state())
        release.set()
        await wait_until(lambda: state() == "running")
    assert seen == {"boot": "starting"}


async def test_a_crashed_child_reads_restarting_until_its_new_handshake() -> None:
    crash, gate = anyio.Event(), anyio.Event()
    boots = 0

    async def flaky(task_status: anyio.abc.TaskStatus[Any]) -> None:
        nonlocal boots
        boots += 1
        if boots == 1:
            task_status.started(boots)
            await crash.wait()
            raise Boom("first life over")
        await gate.wait()
        task_status.started(boots)
        await anyio.sleep_forever()

    sup = Supervisor("root", [ChildSpec("f", flaky)])
    async with supervised(sup):
        crash.set()
        await wait_until(lambda: boots == 2)
        [info] = sup.which_children()
        assert (info.state, info.value, info.restarts) == ("restarting", 1, 1)
        gate.set()
        await wait_until(running(sup, "f"))
        assert sup.which_children()[0].value == 2


async def test_shielded_cleanup_gives_the_child_its_shutdown_budget() -> None:
    budgets: list[float] = []
    cleaned: list[str] = []

    async def careful(task_status: anyio.abc.TaskStatus[Any]) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with shielded_cleanup() as scope:
                budgets.append(scope.deadline - anyio.current_time())
                await anyio.sleep(0.02)
                cleaned.append("flushed")

    sup = Supervisor("root", [ChildSpec("c", careful, shutdown=3.0)])
    async with supervised(sup):
        pass
    assert cleaned == ["flushed"]
    assert 2.0 < budgets[0] <= 3.0


async def test_shielded_cleanup_cannot_outlast_the_budget() -> None:
    cut_short: list[bool] = []

    async def stubborn(task_status: anyio.abc.TaskStatus[Any]) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with shielded_cleanup() as scope:
                await anyio.sleep(60)
            cut_short.append(scope.cancelled_caught)

    sup = Supervisor("root", [ChildSpec("c", stubborn, shutdown=0.02)])
    async with supervised(sup):
        with anyio.fail_after(5):
            await sup.terminate_child("c")
    assert cut_short == [True]


async def test_shielded_cleanup_outside_a_child_uses_the_default() -> None:
    with shielded_cleanup() as scope:
        budget = scope.deadline - anyio.current_time()
    assert tree.DEFAULT_SHUTDOWN - 1 < budget <= tree.DEFAULT_SHUTDOWN
    assert scope.shield


async def test_a_child_overrunning_its_shutdown_is_reported_and_awaited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tree, "_OVERRUN_GRACE", 0.0)
    finished: list[str] = []

    async def deaf(task_status: anyio.abc.TaskStatus[Any]) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.1)
            finished.append("cleanup done")

    lab = Lab()
    sup = Supervisor("root", [lab.spec("polite"), ChildSpec("d", deaf, shutdown=0.01)])
    with capture_logs() as logs:
        async with supervised(sup):
            await sup.terminate_child("d")
            assert finished == ["cleanup done"]
    assert lab.log == [("start", "polite"), ("stop", "polite")]
    overruns = [e for e in logs if e["event"] == "child.shutdown_overrun"]
    assert overruns == [
        {
            "event": "child.shutdown_overrun",
            "log_level": "warning",
            "supervisor": "root",
            "child": "d",
            "shutdown": 0.01,
        }
    ]


async def test_lifecycle_is_logged_with_supervisor_and_child() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a"), lab.spec("t", restart="transient")], max_restarts=1)
    with capture_logs() as logs, pytest.RaisesGroup(RestartIntensityExceeded):
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            lab.finish("t")
            await wait_until(lambda: ids(sup) == ["a"])
            lab.crash("a")
            await wait_until(lambda: lab.starts("a") == 2)
            await wait_until(running(sup, "a"))
            lab.crash("a")
            await until_run_fails()
    events = [(e["event"], e.get("child")) for e in logs]
    assert events == [
        ("child.started", "a"),
        ("child.started", "t"),
        ("child.exited", "t"),
        ("child.crashed", "a"),
        ("child.restarting", "a"),
        ("child.started", "a"),
        ("child.crashed", "a"),
        ("supervisor.intensity_exceeded", "a"),
    ]
    assert all(e["supervisor"] == "root" for e in logs)
    crash = next(e for e in logs if e["event"] == "child.crashed")
    assert isinstance(crash["exc_info"], Boom)


async def test_statistics_count_children_crashes_and_restarts() -> None:
    lab = Lab()
    sup = Supervisor("root", [lab.spec("a"), lab.spec("b")], strategy="one_for_all")
    assert sup.statistics().running is False
    async with supervised(sup):
        lab.crash("a")
        await wait_until(lambda: lab.starts("b") == 2)
        await wait_until(running(sup, "a", "b"))
        lab.finish("b")
        await wait_until(lambda: lab.starts("b") == 3)
        await wait_until(running(sup, "a", "b"))
        stats = sup.statistics()
        assert (stats.name, stats.strategy, stats.running) == ("root", "one_for_all", True)
        assert (stats.children, stats.crashes_total, stats.restarts_total) == (2, 1, 2)
        assert [i.restarts for i in sup.which_children()] == [2, 2]


async def test_duplicate_static_ids_are_refused() -> None:
    lab = Lab()
    with pytest.raises(SupervisorError, match="'a'"):
        Supervisor("root", [lab.spec("a"), lab.spec("a")])
