"""``SummaryWriter``: logs scalars, histograms, images, text, hparams, ... as TensorBoard
event files, through tensorboard's own protos and event-file writer (as
``torch.utils.tensorboard.writer`` does).
"""
from __future__ import annotations

import os
import time

from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as _summary
from ._convert import figure_to_image, make_np
from ._embedding import (get_embedding_info, load_onnx_graph, make_mat, make_sprite,
                         make_tsv, write_pbtxt)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protos to one event file in ``log_dir`` (queued, flushed every
    ``flush_secs`` or when ``max_queue`` events wait). ``SummaryWriter`` builds on it."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        # a pathlib.Path is welcome too; the event writer wants a str
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self):
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Stamps ``event`` with ``walltime`` (default now) and ``step``, and queues it."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # a NumPy or tensor step isn't taken by every protobuf
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Queues ``summary`` (a ``Summary`` proto) as an event."""
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """Queues a (GraphDef, RunMetadata) pair as a graph event and its run metadata."""
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        tagged = event_pb2.TaggedRunMetadata(tag="step1",
                                             run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=tagged), None, walltime)

    def add_onnx_graph(self, graph, walltime=None):
        """Queues a ``GraphDef`` as a graph event."""
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self):
        """Writes the queued events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flushes and closes the event file."""
        self.event_writer.close()

    def reopen(self):
        """Reopens the event writer, where it can (tensorboard's own writer cannot, and
        raises AttributeError, as under PyTorch)."""
        self.event_writer.reopen()


def _tensorflow_bins():
    """Histogram edges TensorBoard's own examples use: +-1e-12 growing by 10% up to 1e20,
    and 0 (the running product, not powers, so the edges are PyTorch's to the last bit)."""
    edge, positive = 1e-12, []
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-v for v in reversed(positive)] + [0] + positive


class SummaryWriter:
    """Writes TensorBoard event files into ``log_dir`` (default
    ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>``); ``purge_step`` tells TensorBoard to drop
    events at that step and later from an earlier, crashed run. View with
    ``tensorboard --logdir runs``.

    >>> import ember, tempfile
    >>> from ember.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
    ...     for step in range(3):
    ...         writer.add_scalar("loss", ember.tensor(1.0 / (step + 1)), step)
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime

            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_"
                                   + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None  # (re)made on demand, dropped by close()
        self._get_file_writer()
        self.default_bins = _tensorflow_bins()

    def _get_file_writer(self):
        """The main FileWriter, made again (a new event file) after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # a restart marker: TensorBoard discards older events from this step on
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(
                    step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory events are written to (``log_dir`` as given)."""
        return self.log_dir

    def _log(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """Logs one run's hyperparameters and final metrics for the HParams dashboard, in a
        sub-directory ``run_name`` (default: the current time) of the log directory; each
        metric is also logged as a scalar there.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_hparams({"lr": 0.1, "optimizer": "sgd"}, {"hparam/loss": 0.25}, run_name="run1")
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(),
                              run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as run:
            for s in summaries:
                run.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Logs one number (a Python or NumPy scalar, or a one-element tensor) at
        ``global_step``; ``new_style`` logs it as a tensor (``double_precision``: float64).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_scalar("train/loss", ember.tensor(0.5), global_step=10)
        """
        self._log(_summary.scalar(tag, scalar_value, new_style=new_style,
                                  double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Logs several scalars in one chart ``main_tag``: each in its own event file in
        the sub-directory ``<main_tag>_<key>`` (slashes of main_tag made underscores).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_scalars("loss", {"train": 0.5, "val": 0.75}, 10)  # in loss_train/, loss_val/
        """
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            sub = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if sub not in self.all_writers:
                self.all_writers[sub] = FileWriter(sub, self.max_queue, self.flush_secs,
                                                   self.filename_suffix)
            self.all_writers[sub].add_summary(_summary.scalar(main_tag, value), global_step,
                                              walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Logs a whole tensor (the "tensor" plugin).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_tensor("weights", ember.ones(2, 3), 0)
        """
        self._log(_summary.tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Logs a histogram of ``values``; ``bins`` is anything ``numpy.histogram`` takes,
        or ``"tensorflow"`` for TensorBoard's exponential edges; ``max_bins`` merges
        neighbouring buckets down to at most that many.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_histogram("weights", ember.randn(100), 0, bins=10)
        """
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._log(_summary.histogram(tag, values, bins, max_bins=max_bins), global_step,
                  walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares,  # noqa: A002
                          bucket_limits, bucket_counts, global_step=None, walltime=None):
        """Logs a histogram already counted: statistics, bucket right edges and counts.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_histogram_raw("h", 0, 2, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], 0)
        """
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._log(_summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                         bucket_counts), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Logs an image: floats in [0, 1] or uint8 in [0, 255], laid out as
        ``dataformats`` (CHW, HWC, HW, ...; one channel is shown grey).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_image("sample", ember.rand(3, 16, 16), 0)
        >>> w.add_image("mask", ember.zeros(16, 16), 0, dataformats="HW")
        """
        self._log(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                  walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None,
                   dataformats="NCHW"):
        """Logs a batch of images (NCHW, NHWC, ...) tiled into one grid, 8 per row.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_images("batch", ember.rand(4, 3, 8, 8), 0)
        """
        self._log(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                  walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None):
        """Logs an image with boxes (rows of x_min, y_min, x_max, y_max in pixels) drawn
        on it, labelled when ``labels`` has one string per box.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_image_with_boxes("det", ember.rand(3, 16, 16), ember.tensor([[2.0, 2, 9, 9]]),
        ...                        0, labels=["cat"])
        """
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._log(_summary.image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                                       dataformats=dataformats, labels=labels),
                  global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Logs a matplotlib figure (or a list of them, as a grid) rendered as an image;
        ``close`` closes the figure afterwards."""
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats="NCHW" if isinstance(figure, list) else "CHW")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Logs a BTCHW video (floats in [0, 1] or uint8) as a GIF; needs moviepy."""
        self._log(_summary.video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Logs mono audio: samples in [-1, 1] of shape (1, L) or (L,).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_audio("tone", ember.sin(ember.arange(800.0) / 4), 0, sample_rate=8000)
        """
        self._log(_summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step,
                  walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Logs a string (shown as markdown).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_text("notes", "lr **0.1**", 0)
        """
        self._log(_summary.text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt):
        """Logs the graph of the ONNX model file ``prototxt`` (needs onnx)."""
        self._get_file_writer().add_onnx_graph(load_onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not supported: PyTorch traces the model with TorchScript to get its graph, and
        ``ember.jit`` runs models eagerly, recording no graph. Export the model with
        ``ember.onnx.export`` and log the file with ``add_onnx_graph`` instead."""
        raise NotImplementedError(
            "SummaryWriter.add_graph needs a TorchScript trace of the model, which ember "
            "does not record (ember.jit runs eagerly); export it with ember.onnx.export and "
            "log the file with add_onnx_graph instead")

    @staticmethod
    def _encode(rawstr):
        # the tag names a folder: %, / and \ become %-escapes
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Logs an N x D embedding for the Projector: ``metadata`` labels each point
        (rows of columns under ``metadata_header``), ``label_img`` (NCHW) gives each
        point a thumbnail.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_embedding(ember.randn(4, 8), metadata=["a", "b", "c", "d"], tag="words")
        """
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        gfile = tf.io.gfile
        if not gfile.exists(save_path):
            gfile.makedirs(save_path)
        elif gfile.isdir(save_path):
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot "
                                     "proceed.")
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data "
                                 "points")
        make_mat(mat, save_path)
        # the config lists every embedding so far; the file is rewritten whole each time
        # because not every filesystem gfile reaches can append
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend(
            [get_embedding_info(metadata, label_img, subdir, global_step, tag)])
        from google.protobuf import text_format

        write_pbtxt(self._get_file_writer().get_logdir(),
                    text_format.MessageToString(self._projector_config))

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Logs a precision-recall curve of binary ``labels`` against ``predictions`` in
        [0, 1] (at most 127 thresholds).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_pr_curve("pr", ember.tensor([1, 0, 1]), ember.tensor([0.9, 0.2, 0.4]), 0)
        """
        labels, predictions = make_np(labels), make_np(predictions)
        self._log(_summary.pr_curve(tag, labels, predictions, num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """Logs a precision-recall curve from its counts, precision and recall.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_pr_curve_raw("pr", [2, 1], [1, 0], [0, 1], [0, 1], [0.67, 1.0], [1.0, 0.5],
        ...                    0, num_thresholds=2)
        """
        self._log(_summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                        true_negative_counts, false_negative_counts,
                                        precision, recall, num_thresholds, weights),
                  global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """A custom-scalars chart ``title`` plotting ``tags`` together.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_custom_scalars_multilinechart(["loss/train", "loss/val"], title="loss")
        """
        self._log(_summary.custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """A custom-scalars chart of ``tags`` = [value, lower, upper] as a band.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_custom_scalars_marginchart(["acc", "acc_low", "acc_high"])
        """
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._log(_summary.custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout):
        """The custom-scalars layout: ``{category: {title: ["Multiline" or "Margin",
        tags]}}``.

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_custom_scalars({"Training": {"loss": ["Multiline", ["loss/train", "loss/val"]]}})
        """
        self._log(_summary.custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """Logs a 3D point cloud or mesh: BxNx3 ``vertices``, optional BxNx3 ``colors``
        (uint8 RGB) and BxFx3 ``faces`` (vertex indices).

        >>> import ember, tempfile; w = SummaryWriter(tempfile.mkdtemp())
        >>> w.add_mesh("triangle", ember.tensor([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]]),
        ...            faces=ember.tensor([[[0, 1, 2]]]))
        """
        self._log(_summary.mesh(tag, vertices, colors, faces, config_dict), global_step,
                  walltime)

    def flush(self):
        """Writes every pending event to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        """Flushes and closes the event files (a later add_* opens a new one)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
