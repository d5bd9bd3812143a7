"""The main job, end to end: a short training run must learn, save and reload."""
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

from ember.examples import digits  # noqa: E402


def test_short_run_learns_and_reloads(tmp_path, capsys):
    out = tmp_path / "model.ember"
    acc = digits.main(["--epochs", "6", "--quiet", "--seed", "1", "--out", str(out)])
    assert acc > 0.9
    assert out.exists()
    printed = capsys.readouterr().out
    assert "test accuracy" in printed and "reloaded accuracy" in printed


@pytest.mark.parametrize("flags", [["--epochs", "0"], ["--lr", "-1"], ["--batch-size", "x"],
                                   ["--nope"]])
def test_bad_flags_are_argparse_errors(flags, capsys):
    with pytest.raises(SystemExit) as e:
        digits.main(flags)
    assert e.value.code == 2
    assert "error:" in capsys.readouterr().err
