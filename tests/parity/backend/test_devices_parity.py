"""The device queries answer as torch 2.13's CPU build does."""
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("path", ["cuda.is_available", "cuda.device_count",
                                  "cuda.is_initialized", "cuda.memory_allocated",
                                  "cuda.max_memory_allocated", "accelerator.is_available",
                                  "accelerator.current_accelerator", "accelerator.device_count",
                                  "backends.mps.is_available", "backends.mps.is_built",
                                  "backends.cudnn.is_available", "get_default_device",
                                  "cuda.is_bf16_supported"])
def test_query_answers(path):
    def call(mod):
        obj = mod
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj()
    ours, theirs = call(ember), call(torch)
    assert str(ours) == str(theirs)


def _outcome(fn):
    try:
        return "ok", repr(fn())
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("code", ["m.zeros(2).cuda()", "m.nn.Linear(2, 2).cuda()",
                                  "m.zeros(2).to('cuda')", "m.cuda.synchronize()",
                                  "m.accelerator.synchronize()", "m.zeros(2).to(0)",
                                  "m.device('foo')", "m.device('cuda:x')",
                                  "m.device('cuda', 1)", "m.zeros(2).is_pinned()",
                                  "m.cuda.manual_seed_all(3)",
                                  "m.cuda.Event(enable_timing=True)", "m.cuda.Stream()",
                                  "m.cuda.current_stream()", "m.cuda.default_stream()",
                                  "m.cuda.get_device_properties(0)", "m.cuda.set_stream(None)"])
def test_errors_match(code):
    assert _outcome(lambda: eval(code, {"m": ember})) == \
        _outcome(lambda: eval(code, {"m": torch}))
