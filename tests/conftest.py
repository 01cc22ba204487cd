"""Shared fixtures for the svmscreen tests.

OMP_NUM_THREADS is pinned before libsvm-official is imported anywhere, so the
reference runs single-threaded and timings stay reproducible.

Hypothesis runs with fixed seeds by default (``derandomize``), so the default
run is reproducible.  ``HYPOTHESIS_PROFILE=wide`` draws fresh examples, 300
per property test (``HYPOTHESIS_EXAMPLES=n`` for another number):

    HYPOTHESIS_PROFILE=wide python -m pytest tests/test_solver.py -m "not slow"
"""
import functools
import lzma
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("wide", derandomize=False, print_blob=True,
                          max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 300)))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def examples(default):
    """``default`` examples in the default (fast, derandomized) profile; the
    profile's count when HYPOTHESIS_PROFILE is set (e.g. ``wide``)."""
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return settings().max_examples
    return default


@functools.lru_cache(maxsize=None)
def load_dataset(name, max_rows=None, seed=0):
    """(X as CSR float64 with sorted indices, y) from data/<name>.xz,
    subsampled (without replacement, fixed seed, original order kept) to at
    most ``max_rows`` rows.  Callers must not modify the returned arrays."""
    from sklearn.datasets import load_svmlight_file
    with lzma.open(os.path.join(DATA_DIR, name + ".xz"), "rb") as handle:
        X, y = load_svmlight_file(handle)
    if max_rows is not None and X.shape[0] > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
        X, y = X[rows], y[rows]
    X = X.tocsr()
    X.sort_indices()
    X.data.setflags(write=False)
    y.setflags(write=False)
    return X, y


@pytest.fixture
def heart():
    return load_dataset("heart_scale")


def subprocess_env(**extra):
    """The environment for a child Python run away from the source tree:
    the installed package, or in a development run the same (absolute)
    PYTHONPATH, so that the child never imports the uncompiled sources."""
    env = dict(os.environ, **extra)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p)
                                            for p in env["PYTHONPATH"].split(os.pathsep) if p)
    return env


def refusals_in_a_child(setup, calls, cwd):
    """Run ``setup`` (Python source) and then each expression of ``calls``
    in a child Python, away from the source tree, printing the message of
    each ValueError; returns the child's stdout after asserting that it
    ended normally.  For inputs that crashed the interpreter (a segfault or
    heap corruption) before they were refused."""
    import subprocess
    import sys
    code = setup + "\n" + "".join(
        f"try:\n    {call}\nexcept ValueError as exc:\n    print(exc)\n" for call in calls)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=cwd, env=subprocess_env())
    assert out.returncode == 0, out.stderr
    return out.stdout


def comma_locale_env(tmp_path):
    """(locale name, child environment) of a locale whose decimal point is a
    comma (de_DE.UTF-8), built with localedef under tmp_path when the system
    has none; skips the test when neither is possible."""
    import shutil
    import subprocess
    import sys
    name = "de_DE.UTF-8"
    probe = f"import locale; locale.setlocale(locale.LC_NUMERIC, {name!r})"
    env = subprocess_env()
    if subprocess.run([sys.executable, "-c", probe], env=env,
                      capture_output=True).returncode != 0:
        if shutil.which("localedef") is None:
            pytest.skip("no de_DE locale and no localedef to build one")
        subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(tmp_path / name)],
                       capture_output=True, timeout=120)
        env = subprocess_env(LOCPATH=str(tmp_path))
        if subprocess.run([sys.executable, "-c", probe], env=env,
                          capture_output=True).returncode != 0:
            pytest.skip("could not build a de_DE locale")
    return name, env
