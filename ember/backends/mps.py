"""``ember.backends.mps``: Apple's Metal backend; ember has none."""


def is_available():
    return False


def is_built():
    return False
