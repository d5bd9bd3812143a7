"""``ember.utils.model_zoo``: the old home of ``load_url`` (``ember.hub.load_state_dict_from_url``).

>>> from ember.utils import model_zoo
>>> import ember
>>> model_zoo.load_url is ember.hub.load_state_dict_from_url
True
"""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401

__all__ = ["load_url"]
