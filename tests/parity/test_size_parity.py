"""ember.Size behaves as torch.Size: slices, concatenations and repeats stay Sizes."""
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = {
    "slice": lambda S: S([2, 3, 4])[1:],
    "step": lambda S: S([2, 3, 4])[::2],
    "item": lambda S: S([2, 3, 4])[-1],
    "add": lambda S: S([2, 3]) + (4,),
    "radd": lambda S: (1,) + S([2, 3]),
    "add_size": lambda S: S([2]) + S([3]),
    "mul": lambda S: S([2, 3]) * 2,
    "rmul": lambda S: 2 * S([2, 3]),
    "numel": lambda S: S([2, 3, 4])[1:].numel(),
    "equal_tuple": lambda S: S([2, 3]) == (2, 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_size_ops_match(name):
    theirs, ours = CASES[name](torch.Size), CASES[name](ember.Size)
    assert ours == theirs
    assert type(ours).__name__ == type(theirs).__name__
    if isinstance(theirs, torch.Size):
        assert repr(ours) == repr(theirs).replace("torch", "ember")


def test_size_concatenates_tuples_only():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=r"can only concatenate tuple \(not list\) to "
                                            rf"{lib.__name__}.Size"):
            lib.Size([2]) + [3]
