"""svmscreen: exact SVM training in the LIBSVM tradition, with safe sample
screening along regularization paths.

The public names are imported on first use (PEP 562), so that ``import
svmscreen`` and the command-line tools' entry points (``svmscreen._entry``)
load nothing heavy before they can take a Ctrl-C quietly.
"""
import importlib

__version__ = "0.1.0"

# public name -> the module that defines it
_PUBLIC = {
    "ConvergenceWarning": "svmscreen._validation",
    "dump_svmlight_file": "svmscreen.datasets",
    "load_dataset": "svmscreen.datasets",
    "load_svmlight_file": "svmscreen.datasets",
    "BinaryModel": "svmscreen.model",
    "fit_binary": "svmscreen.model",
    "duality_gap": "svmscreen.objective",
    "OneVsOneModel": "svmscreen.one_vs_one",
    "OneVsOnePath": "svmscreen.one_vs_one",
    "PathResult": "svmscreen.path",
    "train_path": "svmscreen.path",
    "RampResult": "svmscreen.ramp",
    "train_ramp": "svmscreen.ramp",
    "train_ramp_path": "svmscreen.ramp",
}
__all__ = sorted(_PUBLIC)


def _unbuilt():
    """Whether this is a source tree without its compiled modules (``import
    svmscreen`` from a clone's root after a plain ``pip install .``)."""
    import importlib.machinery
    import os
    here = os.path.dirname(__file__)
    return not any(os.path.exists(os.path.join(here, "_solver" + suffix))
                   for suffix in importlib.machinery.EXTENSION_SUFFIXES)


# Every public name and submodule needs the compiled modules: say so here,
# once.  Checked on first use only, a top-level name said it, while
# ``import svmscreen.estimators`` met "cannot import name '_kernels'".
if _unbuilt():
    raise ImportError(
        f"svmscreen was imported from its source tree ({__path__[0]}), whose "
        "compiled modules are not built: run from another directory to use the "
        "installed package, or build here with `python -m pip install -e .`")


def __getattr__(name):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    else:
        # a submodule (``svmscreen.path``) reached as an attribute, as it
        # was while this file imported them all
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
