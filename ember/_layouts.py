"""Tensor layouts: ``ember.strided``, ``ember.sparse_coo``, ``ember.sparse_csr``, ...,
``ember.jagged`` are the instances of ``ember.layout`` (PyTorch's ``torch.layout``).

A layout is its name as a string subclass, so code comparing with the name (or formatting
it) keeps working, while ``repr``, ``isinstance(x, ember.layout)`` and pickling behave as
PyTorch's (one object per layout; unpickling returns it).

>>> import ember
>>> ember.ones(2).layout, isinstance(ember.strided, ember.layout)
(ember.strided, True)
"""

_BY_NAME: dict = {}


class layout(str):
    """A tensor layout; compares equal to its name (``ember.strided == "strided"``)."""
    __slots__ = ()

    def __repr__(self):
        return "ember." + str.__str__(self)

    def __str__(self):  # the name: messages written as torch's ("torch.{layout}") keep working
        return str.__str__(self)

    def __reduce__(self):
        return (named, (str.__str__(self),))


def named(name: str) -> layout:
    """The layout called ``name`` (made on first use; one object per name)."""
    found = _BY_NAME.get(name)
    if found is None:
        found = _BY_NAME[name] = layout(name)
    return found


strided = named("strided")
sparse_coo = named("sparse_coo")
sparse_csr = named("sparse_csr")
sparse_csc = named("sparse_csc")
sparse_bsr = named("sparse_bsr")
sparse_bsc = named("sparse_bsc")
jagged = named("jagged")
_mkldnn = named("_mkldnn")
