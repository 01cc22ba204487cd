"""The command-line tools' entry points (pyproject.toml's scripts and
``python -m svmscreen``).

Each imports its command's module inside the same Ctrl-C handling the
commands have: numpy, scipy and the compiled modules take a few tenths of
a second to load, and an interrupt then ended in a traceback.  An
interrupted command exits with 130 (128 + SIGINT), as once loaded: the
LIBSVM tools without a word, like the C tools, ``svmscreen`` with a line.
"""
import importlib
import sys

INTERRUPTED = 128 + 2


def _run(module, function, argv, interrupted=None):
    try:
        main = getattr(importlib.import_module(module), function)
    except KeyboardInterrupt:
        if interrupted:
            print(interrupted, file=sys.stderr)
        return INTERRUPTED
    return main(argv)


def main(argv=None):
    """``svmscreen`` (``svmscreen.cli.main``)."""
    return _run("svmscreen.cli", "main", argv, "svmscreen: interrupted")


def train_main(argv=None):
    """``svmscreen-train``."""
    return _run("svmscreen.libsvm.commands", "train_main", argv)


def predict_main(argv=None):
    """``svmscreen-predict``."""
    return _run("svmscreen.libsvm.commands", "predict_main", argv)


def scale_main(argv=None):
    """``svmscreen-scale``."""
    return _run("svmscreen.libsvm.commands", "scale_main", argv)
