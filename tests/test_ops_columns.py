"""The op rows on the Kineto event frame's columns (``analyses/ops.py``) against a reference
written as the rules read (``docs/runs.md``, the module docstring), one Python object per
event (the ``json`` module's reading, ``tests/kineto_reference.py``): each op's parent on its
thread, the outermost op with work counted, GPU events owned through the correlation /
External id chain, a FLOP op's layout and fill kernels set apart. Random traces nest ops on
two threads, repeat External ids and launch kernels of every kind, read by the compiled
decoder and by msgspec."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import kineto_reference
from tileprof.analyses.flops import COMPOSITE, PRIMARY
from tileprof.analyses.ops import AUX_FAMILIES, _work, op_rows, single_kernel_flops
from tileprof.core.classify import op_family
from tileprof.inputs.gpu.kineto import _read_with_msgspec, read_events


def _text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _nesting(ops: list[Any]) -> tuple[list[bool], list[int]]:
    """Which ops are counted and each one's owner, by walking the stacks one op at a time."""
    parent: list[int | None] = []
    stack: list[int] = []
    for op in ops:
        while stack and (
            ops[stack[-1]].thread != op.thread or op.ts >= ops[stack[-1]].ts + ops[stack[-1]].dur
        ):
            stack.pop()
        parent.append(stack[-1] if stack else None)
        stack.append(len(parent) - 1)
    candidate = [op.flops is not None or op.name in PRIMARY for op in ops]
    inside = [False] * len(ops)  # a candidate below
    for i in reversed(range(len(ops))):
        if parent[i] is not None and (candidate[i] or inside[i]):
            inside[parent[i]] = True  # type: ignore[index]
    counted, covered, owner = [False] * len(ops), [False] * len(ops), list(range(len(ops)))
    for i, p in enumerate(parent):
        covered[i] = p is not None and (covered[p] or counted[p])
        counted[i] = not covered[i] and (
            candidate[i] or (ops[i].name in COMPOSITE and not inside[i])
        )
        if p is not None and not counted[i] and counted[owner[p]]:
            owner[i] = owner[p]
    return counted, owner


def reference(data: bytes) -> tuple[list[tuple[Any, ...]], dict[int, int]]:
    """Per op call (op, input dims, input types, µs, launched nothing) and the FLOPs of the
    GPU events that alone do their call's work, from the events one by one (``json``)."""
    events = kineto_reference.read(data)
    ops = sorted(events.cpu_ops, key=lambda o: (o.thread, o.ts, -o.dur, o.index))
    counted, owner = _nesting(ops)
    by_ext = {op.external_id: i for i, op in enumerate(ops) if op.external_id is not None}
    launched: dict[int, list[Any]] = {}
    for ev in events.gpu:
        ext = kineto_reference.launching_external_id(events, ev, set(by_ext))
        if ext is not None and ext in by_ext:
            launched.setdefault(owner[by_ext[ext]], []).append(ev)
    gpu_trace = bool(events.gpu)
    calls, alone = [], {}
    for i in sorted({i for i, c in enumerate(counted) if c} | set(launched)):
        op, owned = ops[i], launched.get(i, [])
        work = None
        if counted[i]:
            work = _work(op.name, op.input_dims, op.concrete_inputs, op.flops)[0]
        apart = [work is not None and op_family(ev.name) in AUX_FAMILIES for ev in owned]
        if all(apart):
            apart = [False] * len(owned)
        doing = [ev for ev, out in zip(owned, apart, strict=True) if not out]
        us = sum(ev.dur for ev in doing) if gpu_trace else op.dur
        ids = (_text(op.input_dims), _text(op.input_type))
        calls.append((op.name, *ids, float(us), not owned if gpu_trace else None))
        if work is not None and work.flops is not None and len(doing) == 1:
            alone[doing[0].index] = work.flops
    return calls, alone


_dims = st.sampled_from([None, [[2, 3], [3, 4]], [[4], [2, 3], [3, 4]], [[2, 2, 3], [2, 3, 5]], []])
_op = st.fixed_dictionaries(
    {
        "tid": st.sampled_from([1, 2, "main"]),
        "ts": st.integers(0, 30),
        "dur": st.integers(0, 12),
        "name": st.sampled_from(
            ["aten::linear", "aten::addmm", "aten::mm", "aten::bmm", "aten::matmul", "aten::add"]
        ),
        "ext": st.one_of(st.none(), st.integers(0, 6)),
        "dims": _dims,
        "types": st.sampled_from([None, [], ["float", "float"], ["c10::BFloat16", ""]]),
        "flops": st.one_of(st.none(), st.integers(0, 10**6), st.just(-1), st.just("x")),
    }
)
_kernel = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["sm80_gemm", "nchwToNhwcKernel", "Memset (Device)", "vec_add"]),
        "ts": st.integers(0, 40),
        "dur": st.one_of(st.integers(0, 9), st.floats(0, 9).map(lambda f: round(f, 3))),
        "correlation": st.one_of(st.none(), st.integers(0, 6)),
        "ext": st.one_of(st.none(), st.integers(0, 6)),
        "device": st.sampled_from([None, 0, 1]),
    }
)


def _trace(ops: list[dict[str, Any]], kernels: list[dict[str, Any]], launches: list[Any]) -> bytes:
    events: list[dict[str, Any]] = []
    for o in ops:
        args = {"External id": o["ext"], "Input Dims": o["dims"], "Input type": o["types"]}
        args |= {} if o["flops"] is None else {"flops": o["flops"]}
        event = {"ph": "X", "cat": "cpu_op", "name": o["name"], "ts": o["ts"], "dur": o["dur"]}
        events.append(event | {"pid": 7, "tid": o["tid"], "args": args})
    for correlation, ext in launches:
        args = {"correlation": correlation, "External id": ext}
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "launch", "ts": 0, "dur": 1,
                       "args": args})  # fmt: skip
    for k in kernels:
        args = {"correlation": k["correlation"], "External id": k["ext"], "device": k["device"]}
        events.append({"ph": "X", "cat": "kernel", "name": k["name"], "ts": k["ts"],
                       "dur": k["dur"], "args": args})  # fmt: skip
    return json.dumps({"traceEvents": events}, indent=1).encode()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(_op, max_size=14),
    kernels=st.lists(_kernel, max_size=10),
    launches=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 7)), max_size=5),
)
def test_random_traces_give_the_reference_calls(
    ops: list[dict[str, Any]], kernels: list[dict[str, Any]], launches: list[Any]
) -> None:
    data = _trace(ops, kernels, launches)
    calls, alone = reference(data)
    for read in (read_events, _read_with_msgspec):
        events = read("t.json", data)
        parsed = op_rows(events)
        assert parsed.calls is not None
        columns = ["op", "input_dims", "input_types", "us", "without_gpu"]
        assert parsed.calls.select(columns).rows() == calls
        assert single_kernel_flops(events) == alone
