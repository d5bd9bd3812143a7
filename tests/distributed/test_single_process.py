"""ember.distributed without a job: what works and what raises before init_process_group
(no MPI is started here)."""
import pytest

import ember
import ember.distributed as dist
import ember.nn as nn

NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")


@pytest.mark.parametrize("call", [
    lambda: dist.get_rank(), lambda: dist.get_world_size(), lambda: dist.get_backend(),
    lambda: dist.barrier(), lambda: dist.all_reduce(ember.ones(2)),
    lambda: dist.broadcast(ember.ones(2), src=0), lambda: dist.new_group([0]),
    lambda: nn.parallel.DistributedDataParallel(nn.Linear(2, 2)),
    lambda: ember.utils.data.DistributedSampler(range(4)),
])
def test_calls_before_init_raise_pytorchs_error(call):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == NOT_INITIALIZED


def test_state_before_init():
    assert not dist.is_initialized()
    assert dist.ReduceOp.SUM != dist.ReduceOp.MAX
    assert repr(dist.ReduceOp.AVG) == "<RedOpType.AVG: 1>"


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="'gloo' is not available"):
        dist.init_process_group("gloo")
    with pytest.raises(NotImplementedError, match="init_method 'tcp://h:1'"):
        dist.init_process_group("mpi", init_method="tcp://h:1")
    with pytest.raises(TypeError, match="datetime.timedelta"):
        dist.init_process_group("mpi", timeout=5)
    assert not dist.is_initialized()


def test_queue_callback_runs_after_the_graph():
    from ember.autograd.engine import queue_callback
    w = ember.ones(2, requires_grad=True)
    order = []

    def hook(p):
        order.append("hook")
        queue_callback(lambda: order.append(p.grad.sum()))
    w.register_post_accumulate_grad_hook(hook)
    (w * 2).sum().backward()
    assert order[0] == "hook" and float(order[1]) == 4.0
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                           "backward pass."):
        queue_callback(print)


def test_buckets_reverse_order_capped_one_dtype_each():
    from ember.distributed.reducer import _buckets
    params = [ember.zeros(300_000), ember.zeros(10), ember.zeros(10, dtype=ember.float64),
              ember.zeros(200_000), ember.zeros(5)]
    buckets = _buckets(params, cap_bytes=1_000_000, first_cap_bytes=100)
    assert [(b.indices, b.dtype.name) for b in buckets] == [
        ([4], "float32"),              # the first bucket: at most 100 bytes
        ([3, 1], "float32"),           # 800,040 bytes; adding index 0 would pass the cap
        ([2], "float64"),
        ([0], "float32")]
