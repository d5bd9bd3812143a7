"""Unmodified PyTorch programs (tests/parity/programs/) run on ember through
``python -m ember.as_torch`` and print PyTorch's numbers: each program runs twice, on torch
and on ember, in fresh processes, and every number printed must agree (float32 tolerance)."""
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

PROGRAMS = pathlib.Path(__file__).parent / "programs"
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+")


def _run(*args):
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("program", ["dcgan.py", "idioms.py", "resnet_seq2seq.py", "stn.py",
                                     "char_rnn.py", "gcn_triplet.py", "vae_style.py", "vit.py",
                                     "data_amp.py", "sparse_models.py", "gpt.py",
                                     "ddpm.py", "ppo.py", "llama.py", "bilstm_crf.py",
                                     "audio_kws.py", "nlp_seq2seq.py", "wide_deep.py",
                                     "simclr.py", "vision_recipe.py", "cgan.py",
                                     "gat_pointnet.py", "realnvp.py"])
def test_program_prints_torchs_numbers(program):
    path = str(PROGRAMS / program)
    on_torch = _run(path)
    on_ember = _run("-m", "ember.as_torch", path)
    assert NUMBER.sub("#", on_ember) == NUMBER.sub("#", on_torch)  # same lines and words
    theirs = [float(n) for n in NUMBER.findall(on_torch)]
    ours = [float(n) for n in NUMBER.findall(on_ember)]
    assert len(ours) == len(theirs) > 10
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=2e-5, abs=2e-5), (on_ember, on_torch)
