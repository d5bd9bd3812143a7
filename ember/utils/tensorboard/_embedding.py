"""The projector plugin's files for ``SummaryWriter.add_embedding``: per embedding a
folder ``<step:05d>/<tag>`` with tensors.tsv, metadata.tsv and sprite.png, and one
projector_config.pbtxt in the log directory listing them all."""
from __future__ import annotations

import io
import math

import numpy as np
from tensorboard.compat import tf
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._convert import make_grid, make_np


def _join(directory, name):
    # TensorFlow's gfile has join(); tensorboard's stand-in for it only its filesystems do
    gfile = tf.io.gfile
    if hasattr(gfile, "join"):
        return gfile.join(directory, name)
    return gfile.get_filesystem(directory).join(directory, name)


def _write(path, data):
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(tf.compat.as_bytes(data))


def make_tsv(metadata, save_path, metadata_header=None):
    """metadata.tsv: one label per line, or with ``metadata_header`` a header row and one
    tab-separated row per point."""
    if metadata_header:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    else:
        lines = [str(x) for x in metadata]
    _write(_join(save_path, "metadata.tsv"), "\n".join(lines) + "\n")


def make_sprite(label_img, save_path):
    """sprite.png: the NCHW label images in a square grid, its side the grid's width."""
    from PIL import Image

    per_row = math.ceil(label_img.size(0) ** 0.5)
    grid = make_grid(make_np(label_img), ncols=per_row).transpose(1, 2, 0)
    square = np.zeros((grid.shape[1], grid.shape[1], 3))
    square[:grid.shape[0]] = grid
    with io.BytesIO() as buffer:
        Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buffer, format="PNG")
        _write(_join(save_path, "sprite.png"), buffer.getvalue())


def make_mat(matlist, save_path):
    """tensors.tsv: one tab-separated row of numbers per point."""
    rows = ["\t".join(str(v.item()) for v in row) + "\n" for row in matlist]
    _write(_join(save_path, "tensors.tsv"), "".join(rows))


def get_embedding_info(metadata, label_img, subdir, global_step, tag):
    """The projector config entry of one embedding."""
    info = EmbeddingInfo(tensor_name=f"{tag}:{str(global_step).zfill(5)}",
                         tensor_path=_join(subdir, "tensors.tsv"))
    if metadata is not None:
        info.metadata_path = _join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = _join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.size(3), label_img.size(2)])
    return info


def write_pbtxt(save_path, contents):
    _write(_join(save_path, "projector_config.pbtxt"), contents)


def load_onnx_graph(fname):
    """A TensorBoard ``GraphDef`` of the ONNX model in ``fname``: its inputs and outputs as
    Variable nodes, then one node per ONNX node named after its first output."""
    import onnx
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.graph_pb2 import GraphDef
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef

    graph = onnx.load(fname).graph
    nodes = []
    for value in list(graph.input) + list(graph.output):
        tensor_type = value.type.tensor_type
        shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value)
                                      for d in tensor_type.shape.dim])
        nodes.append(NodeDef(name=value.name.encode("utf_8"), op="Variable", input=[],
                             attr={"dtype": AttrValue(type=tensor_type.elem_type),
                                   "shape": AttrValue(shape=shape)}))
    for node in graph.node:
        params = ", ".join(" = ".join(str(field[1]) for field in a.ListFields())
                           for a in node.attribute)
        nodes.append(NodeDef(name=node.output[0].encode("utf_8"), op=node.op_type,
                             input=node.input,
                             attr={"parameters": AttrValue(s=params.encode("utf_8"))}))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
