"""``ember.backends.mkldnn``: oneDNN kernels; ember has none."""

enabled = True


def is_available():
    return False
