"""ember.save stores plain-data objects (Enum members, argparse.Namespace, dataclass objects
holding tensors, numbers, strings...) as tagged JSON records; ember.load rebuilds them only
when their class is allowlisted with ember.serialization.add_safe_globals (the allowlist of
torch checkpoints), without running their ``__init__``, and otherwise refuses with
PyTorch's weights-only error."""
import argparse
import dataclasses
import enum
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import ember
from ember.serialization import add_safe_globals, load, safe_globals, save


class Phase(enum.Enum):
    TRAIN = "train"
    EVAL = 2


@dataclasses.dataclass
class Config:
    lr: float
    name: str
    layers: list
    weight: object = None
    phase: Phase = Phase.TRAIN


@dataclasses.dataclass(frozen=True)
class Frozen:
    size: int


class NotPlain:
    pass


def _saved(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return buf


def _checkpoint():
    args = argparse.Namespace(lr=0.1, epochs=3, tag="run", betas=(0.9, 0.99))
    config = Config(0.5, "net", [1, 2], weight=ember.arange(3.0), phase=Phase.EVAL)
    return {"args": args, "config": config, "frozen": Frozen(4), "phase": Phase.TRAIN,
            "w": ember.ones(2)}


def test_round_trip_with_the_classes_allowlisted():
    with safe_globals([argparse.Namespace, Config, Frozen, Phase]):
        out = load(_saved(_checkpoint()))
    assert out["args"] == argparse.Namespace(lr=0.1, epochs=3, tag="run", betas=(0.9, 0.99))
    config = out["config"]
    assert type(config) is Config and (config.lr, config.name, config.layers) == (0.5, "net",
                                                                                   [1, 2])
    np.testing.assert_array_equal(config.weight.numpy(), [0.0, 1.0, 2.0])
    assert config.phase is Phase.EVAL and out["phase"] is Phase.TRAIN
    assert out["frozen"] == Frozen(4)
    np.testing.assert_array_equal(out["w"].numpy(), [1.0, 1.0])


def test_the_file_holds_data_only():
    with zipfile.ZipFile(_saved(_checkpoint())) as zf:
        structure = json.loads(zf.read("structure.json"))
    args = structure["object"]["values"][0]
    assert args["$type"] == "object" and args["class"] == "argparse.Namespace"
    assert structure["object"]["values"][3] == {"$type": "object", "class": f"{__name__}.Phase",
                                                "enum": "train"}


@pytest.mark.parametrize("key, path", [("args", "argparse.Namespace"),
                                       ("config", f"{__name__}.Config"),
                                       ("phase", f"{__name__}.Phase")])
def test_refused_unless_allowlisted(key, path):
    buf = _saved({key: _checkpoint()[key]})
    with pytest.raises(pickle.UnpicklingError, match=rf"Unsupported global: GLOBAL {path} was "
                                                      r"not an allowed global by default"):
        load(buf)


def test_allowlisting_is_by_the_class_object():
    buf = _saved(argparse.Namespace(a=1))
    add_safe_globals([argparse.Namespace])
    try:
        assert load(buf).a == 1
    finally:
        ember.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        load(_saved(argparse.Namespace(a=1)))


def test_init_is_not_run_on_load():
    calls = []

    @dataclasses.dataclass
    class Counted:
        value: int

        def __post_init__(self):
            calls.append(self.value)

    buf = _saved(Counted(3))
    with safe_globals([Counted]):
        loaded = load(buf)
    assert type(loaded) is Counted and loaded.value == 3
    assert calls == [3]  # the constructor call above only


def test_crafted_record_naming_an_allowlisted_non_enum_is_corrupt():
    buf = _saved(Phase.TRAIN)
    with zipfile.ZipFile(buf) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    structure = json.loads(members["structure.json"])
    structure["object"]["class"] = "argparse.Namespace"
    members["structure.json"] = json.dumps(structure)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    out.seek(0)
    with safe_globals([argparse.Namespace]), pytest.raises(RuntimeError, match="not an Enum"):
        load(out)


def test_other_objects_and_unstorable_fields_still_raise():
    with pytest.raises(TypeError, match="can't store an object of type"):
        save({"x": NotPlain()}, io.BytesIO())
    with pytest.raises(TypeError, match="can't store an object of type"):
        save(argparse.Namespace(f=NotPlain()), io.BytesIO())
    with pytest.raises(TypeError, match="can't store an object of type"):
        save(Config(0.1, "a", [], weight=NotPlain()), io.BytesIO())
