"""``ember.utils.tensorboard``: ``SummaryWriter`` for TensorBoard, as
``torch.utils.tensorboard``. Needs the ``tensorboard`` package (``pip install
ember[tensorboard]``); images also need pillow (a dependency of tensorboard), figures
matplotlib, videos moviepy. Not imported by ``import ember``.

>>> import tempfile
>>> from ember.utils.tensorboard import SummaryWriter
>>> writer = SummaryWriter(tempfile.mkdtemp())
>>> writer.add_scalar("loss", 0.25, global_step=1)
>>> writer.close()
"""
import tensorboard

if not hasattr(tensorboard, "__version__") or tuple(
        int(p) for p in tensorboard.__version__.split(".")[:2] if p.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
