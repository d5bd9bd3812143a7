"""Built-in ops, each a ``Primitive`` (a ``Function``) with forward and backward
side by side: elementwise, reduction, shape (views), indexing, linalg, nn_ops."""
