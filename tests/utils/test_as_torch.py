"""``ember.as_torch``: ``import torch`` resolving to ember, from the shell and in-process."""
import subprocess
import sys
import types

import pytest

import ember
import ember.as_torch as as_torch

PROGRAM = """
import sys
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
print(torch.__name__, nn is torch.nn, sys.argv[1:])
model = nn.Linear(2, 1)
loader = DataLoader(TensorDataset(torch.ones(4, 2), torch.zeros(4, 1)), batch_size=2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
print(type(model).__module__)
"""


def test_shell_runs_a_torch_program_on_ember(tmp_path):
    program = tmp_path / "train.py"
    program.write_text(PROGRAM)
    done = subprocess.run([sys.executable, "-m", "ember.as_torch", str(program), "--lr", "3"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ember True ['--lr', '3']", "ember.nn.modules.linear"]


def test_shell_usage_without_a_program():
    done = subprocess.run([sys.executable, "-m", "ember.as_torch"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert "usage: python -m ember.as_torch program.py" in done.stdout


def test_installed_maps_submodules_and_restores_the_previous_torch(monkeypatch):
    previous = types.ModuleType("torch")
    monkeypatch.setitem(sys.modules, "torch", previous)
    with as_torch.installed():
        import torch
        import torch.nn.functional as F
        from torch.autograd import Function
        assert torch is ember
        assert F is ember.nn.functional
        assert Function is ember.autograd.Function
        assert sys.modules["torch.nn"] is ember.nn
    assert sys.modules["torch"] is previous
    assert "torch.nn" not in sys.modules or sys.modules["torch.nn"] is not ember.nn
    assert not any(isinstance(f, as_torch._TorchAlias) for f in sys.meta_path)


def test_a_submodule_ember_lacks_is_a_module_not_found_error(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    with as_torch.installed():
        with pytest.raises(ModuleNotFoundError,
                           match=r"No module named 'torch.no_such_module' \(ember has no "
                                 r"'ember.no_such_module'\)") as info:
            import torch.no_such_module  # noqa: F401
    assert info.value.name == "torch.no_such_module"
