"""Primal objective and duality gap of any feasible point of the box QP.

For the QP of ``_solver`` (min 1/2 a'Qa + p'a, lo <= a <= hi, optionally
y'a = delta) and a feasible a with gradient G = Qa + p, convexity gives, for
every feasible a* and every intercept b,

    f(a*) >= f(a) + (G + b y)'(a* - a) >= f(a) - h(b),
    h(b) = sum_i (a_i - lo_i) [G_i + y_i b]_+  +  (hi_i - a_i) [G_i + y_i b]_-.

So h(b) bounds the suboptimality of a, for any b.  For C-SVC (p = -1,
lo = 0, hi = C, y'a = 0) h(b) is exactly the primal-dual gap
P(w(a), b) - D(a) of the SVM, with G_i + y_i b = y_i f(x_i) - 1, which is why
the same function serves the path, the screening rules and the tests.
Without the equality, b = 0.
"""
import numpy as np

from svmscreen import _rules
from svmscreen._validation import check_vector


class Gap:
    """Duality gap of a feasible point.

    Attributes
    ----------
    gap : float
        h(b) at the minimising intercept, >= 0.
    b : float
        The intercept minimising h (0 without the equality).
    dual : float
        The dual value in max form, -(1/2 a'Qa + p'a).
    primal : float
        dual + gap; for C-SVC, 1/2||w||^2 + sum_i C_i xi_i at that b.
    """

    def __init__(self, gap, b, dual):
        self.gap = gap
        self.b = b
        self.dual = dual
        self.primal = dual + gap

    def __repr__(self):
        return f"Gap(gap={self.gap!r}, b={self.b!r}, primal={self.primal!r}, dual={self.dual!r})"


def gap_at(b, alpha, grad, lo, hi, y):
    """h(b) of the module docstring (``_rules.gap_at``, the solver's gap
    rule's own h)."""
    alpha, (grad, lo, hi), y = _vectors(alpha, (grad, lo, hi), y)
    return _rules.gap_at(alpha, grad, lo, hi, y, b)


def duality_gap(alpha, grad, p, lo, hi, y=None):
    """Duality gap, primal and dual objective of a feasible point.

    Parameters
    ----------
    alpha : ndarray of shape (n,)
        A feasible point: lo <= alpha <= hi (checked to 1e-12 relative).
    grad : ndarray of shape (n,)
        Q alpha + p.
    p, lo, hi : ndarray of shape (n,), or scalars for every sample
    y : ndarray of shape (n,) or None
        Signs (+1/-1) of the equality constraint; None for the bias-free
        problem.

    Returns
    -------
    Gap

    Raises
    ------
    ValueError, TypeError
        Shapes that differ, values that are not finite real numbers, lo > hi,
        alpha outside [lo, hi], or y not in {-1, +1}: the gap of such a
        point would not bound anything.  Finite values whose objective or
        gap overflows float64.
    """
    alpha = check_vector(alpha, None, "alpha")
    n = alpha.shape[0]
    grad, p, lo, hi = (check_vector(v, n, name, scalar=True) for v, name in
                       ((grad, "grad"), (p, "p"), (lo, "lo"), (hi, "hi")))
    if np.any(lo > hi):
        raise ValueError("lo must be <= hi for every sample")
    # relative to the box, as documented: an absolute 1e-12 took a point
    # 5e7 times outside a box of 1e-20 and called it optimal (gap 0)
    slack = 1e-12 * np.maximum(np.abs(lo), np.abs(hi))
    if np.any(alpha < lo - slack) or np.any(alpha > hi + slack):
        raise ValueError("alpha must be feasible: lo <= alpha <= hi")
    if y is not None:
        if np.asarray(y).dtype == bool:
            raise TypeError("y must hold the signs +1 and -1, got booleans")
        y = check_vector(y, n, "y", scalar=True)
        if not np.all(np.abs(y) == 1.0):
            raise ValueError("y must hold the signs +1 and -1")
    gap = gap_of(alpha, grad, p, lo, hi, y)
    # finite inputs whose products overflow: alpha = [1e308, 1e308] and
    # grad = [1e308, -1e308] gave primal = dual = nan, 1e200 gave inf
    if not (np.isfinite(gap.gap) and np.isfinite(gap.dual) and np.isfinite(gap.primal)):
        raise ValueError("the objective or the duality gap of this point overflows float64 "
                         f"(gap {gap.gap!r}, dual {gap.dual!r}): scale alpha, grad, p, lo and "
                         "hi down")
    return gap


def gap_of(alpha, grad, p, lo, hi, y=None):
    """``duality_gap`` without its checks, for the package's own feasible
    points (the path and the rules call it once a step).  The minimising
    intercept is the least kink b_i = -y_i G_i of h where the summed box
    widths reach sum_i l_i, a weighted quantile found in O(n)
    (``_rules.gap_terms``)."""
    alpha, (grad, p, lo, hi), y = _vectors(alpha, (grad, p, lo, hi), y)
    return Gap(*_rules.gap_terms(alpha, grad, p, lo, hi, y))


def _vectors(alpha, others, y):
    """alpha as a contiguous float64 vector, ``others`` and y (None stays
    None) as vectors of its shape (``_as_vector``), for the typed loops."""
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    others = tuple(_as_vector(v, alpha.shape) for v in others)
    return alpha, others, (None if y is None else _as_vector(y, alpha.shape))


def _as_vector(value, shape):
    """value as a contiguous float64 vector of ``shape`` (a scalar repeated);
    the path's own vectors pass through as they are (a step's gap is O(n))."""
    if (type(value) is np.ndarray and value.dtype == np.float64
            and value.shape == shape and value.flags.c_contiguous):
        return value
    return np.ascontiguousarray(np.broadcast_to(np.asarray(value, dtype=np.float64), shape))
