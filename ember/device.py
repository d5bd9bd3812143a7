"""``ember.device``: where a tensor lives. Only 'cpu' exists until the GPU backend.

>>> import ember
>>> ember.device("cpu")
device(type='cpu')
"""


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, idx = type.split(":", 1)
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device "
                               f"string: {type}")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


cpu = device("cpu")


def check_device(d):
    """Accept None/'cpu'; other devices need a backend ember does not have yet."""
    if d is None:
        return cpu
    d = device(d) if not isinstance(d, device) else d
    if d.type != "cpu":
        raise RuntimeError(f"ember has no '{d.type}' backend yet (only 'cpu'); "
                           "Torch not compiled with CUDA enabled")
    return cpu
