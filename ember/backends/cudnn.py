"""``ember.backends.cudnn``: not available; its flags are plain settable attributes, as a
script expects (they select nothing on ember)."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
