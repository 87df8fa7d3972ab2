"""Graph kernels' constructs (frontend/graph.py): `qd.graph.do_while` levels among other statements,
`qd.graph.parallel_context` regions, `qd.checkpoint` stages with yield and resume. Each result is checked
against the same computation written in Python; on the emulated CUDA backend the host runs the plan's steps."""

from __future__ import annotations

import dataclasses
import re
import warnings
from enum import IntEnum

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang import impl

I1 = qd.types.NDArray[qd.i32, 1]
I0 = qd.types.NDArray[qd.i32, 0]


def _scalar(v: int) -> qd.Ndarray:
    a = qd.ndarray(qd.i32, ())
    a.from_numpy(np.array(v, np.int32))
    return a


def test_nested_do_whiles_among_statements_that_run_once() -> None:
    @qd.kernel(graph=True)
    def k(x: I1, seen: I0, outer: I0, inner: I0):
        seen[()] += 1  # once
        for i in range(x.shape[0]):
            x[i] += 100
        while qd.graph.do_while(outer):
            inner[()] = 3
            while qd.graph.do_while(inner):
                for i in range(x.shape[0]):
                    x[i] += i
                inner[()] -= 1
            outer[()] -= 1
        for i in range(x.shape[0]):
            x[i] *= 2

    x, seen, outer, inner = qd.ndarray(qd.i32, (16,)), _scalar(0), _scalar(4), _scalar(0)
    k(x, seen, outer, inner)
    n = np.arange(16)
    np.testing.assert_array_equal(x.to_numpy(), (100 + 4 * 3 * n) * 2)
    assert int(seen.to_numpy()) == 1 and int(outer.to_numpy()) == 0
    levels = k._primal.graph_do_while_levels
    assert [(lv.cond_arg_name, lv.parent_id) for lv in levels] == [("outer", -1), ("inner", 0)]
    assert impl.get_runtime().prog.get_num_offloaded_tasks_on_last_call() >= 3
    assert impl.get_runtime().prog.get_graph_cache_size() == 0


def test_a_do_while_runs_its_body_once_when_the_flag_starts_at_zero() -> None:
    @qd.kernel(graph=True)
    def k(x: I1, c: I0):
        while qd.graph.do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1

    x = qd.ndarray(qd.i32, (4,))
    k(x, _scalar(0))
    np.testing.assert_array_equal(x.to_numpy(), np.ones(4))


def test_loops_in_a_do_while_stay_parallel() -> None:
    @qd.kernel(graph=True)
    def k(x: I1, c: I0):
        while qd.graph.do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1
            c[()] -= 1

    k(qd.ndarray(qd.i32, (4,)), _scalar(2))
    text = next(iter(k._launchers.values())).compiled.ir_text
    assert re.search(r"\n  while:\n(    .*\n)*    %\d+ = for range\(.*\) parallel:\n", text), text
    plan = getattr(next(iter(k._launchers.values())), "plan", None)
    if plan is not None:  # the CUDA backend: the host runs the loop, the parallel loop is a task of its own
        assert plan.program is not None and any(step[0] == "loop" for step in plan.program if isinstance(step, list))


def test_random_draws_differ_between_passes_of_a_do_while() -> None:
    @qd.kernel(graph=True)
    def k(out: qd.types.NDArray[qd.f32, 2], c: I0):
        while qd.graph.do_while(c):
            for i in range(out.shape[1]):
                out[c[()] - 1, i] = qd.random()
            c[()] -= 1

    out = qd.ndarray(qd.f32, (3, 64))
    k(out, _scalar(3))
    rows = out.to_numpy()
    assert not np.array_equal(rows[0], rows[1]) and not np.array_equal(rows[1], rows[2])
    assert ((rows >= 0) & (rows < 1)).all()


def test_parallel_sections_give_the_serial_results() -> None:
    @qd.kernel(graph=True)
    def k(x: qd.types.NDArray[qd.f32, 2], y: qd.types.NDArray[qd.f32, 1], c: I0):
        while qd.graph.do_while(c):
            with qd.graph.parallel_context():
                for b in qd.static(range(2)):
                    with qd.graph.parallel():
                        for i in range(x.shape[1]):
                            x[b, i] += b + 1
                if qd.static(True):
                    with qd.graph.parallel():
                        y[0] += 1.0
            c[()] -= 1

    x, y = qd.ndarray(qd.f32, (2, 8)), qd.ndarray(qd.f32, (1,))
    k(x, y, _scalar(3))
    np.testing.assert_array_equal(x.to_numpy(), np.array([[3.0] * 8, [6.0] * 8]))
    assert y.to_numpy()[0] == 3.0


class Stage(IntEnum):
    A = 7
    B = 8


def test_a_yield_skips_the_later_stages_and_resume_skips_the_earlier_ones() -> None:
    @qd.kernel(graph=True, checkpoints=True)
    def k(x: I1, first: I0, second: I0):
        for i in range(x.shape[0]):  # stage 0 (implicit)
            x[i] += 1
        with qd.checkpoint(Stage.A, yield_on=first):
            for i in range(x.shape[0]):
                x[i] += 10
        with qd.checkpoint(Stage.B, yield_on=second):
            for i in range(x.shape[0]):
                x[i] += 100
        for i in range(x.shape[0]):
            x[i] += 1000

    x, first, second = qd.ndarray(qd.i32, (4,)), _scalar(1), _scalar(1)
    status = k(x, first, second)
    assert status.yielded and status.checkpoint is Stage.A  # the first yielder wins; B never ran
    np.testing.assert_array_equal(x.to_numpy(), np.full(4, 11))
    first.from_numpy(np.array(0, np.int32))
    status = k.resume(x, first, second, from_checkpoint=Stage.B)  # A skipped; B yields again
    assert status.yielded and status.checkpoint is Stage.B
    np.testing.assert_array_equal(x.to_numpy(), np.full(4, 111))
    second.from_numpy(np.array(0, np.int32))
    status = k(x, first, second)
    assert not status.yielded and status.checkpoint is None and repr(status) == "GraphStatus(yielded=False)"
    np.testing.assert_array_equal(x.to_numpy(), np.full(4, 111 + 1111))
    assert k._primal.checkpoint_user_labels_by_cp_id == [None, Stage.A, Stage.B, None]
    assert k._primal.checkpoint_yield_on_args == [None, "first", "second", None]
    with pytest.raises(RuntimeError, match=r"Available cp_id labels .*\[<Stage.A: 7>, <Stage.B: 8>\]"):
        k.resume(x, first, second, from_checkpoint=9)
    with pytest.raises(RuntimeError, match="must be an int or IntEnum"):
        k.resume(x, first, second, from_checkpoint=1.5)


def test_a_yield_in_a_do_while_leaves_the_loop_and_resume_starts_mid_pass() -> None:
    @qd.kernel(graph=True, checkpoints=True)
    def k(x: I1, c: I0, flag: I0):
        while qd.graph.do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1
            with qd.checkpoint(0, yield_on=flag):
                for i in range(x.shape[0]):
                    x[i] += 10
            for _ in range(1):
                c[()] -= 1

    x, c, flag = qd.ndarray(qd.i32, (2,)), _scalar(3), _scalar(1)
    status = k(x, c, flag)
    assert status.yielded and status.checkpoint == 0 and int(c.to_numpy()) == 3
    flag.from_numpy(np.array(0, np.int32))
    assert not k.resume(x, c, flag, from_checkpoint=0).yielded
    # launch: 11; resumed pass: +10 (its first stage skipped), then two whole passes: +22
    np.testing.assert_array_equal(x.to_numpy(), np.full(2, 11 + 10 + 22))
    assert int(c.to_numpy()) == 0


def test_a_checkpoints_kernel_without_a_yielding_stage_returns_none() -> None:
    @qd.kernel(graph=True, checkpoints=True)
    def k(x: I1):
        for i in range(x.shape[0]):
            x[i] += 1

    x = qd.ndarray(qd.i32, (3,))
    assert k(x) is None and k(x) is None  # (the second call takes the fast path)
    np.testing.assert_array_equal(x.to_numpy(), np.full(3, 2))
    with pytest.raises(RuntimeError, match="only valid for kernels that contain"):
        k.resume(x, from_checkpoint=0)


def test_python_scope_constructs_do_nothing() -> None:
    ran = []
    with qd.checkpoint(0, None), qd.graph.parallel_context(), qd.graph.parallel():
        ran.append(1)
    assert ran == [1]
    assert qd.graph.parallel is qd.graph_parallel and qd.graph.do_while is qd.graph_do_while


def test_the_flat_spelling_warns() -> None:
    @qd.kernel(graph=True)
    def k(x: I1, c: I0):
        while qd.graph_do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1

    with pytest.warns(DeprecationWarning, match=r"use qd\.graph\.do_while\(\)"):
        k(qd.ndarray(qd.i32, (2,)), _scalar(0))

    @qd.kernel(graph=True)
    def canonical(x: I1, c: I0):
        while qd.graph.do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        canonical(qd.ndarray(qd.i32, (2,)), _scalar(0))


def test_misplaced_constructs_are_located_errors() -> None:
    @qd.kernel(graph=True)
    def in_a_loop(x: I1, c: I0):
        for _ in range(2):
            while qd.graph.do_while(c):
                x[0] += 1

    with pytest.raises(qd.QuadrantsSyntaxError, match="kernel top level") as e:
        in_a_loop(qd.ndarray(qd.i32, (2,)), _scalar(0))
    assert e.value.loc is not None and "qd.graph.do_while(c)" in e.value.loc.line_text

    @qd.kernel(graph=True)
    def not_checkpoints(x: I1, f: I0):
        with qd.checkpoint(0, yield_on=f):
            for i in range(x.shape[0]):
                x[i] += 1

    with pytest.raises(qd.QuadrantsSyntaxError, match="checkpoints=True"):
        not_checkpoints(qd.ndarray(qd.i32, (2,)), _scalar(0))

    @qd.kernel(graph=True)
    def loose_section(x: I1):
        with qd.graph.parallel():
            x[0] = 1

    with pytest.raises(qd.QuadrantsSyntaxError, match="inside a qd.graph.parallel_context"):
        loose_section(qd.ndarray(qd.i32, (2,)))

    with pytest.raises(qd.QuadrantsSyntaxError, match=r"checkpoints=True\) requires graph=True"):
        qd.kernel(checkpoints=True)(lambda: None)


@dataclasses.dataclass
class _Flags:
    unread: I1  # never read by the kernel below: not passed (passes/prune_args.py), so the later indices shift
    counter: I0
    stop: I0


def test_flags_in_a_dataclass_after_an_unread_member_and_the_resume_stage_keep_their_arguments() -> None:
    @qd.kernel(graph=True, checkpoints=True)
    def k(f: _Flags, x: I1):
        while qd.graph.do_while(f.counter):
            with qd.checkpoint(0, yield_on=f.stop):
                for i in range(x.shape[0]):
                    x[i] += 1
            for _ in range(1):
                f.counter[()] -= 1

    f = _Flags(qd.ndarray(qd.i32, (3,)), _scalar(3), _scalar(0))
    x = qd.ndarray(qd.i32, (2,))
    assert k(f, x).yielded is False
    np.testing.assert_array_equal(x.to_numpy(), [3, 3])  # three passes, counted down by the flag
    counts = k._primal.launch_stats.kernel_args_count_by_type
    assert sum(counts.values()) == 4  # counter, stop, x and the resume stage: `unread` is not passed
    levels = k._primal.graph_do_while_levels
    ids = [lv.cond_cpp_arg_id for lv in levels] + k._primal.checkpoint_yield_on_cpp_arg_ids
    assert ids == [0, 1, -1]  # the flags' indices among the arguments passed (-1: the stage that never yields)
    f.counter.from_numpy(np.array(2, np.int32))
    f.stop.from_numpy(np.array(1, np.int32))
    status = k(f, x)
    assert status.yielded and status.checkpoint == 0  # the first pass yielded before counting down
    np.testing.assert_array_equal(x.to_numpy(), [4, 4])
    f.stop.from_numpy(np.array(0, np.int32))
    assert k.resume(f, x, from_checkpoint=0).yielded is False  # resumes the pass, then the rest
    np.testing.assert_array_equal(x.to_numpy(), [6, 6])
