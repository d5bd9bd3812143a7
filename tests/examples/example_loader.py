"""Load a program of examples/ once per library: its source with ``import ember`` lines
turned into ``import torch`` for PyTorch, so both run the same code."""
import pathlib
import re
import types

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load_example(name, lib_name):
    """The module ``examples/<name>.py`` executed against ``lib_name`` ('ember' or
    'torch')."""
    path = EXAMPLES / f"{name}.py"
    source = path.read_text()
    if lib_name == "torch":
        source = re.sub(r"^(\s*)import ember\b", r"\1import torch", source, flags=re.M)
        source = re.sub(r"^(\s*)from ember\b", r"\1from torch", source, flags=re.M)
    module = types.ModuleType(f"{name}_{lib_name}")
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def copy_state(src_model, dst_model, dst_lib):
    """Copy every parameter and buffer of a model into its twin of the other library."""
    state = {k: dst_lib.tensor(v.detach().numpy().copy())
             for k, v in src_model.state_dict().items()}
    dst_model.load_state_dict(state)
