"""ember.profiler and ember.autograd.profiler: what is recorded, the summaries, schedules,
trace files, and that nothing is left switched on afterwards."""
import gzip
import json
import os

import pytest

import ember
from ember import nn
from ember.autograd import dispatch
from ember.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                            schedule, tensorboard_trace_handler)


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU())


def test_records_ops_with_record_function_ranges_and_nesting():
    m, x = _model(), ember.randn(2, 4)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            y = m(x).sum()
    events = prof.events()
    assert [e.name for e in events] == ["model_inference", "aten::linear", "aten::relu",
                                        "aten::sum"]
    outer = events[0]
    assert outer.is_user_annotation and outer.cpu_parent is None
    assert [c.name for c in outer.cpu_children] == ["aten::linear", "aten::relu", "aten::sum"]
    assert all(c.cpu_parent is outer for c in outer.cpu_children)
    assert outer.cpu_time_total >= sum(c.cpu_time_total for c in outer.cpu_children)
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children))
    assert events[1].input_shapes == [[2, 4], [3, 4], [3]]
    assert y.shape == ()


def test_backward_ops_are_recorded_and_numbers_unchanged():
    m, x = _model(), ember.randn(2, 4, requires_grad=True)
    m(x).sum().backward()
    grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    with profile() as prof:
        m(x).sum().backward()
    assert all(ember.equal(p.grad, g) for p, g in zip(m.parameters(), grads))
    names = {e.key for e in prof.key_averages()}
    assert {"aten::linear", "aten::mm", "aten::ones_like"} <= names


def test_profiler_leaves_nothing_active():
    assert not dispatch.active[0]
    with profile():
        assert dispatch.active[0]
    assert not dispatch.active[0]
    with record_function("idle") as rf:  # no profiler: records nothing, costs a test
        ember.ones(1) + 1
    assert rf._events == []


def test_key_averages_group_and_table_layout():
    x = ember.ones(3, 3)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            x.exp()
        ember.ones(2).exp()
    avgs = prof.key_averages()
    assert [(a.key, a.count) for a in avgs] == [("aten::exp", 4)]
    grouped = prof.key_averages(group_by_input_shape=True)
    assert [(a.key, a.count, a.input_shapes) for a in grouped] == [
        ("aten::exp", 3, [[3, 3]]), ("aten::exp", 1, [[2]])]
    lines = avgs.table(sort_by="cpu_time_total", row_limit=5).splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[0] == lines[2] == lines[-2]
    assert lines[0].startswith("-" * len("aten::exp    ") + "  ")  # name column: longest + 4
    assert lines[3].split()[0] == "aten::exp" and lines[3].split()[-1] == "4"
    assert lines[3].split()[1] == "100.00%"
    assert lines[-1].startswith("Self CPU time total: ")
    shaped = grouped.table().splitlines()
    assert shaped[1].rstrip().endswith("Input Shapes") and shaped[3].rstrip().endswith("[[3, 3]]")
    with pytest.raises(AttributeError):
        avgs.table(sort_by="no_such_column")


def test_profile_memory_and_stack_columns():
    with profile(profile_memory=True, with_stack=True) as prof:
        y = ember.ones(4, 4, dtype=ember.float64).exp()
        y.view(16)
    exp_event, view_event = prof.events()
    assert exp_event.cpu_memory_usage == 16 * 8 and view_event.cpu_memory_usage == 0
    assert any("test_profiler.py" in frame for frame in exp_event.stack)
    table = prof.key_averages(group_by_stack_n=2).table()
    header = table.splitlines()[1]
    assert "CPU Mem" in header and "Self CPU Mem" in header and "Source Location" in header
    assert "128 B" in table


def test_schedule_actions_and_errors():
    s = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    assert [s(i) for i in range(7)] == [
        ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP,
        ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE,
        ProfilerAction.NONE]
    with pytest.raises(AssertionError, match=r"Invalid profiler schedule arguments\. Got "
                                             r"wait=-1 \(need >= 0\)"):
        schedule(wait=-1, warmup=0, active=1)
    with pytest.raises(AssertionError, match=r"active=0 \(need > 0\)"):
        schedule(wait=0, warmup=1, active=0)


def test_step_calls_on_trace_ready_per_cycle():
    calls = []

    def ready(p):
        calls.append((p.step_num, [e.name for e in p.events()]))
    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=ready) as prof:
        for i in range(10):
            ember.ones(2).relu()
            prof.step()
    assert [c[0] for c in calls] == [4, 8]  # as PyTorch: after steps 3 and 7
    names = calls[0][1]
    assert names.count("aten::relu") == 2 and names.count("ProfilerStep#2") == 1
    assert "ProfilerStep#1" not in names  # the warmup step is dropped
    with profile(schedule=schedule(wait=0, warmup=1, active=1), acc_events=True) as prof:
        for _ in range(4):
            ember.ones(1).exp()
            prof.step()
    assert [e.name for e in prof.events()].count("aten::exp") == 2


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function("block"):
            ember.ones(2, 2).sin()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    spans = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert [(e["name"], e["cat"]) for e in spans] == [("block", "user_annotation"),
                                                       ("aten::sin", "cpu_op")]
    assert spans[1]["args"]["Input Dims"] == [[2, 2]] and spans[1]["dur"] >= 0
    assert spans[0]["ts"] <= spans[1]["ts"] and data["displayTimeUnit"] == "ms"
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w", use_gzip=True)
    with profile(on_trace_ready=handler):
        ember.ones(1).cos()
    (name,) = os.listdir(tmp_path / "tb")
    assert name.startswith("w.") and name.endswith(".pt.trace.json.gz")
    with gzip.open(tmp_path / "tb" / name, "rt") as f:
        assert any(e.get("name") == "aten::cos" for e in json.load(f)["traceEvents"])


def test_record_function_as_decorator_and_on_error():
    @record_function("labelled")
    def f(x):
        return x * 2
    with profile() as prof:
        f(ember.ones(1))
        with pytest.raises(RuntimeError):
            with record_function("failing"):
                ember.ones(2) + ember.ones(3)
        ember.ones(1).neg()
    events = prof.events()
    assert [e.name for e in events][:2] == ["labelled", "aten::mul"]
    assert events[-1].name == "aten::neg" and events[-1].cpu_parent is None


def test_activity_and_option_checks():
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        with pytest.raises(AssertionError, match="No activities specified for the profiler"):
            profile(activities=[ProfilerActivity.CUDA])
    with pytest.raises(AssertionError, match="Profiler must be initialized"):
        profile().key_averages()
    for option in ("with_flops", "with_modules"):
        with pytest.raises(NotImplementedError):
            profile(**{option: True})


def test_legacy_autograd_profiler():
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        with ember.autograd.profiler.record_function("blk"):
            ember.ones(2, 3).exp().sum()
    assert [e.name for e in prof.function_events] == ["blk", "aten::exp", "aten::sum"]
    assert [a.key for a in prof.key_averages()] == ["blk", "aten::exp", "aten::sum"]
    rows = prof.table().splitlines()
    assert rows[3].split()[0] == "blk" and len(rows) == 8
    assert prof.total_average().key == "Total"
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    with ember.autograd.profiler.profile(enabled=False) as disabled:
        ember.ones(1) + 1
    assert disabled is None
    with pytest.warns(FutureWarning, match="use_cuda"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ember.autograd.profiler.profile(use_cuda=True)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with ember.autograd.profiler.emit_nvtx():
            pass
    with ember.autograd.profiler.emit_itt():
        pass
