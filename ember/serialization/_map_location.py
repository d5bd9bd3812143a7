"""``map_location``: where each loaded tensor goes.

A device named by the file that can't be parsed is the file's fault (a ``LoadError``); a
failure of the caller's own choice -- their callable raising, a device they named that
ember lacks -- reaches the caller unchanged (wrapped in ``CallerError`` on the way out).
"""
from ._errors import CallerError, LoadError
from ..device import device


def check_map_location(map_location):
    if map_location is None or isinstance(map_location, (str, device, dict)) or \
            callable(map_location):
        return
    raise TypeError(f"map_location should be a str, device, dict or callable, "
                    f"got {type(map_location).__name__}")


def relocate(t, location, map_location, name):
    """``t`` (loaded from a file saying it was on ``location``) moved as ``map_location`` says."""
    from_file = map_location is None or (isinstance(map_location, dict)
                                         and location not in map_location)
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, device)):
        target = map_location
    elif map_location is not None:
        try:
            out = map_location(t, location)
        except Exception as e:
            raise CallerError(e) from None
        return t if out is None else out
    else:
        target = location
    try:
        dev = device(str(target))
        if dev.type == "cpu":
            return t
        return t.to(dev)
    except Exception as e:
        if not from_file:
            raise CallerError(e) from None
        raise LoadError(f"ember.load: {name} holds a tensor saved on device {location!r}, "
                        f"which ember can't place it on ({e}); pass map_location='cpu' to "
                        "load it on the CPU") from None
