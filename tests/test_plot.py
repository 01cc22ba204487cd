"""PathResult.plot (and OneVsOnePath's): the four panels show the path's
own numbers, and a missing matplotlib (an optional extra) gives an
ImportError that says how to install it."""
import sys

import numpy as np
import pytest
from conftest import load_dataset

from svmscreen.path import train_path


@pytest.fixture(scope="module", params=["two classes", "four classes"])
def path(request):
    """A binary path, and a one-vs-one one (its panels sum the pairs)."""
    if request.param == "two classes":
        X, y = load_dataset("heart_scale")
    else:
        X, y = load_dataset("letter.scale")
        rows = np.flatnonzero(y <= 4)[:300]
        X, y = X[rows], y[rows]
    return train_path(X, y, C=np.geomspace(0.1, 10, 4), cv=3)


def test_plot_without_matplotlib_names_the_extra(path, monkeypatch):
    # None in sys.modules makes "import matplotlib.pyplot" fail.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"svmscreen\[plot\]"):
        path.plot()


def test_plot_draws_the_path(path):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    axes = path.plot()
    try:
        assert len(axes) == 4
        np.testing.assert_allclose(axes[0].lines[0].get_xdata(), path.C)
        np.testing.assert_allclose(axes[0].lines[0].get_ydata(), path.n_sv)
        np.testing.assert_allclose(axes[1].lines[0].get_ydata(), 100 * path.screening_rate)
        # the CV panel is an errorbar: its first line is the mean
        np.testing.assert_allclose(axes[2].lines[0].get_ydata(), 100 * path.cv_mean)
        np.testing.assert_allclose(axes[3].lines[0].get_ydata(), path.solve_seconds)
        np.testing.assert_allclose(axes[3].lines[1].get_ydata(), path.rule_seconds)
        assert all(ax.get_xscale() == "log" for ax in axes)
    finally:
        plt.close("all")


def test_plot_needs_four_axes(path):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    _, axes = plt.subplots(1, 2)
    try:
        with pytest.raises(ValueError, match="4 Axes"):
            path.plot(axes=axes)
    finally:
        plt.close("all")


@pytest.mark.parametrize("shape", [(2, 3), (1, 5)])
def test_plot_refuses_more_than_four_axes(path, shape):
    # The extra Axes were given the log scale and the "C" label of a panel.
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    _, axes = plt.subplots(*shape)
    try:
        with pytest.raises(ValueError, match="4 Axes"):
            path.plot(axes=axes)
        assert all(ax.get_xscale() == "linear" and not ax.lines for ax in axes.ravel())
    finally:
        plt.close("all")


def test_plot_refuses_axes_that_are_not_axes(path):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    with pytest.raises(TypeError, match="axes must hold 4 matplotlib Axes"):
        path.plot(axes=[1, 2, 3, 4])
