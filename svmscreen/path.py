"""The regularization path: one warm-started, screened solve per value of C.

Order (paper 000 §IV-B; paper 003 §4): C increases; each optimum is the
reference of the next screening step and, scaled by C_t / C_{t-1}, its warm
start; one kernel cache serves the whole path, since Q does not depend on C.
Once no sample sits at its upper bound the solution is the hard-margin one
and stays optimal for every larger C, so the path stops solving there.
"""
import functools
import numbers
import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp

from svmscreen import _rules
from svmscreen._kernels import Kernel, compute_layout, dense_enough, take_rows
from svmscreen._solver import QMatrix
from svmscreen._validation import (ConvergenceWarning, binary_signs, check_box_overflow,
                                   check_flag, check_labels, check_n_jobs, check_parameters,
                                   check_precomputed, check_sample_weight, check_X,
                                   class_bounds, is_balanced, resolve_gamma, stopped_short)
from svmscreen.dense_qp import repair_equality
from svmscreen.model import BinaryModel
from svmscreen.objective import Gap, gap_of
from svmscreen.reduced import solve_reduced

SCREENING_RULES = ("it", "dvi", "bt2", "essnsv", "ssnsv")

# The clock of PathResult.rule_seconds / solve_seconds (wall time).  A
# benchmark on a shared machine may set it to time.thread_time, whose
# millisecond readings a busy neighbour does not inflate.
_clock = time.perf_counter


# ----------------------------------------------------------------- grids
# The most values a float64 grid holds (numpy's limit on an array's bytes):
# geomspace said "array is too big", or near 2**63 raised an IndexError.
MAX_N_C = np.iinfo(np.intp).max // np.dtype(np.float64).itemsize


def log_grid(C_range, n_C):
    """n_C values log-spaced over C_range = (C_low, C_high), strictly
    increasing."""
    low, high = check_C_range(C_range)
    check_n_C(n_C)
    if n_C == 1:
        return np.array([low])
    grid = np.geomspace(low, high, int(n_C))
    if np.any(np.diff(grid) <= 0):
        raise ValueError(f"C_range={C_range!r} holds fewer than n_C={n_C} distinct values "
                         "(the path's C must increase strictly): use n_C=1 or a wider range")
    return grid


def check_n_C(n_C):
    """n_C as the log grid's size: a positive integer an array can hold."""
    if isinstance(n_C, bool) or not isinstance(n_C, (int, np.integer)) or n_C < 1:
        raise ValueError(f"n_C must be a positive integer, got {n_C!r}")
    if n_C > MAX_N_C:
        raise ValueError(f"n_C={n_C} is more values than an array can hold (at most "
                         f"{MAX_N_C})")
    return n_C


def check_epsilon(epsilon):
    """epsilon as the epsilon-path's relative dual error, in [EPSILON_MIN, 1)."""
    # as tol: a Decimal or a string in range was refused as out of range
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got {epsilon!r}")
    if not EPSILON_MIN <= epsilon < 1:
        raise ValueError(f"epsilon must be in [{EPSILON_MIN:g}, 1), got {epsilon!r}")
    return epsilon


def check_choice(value, name, choices, allow_none=False):
    """A str among ``choices`` (or None if ``allow_none``), returned as a
    plain str: an array compared with ``in`` raised numpy's "truth value of
    an array ... is ambiguous", which names no parameter."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}{' or None' if allow_none else ''}, "
                         f"got {value!r}")
    return str(value)


def check_C_range(C_range):
    # a pair of real numbers, as check_C_grid's C: a string is not a pair
    # ("12" read as (1, 2)), nor are bools, Decimals or strings float() reads
    try:
        if isinstance(C_range, (str, bytes, dict)):
            raise ValueError
        ends = list(C_range)
        low, high = ends
    except (TypeError, ValueError):
        raise ValueError(f"C_range must be a pair (C_low, C_high), got {C_range!r}") from None
    if any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in ends):
        raise TypeError(f"C_range's ends must be real numbers, got {C_range!r}")
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= high):
        raise ValueError(f"C_range must satisfy 0 < C_low <= C_high, got {C_range!r}")
    return low, high


def check_C_grid(C):
    """C as a 1-d float grid, checked: finite, positive, strictly increasing."""
    # as fit_binary's C: real numbers, not bools (True is not a C of 1) nor
    # Decimals or strings that float() would read
    try:
        if isinstance(C, (str, bytes, dict)) or any(
                isinstance(c, bool) or not isinstance(c, numbers.Real)
                for c in np.asarray(C, dtype=object).ravel()):
            raise TypeError
        grid = np.asarray(C, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"C must be a number or a 1-d sequence of numbers, got {C!r}") from None
    if grid.ndim > 1:
        raise ValueError(f"C must be a number or a 1-d grid, got shape {grid.shape}")
    grid = grid.ravel()
    if grid.size == 0:
        raise ValueError("C is an empty grid")
    if not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"every C must be finite and > 0, got {grid.tolist()[:10]}")
    if np.any(np.diff(grid) <= 0):
        raise ValueError("C must be strictly increasing (the path warm-starts upward)")
    return grid


def epsilon_step(C_prev, alpha, grad, p, lo, hi, y, epsilon, Q=None):
    """Largest C_t such that the scaled reference (C_t/C_prev) alpha is
    epsilon-optimal in relative dual value over [C_prev, C_t].

    Paper 000 App. D, eq. (35); the step formula is the reconstruction of
    notes/seed_000_ogawa_tnnls.md §4: with s = C/C_prev, W0 = a'Qa,
    U0 = -p'a (= sum a for SVC) and xi0 = P(w0) - W0/2 over C_prev,
        gap(s) = W0/2 + s C_prev xi0 - s U0 + s^2 W0 / 2 <= eps D(s a),
    i.e. (1 + eps) W0 s^2 - 2 b s + W0 <= 0,  b = U0 - C_prev xi0 + eps U0.

    Returns None when no step is certified: the reference's own duality gap
    exceeds epsilon times its dual value (the inequality fails at s = 1).
    ``Q`` (the QMatrix): W0 from its columns where the gradient cannot give
    it.
    """
    # W0, U0 and C_prev xi0 in units of a power of two near max alpha (an
    # exact scaling; s_max does not depend on the unit): W0 = a'Qa is
    # quadratic in alpha, and below C_prev ~ 1e-160 it underflowed to 0,
    # which read as an infinite step (C_prev = 1e-200 went to C_max at once)
    unit = _power_of_two(float(np.abs(alpha).max()))
    a = alpha / unit
    W0 = float(a @ (grad - p))
    # G stores Q a + p to about eps (1 + |G_i|): where Q a is that small
    # (C_prev = 1e-17), W0 cancelled to 0 and read as an infinite step
    W0_roundoff = _rules.gradient_floor(float(np.abs(grad).max())) * float(np.abs(a).sum())
    q = W0 / unit                   # a'Qa in a's units squared: W0 = unit q
    if Q is not None and W0 <= 1e3 * W0_roundoff:
        support = np.flatnonzero(alpha)
        # Q (alpha / unit): a subnormal alpha (C_prev below 1e-308) had lost
        # its digits in Q alpha, and W0 = unit q underflows there
        q = float(a[support] @ Q.add_columns(support, a[support],
                                             np.zeros(alpha.size))[support])
        W0 = unit * q
    U0 = -float(p @ a)
    if unit < _TINY:
        # h is linear in (alpha, lo, hi): in a's units it keeps the digits that
        # the subnormal primal and dual values lose
        gap = gap_of(a, grad, p, lo / unit, hi / unit, y)
        C_xi0 = gap.primal - 0.5 * W0
    else:
        gap = gap_of(alpha, grad, p, lo, hi, y)
        # P_{C_prev}(w0, b) = W0/2 + C_prev xi0
        C_xi0 = gap.primal / unit - 0.5 * W0
    b = U0 - C_xi0 + epsilon * U0
    if q <= 0:
        # w = 0 (a zero kernel, or alpha = 0): the inequality is -2 b s <= 0,
        # every s or none, as s = 1 decides; an inaccurate reference (a solve
        # stopped at max_iter) had been certified to C_max all the same
        return np.inf if b >= 0 else None
    # b and W0 in units of the larger (exact again): their squares below
    # neither overflow nor underflow
    scale = _power_of_two(max(abs(b), W0))
    b, W0 = b / scale, W0 / scale
    disc = b * b - (1 + epsilon) * W0 * W0
    if disc < 0 or b <= 0:
        return None
    # The inequality holds between the two roots; s = 1 (the reference itself,
    # whose gap must be <= epsilon D) lies between them iff the larger is >= 1.
    root = b + np.sqrt(disc)
    if not root > (1 + epsilon) * W0:
        return None
    # C_prev s_max = C_prev root scale / ((1 + epsilon) unit q), the powers of
    # two added as exponents: s_max ~ 1 / C_prev overflowed to inf below
    # C_prev ~ 1e-308, and the path went from there to C_max at once
    mantissa, exponent = np.frexp(C_prev)
    exponent += np.frexp(scale)[1] - np.frexp(unit)[1]
    with np.errstate(over="ignore"):    # a step beyond float64 ends at C_max
        return float(np.ldexp(mantissa * root / ((1 + epsilon) * q), exponent))


def _power_of_two(value):
    """The power of two 2**e with value in [2**(e-1), 2**e) (1 for 0):
    dividing by it is exact."""
    return float(np.ldexp(1.0, np.frexp(value)[1]))


# ------------------------------------------------------------ warm start
# Above this product of C / C_prev since the gradient was last computed from
# Q's columns, the warm start computes it afresh.  Scaling multiplies the
# gradient's round-off, about eps (1 + |G_i|) whatever the size of Q alpha,
# along with it: after a jump of 3.9e6 (a grid from C_min straight to 6901)
# it had left W = a'Qa off by 3e-6, beyond the rules' round-off allowance
# (docs/screening.md sec. 8), and DVI proved free support vectors to be 0;
# over many small steps (50 C in [1e-6, 1e4], tol 1e-6) the last solve
# stopped at a violation of 58 tol, read from a gradient scaled 1e10-fold.
GRADIENT_REFRESH_SCALE = 10.0

# Above this C / C_prev the solve starts cold, as at the first C: a scaled
# start puts the bound samples at C, and a solve that must bring some of
# them down to the optimum's values loses eps C of each (C from 1 to 1e16 on
# heart_scale: an objective of -29192 reported as optimal, against -4980).
COLD_START_SCALE = 1e4

# Relative distance below the upper bound within which a warm start's entry
# is set to the bound (``snap_to_upper``).
UPPER_SNAP = 8 * np.finfo(np.float64).eps

# The epsilon-path (``_epsilon_next``): a solution whose relative duality gap
# exceeds epsilon certifies no step, and is solved again, to at most this
# tolerance.  Below EPSILON_MIN the steps (about C sqrt(2 epsilon D / W),
# notes/seed_000_ogawa_tnnls.md sec. 4) would number in the millions over
# [1e-2, 1e3], and the reference's round-off would match epsilon.
EPSILON_TOL_MIN = 1e-12
EPSILON_MIN = 1e-8


def snap_to_upper(alpha0, hi):
    """Set the entries of a warm start within round-off of their upper
    bound (relative UPPER_SNAP) to it, in place.  A sample at the bound at
    C_prev scaled by C / C_prev (or extrapolated) can land one ulp below C;
    the solver would then take it for a free support vector, and where no
    other sample is free the intercept would come from that sample alone,
    not from the midpoint of the interval LIBSVM takes.  Measured on an iris
    fold (classes 1 and 2, gamma 0.1, C = 0.052): the same alpha as the
    unscreened path, but b = 0.185 against -0.030, which moved held-out
    decision values by 0.2.  Moving an entry by an ulp leaves its gradient
    within round-off."""
    near = alpha0 >= hi * (1.0 - UPPER_SNAP)
    alpha0[near] = hi[near]
    return alpha0


def warm_start(alpha, grad, p, scale, hi, Q, drift=1.0):
    """The warm start at C = scale * C_prev: the previous optimum scaled
    (paper 000 sec. IV-B, "alpha seeding"), clipped to the box and the
    bound entries kept at the bound against round-off (``snap_to_upper``),
    with its gradient, which scaling gives without kernel columns:
    Q (s a) + p = s (G - p) + p.  ``drift``: the factor by which grad's
    round-off has been scaled since it was computed from Q's columns; once
    drift * scale exceeds GRADIENT_REFRESH_SCALE the gradient is computed
    from the columns of the nonzero a again.  Returns (alpha0, grad0,
    drift of grad0)."""
    alpha0 = snap_to_upper(np.minimum(alpha * scale, hi), hi)
    if drift * scale <= GRADIENT_REFRESH_SCALE:
        return alpha0, scale * (grad - p) + p, drift * scale
    support = np.flatnonzero(alpha0)
    return (alpha0, Q.add_columns(support, alpha0[support], np.array(p, dtype=np.float64)),
            1.0)


def extrapolated_start(alpha0, grad0, alpha, alpha_before, ratio, problem, hi):
    """A better warm start on a path: the two previous optima extrapolated.

    While no sample changes between 0, free and the bound, the optimum is
    affine in C: the free alpha_E and b solve
        Q_EE alpha_E + C Q_EL hi_unit_L - 1 + y_E b = 0,
        y_E'alpha_E + C y_L'hi_unit_L = 0,
    whose right-hand side is affine in C (the piecewise-linear path of Hastie
    et al., JMLR 2004, in C instead of 1/C).  So
        alpha(C) ~ alpha + ratio (alpha - alpha_before),
        ratio = (C - C_prev) / (C_prev - C_before),
    clipped to the box, with the equality restored (``repair_equality``), is
    exact within such a segment, where the scaled start alpha0 = (C/C_prev)
    alpha (``warm_start``) is exact only for the samples at a bound.  Its
    gradient is grad0 plus the kernel columns of the entries that differ
    from alpha0 (mostly the free support vectors), exact as the solver's
    own updates.  Returns (alpha0, grad0) unchanged if the equality cannot
    be restored."""
    start = snap_to_upper(np.clip(alpha + ratio * (alpha - alpha_before), problem.lo, hi), hi)
    if problem.y is not None:
        start = repair_equality(start, problem.y, problem.lo, hi,
                                np.ones(start.shape[0], dtype=bool), float(problem.y @ alpha0))
        if start is None:
            return alpha0, grad0
    changed = np.flatnonzero(start != alpha0)
    if changed.size == 0:
        return alpha0, grad0
    return start, problem.Q.add_columns(changed, start[changed] - alpha0[changed], grad0.copy())


# --------------------------------------------------------------- results
class PathResult:
    """The path: per C, the solution (or its summary) and what it cost.

    Attributes (arrays of length n_C)
    ---------------------------------
    C, objective, duality_gap, intercept, n_sv, n_zero (|R|: a = 0),
    n_bound (|L|: a = C_i), screened_zero (|R'|), screened_bound (|L'|),
    put_back, n_iter, rule_seconds (the screening rule), solve_seconds (the
    solve, including setting the screened variables of the warm start to
    their bounds), status ("optimal", or "max_iter" / "round_off" where the
    solver stopped short of tol, ``_solver.SolveResult.status``; the model
    at that C reports it).
    alphas : list of ndarray or None
        The solutions, with ``keep="all"``.
    cv_accuracy : ndarray of shape (n_folds, n_C) or None
    screening_rate, cv_mean, cv_std : ndarray (properties)
        (|R'| + |L'|) / n_variables, and the CV accuracy's mean and std over
        the folds, per C.
    best_index, best_C, best_model : properties
        The C of the best mean CV accuracy, and its model on all data.
    n_variables : int
        The dual variables of the problem (training samples).
    classes_ : ndarray
    gamma : float
        The kernel's gamma (resolved from "scale" or None).
    """

    FIELDS = ("C", "objective", "duality_gap", "intercept", "n_sv", "n_zero", "n_bound",
              "screened_zero", "screened_bound", "put_back", "n_iter", "rule_seconds",
              "solve_seconds", "status")

    def __init__(self, rows, alphas, model_params, X, signs, classes, X_is_private=False,
                 X_rows=None):
        for name in self.FIELDS:
            setattr(self, name, np.array([row[name] for row in rows]))
        self.n_variables = signs.size       # the dual variables of the problem
        self.alphas = alphas
        self.cv_accuracy = None
        self._model_params = model_params
        self._n_features = None if X is None else X.shape[1]
        # The rows that are a support vector at some C, copied: a model built
        # later must not follow changes to the caller's X (the path shares
        # an X that needed no conversion), and the others are never read.
        # An X of the path's own (a one-vs-one pair's rows, or the one-vs-one
        # path's copy of X, whose rows X_rows are the pair's) is kept as is.
        self._sv_rows = self._sv_X = self._sv_X_rows = None
        if X_is_private and X is not None:
            self._sv_rows, self._sv_X, self._sv_X_rows = np.arange(signs.size), X, X_rows
        elif alphas is not None and X is not None and model_params["kernel"] != "precomputed":
            used = np.zeros(signs.size, dtype=bool)
            for alpha in alphas:
                used |= alpha > 0
            self._sv_rows = np.flatnonzero(used)
            self._sv_X = X[self._sv_rows]
        self._signs = signs
        self.classes_ = classes

    def __len__(self):
        return len(self.C)

    def __repr__(self):
        # as BinaryModel's and OneVsOneModel's: the default told only the
        # object's address
        cv = ("" if self.cv_accuracy is None else
              f", cv_folds={self.cv_accuracy.shape[0]}, best_C={self.best_C!r}")
        return (f"{type(self).__name__}(n_C={len(self)}, C=[{self.C[0]:.4g} .. "
                f"{self.C[-1]:.4g}], classes={self.classes_.size}, "
                f"gamma={getattr(self, 'gamma', None)!r}{cv})")

    @property
    def screening_rate(self):
        """(|R'| + |L'|) / n per C."""
        return (self.screened_zero + self.screened_bound) / float(self.n_variables)

    @property
    def cv_mean(self):
        return None if self.cv_accuracy is None else self.cv_accuracy.mean(axis=0)

    @property
    def cv_std(self):
        return None if self.cv_accuracy is None else self.cv_accuracy.std(axis=0)

    @property
    def best_index(self):
        """Index of the best C: highest CV accuracy (smallest C on ties,
        ``first_best``)."""
        if self.cv_accuracy is None:
            raise ValueError("best_C needs cross-validation: call train_path with cv=k (a "
                             "class pair's path has none of its own: the multiclass "
                             "path's best_C is by the pairs' votes)")
        return first_best(self.cv_mean, self.cv_accuracy.shape[0])

    @property
    def best_C(self):
        return float(self.C[self.best_index])

    def model(self, index):
        """The BinaryModel at path position ``index`` (needs keep="all")."""
        if self.alphas is None:
            raise ValueError("the path kept summaries only (keep='summary'); "
                             "refit with svmscreen.fit_binary at that C")
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"index must be an integer position on the path, got {index!r}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} out of range for a path of {len(self)} values of C")
        alpha = self.alphas[index]
        support = np.flatnonzero(alpha > 0)
        params = self._model_params
        sv = (np.empty((0, 0)) if params["kernel"] == "precomputed"
              else self._sv_X[self._sv_X_rows[support]] if self._sv_X_rows is not None
              else self._sv_X[np.searchsorted(self._sv_rows, support)])
        return BinaryModel(
            classes=self.classes_, kernel=params["kernel"], gamma=params["gamma"],
            coef0=params["coef0"], degree=params["degree"], C=float(self.C[index]),
            fit_intercept=params["fit_intercept"], support=support, support_vectors=sv,
            dual_coef=self._signs[support] * alpha[support],
            intercept=float(self.intercept[index]), alpha=alpha.copy(),
            objective=float(self.objective[index]),
            duality_gap=float(self.duality_gap[index]), n_iter=int(self.n_iter[index]),
            status=str(self.status[index]), n_features=self._n_features)

    @property
    def best_model(self):
        return self.model(self.best_index)

    def summary(self):
        """One line per C, as the command prints it."""
        lines = [f"{'C':>10} {'#SV':>6} {'screened%':>9} {'put back':>8} "
                 f"{'CV acc%':>8} {'iters':>7} {'seconds':>8}"]
        cv = self.cv_mean
        for t in range(len(self)):
            acc = f"{100 * cv[t]:8.2f}" if cv is not None else f"{'-':>8}"
            lines.append(f"{self.C[t]:10.4g} {self.n_sv[t]:6d} "
                         f"{100 * self.screening_rate[t]:9.1f} {self.put_back[t]:8d} {acc} "
                         f"{self.n_iter[t]:7d} "
                         f"{self.rule_seconds[t] + self.solve_seconds[t]:8.3f}")
        return "\n".join(lines)

    def plot(self, axes=None):
        """#SV, screening rate, CV accuracy and time against C (matplotlib).

        ``axes``: exactly 4 matplotlib Axes (any shape, e.g. plt.subplots(2,
        2)'s), or None for a new figure.  Returns them, flattened.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("PathResult.plot needs matplotlib: "
                              "pip install 'svmscreen[plot]'") from None
        if axes is None:
            _, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
        axes = np.asarray(axes, dtype=object).ravel()
        # more than 4 would have the panels' log scale and labels put on the
        # caller's other Axes
        if axes.size != 4:
            raise ValueError(f"plot draws four panels: axes must hold 4 Axes, got {axes.size}")
        from matplotlib.axes import Axes
        if not all(isinstance(ax, Axes) for ax in axes):
            raise TypeError(f"axes must hold 4 matplotlib Axes, got "
                            f"{[type(ax).__name__ for ax in axes]}")
        axes[0].plot(self.C, self.n_sv, "o-")
        axes[0].set_ylabel("# support vectors")
        axes[1].plot(self.C, 100 * self.screening_rate, "o-")
        axes[1].set_ylabel("screened (%)")
        if self.cv_accuracy is not None:
            axes[2].errorbar(self.C, 100 * self.cv_mean, yerr=100 * self.cv_std, fmt="o-")
        axes[2].set_ylabel("CV accuracy (%)")
        axes[3].plot(self.C, self.solve_seconds, "o-", label="solve")
        axes[3].plot(self.C, self.rule_seconds, "s-", label="rule")
        axes[3].set_ylabel("seconds")
        axes[3].legend()
        for ax in axes:
            ax.set_xscale("log")
        for ax in axes[2:]:
            ax.set_xlabel("C")
        return axes


def first_best(cv_means, n_folds):
    """Index of the first of ``cv_means`` (mean accuracies over n_folds
    folds, each in [0, 1]) to reach their maximum, within the means'
    round-off (n_folds eps): equal means summed from other fold accuracies
    differ in their last bits, and argmax took the larger C.  On
    german.numer_scale, RBF gamma 0.2, 10 folds, 30 C: 0.72 at C = 1.74 and
    0.7200000000000001 at C = 3.86, both 72.00% in the summary, and best_C
    was 3.86."""
    means = np.asarray(cv_means, dtype=np.float64)
    return int(np.flatnonzero(means >= means.max() - n_folds * np.finfo(np.float64).eps)[0])


# ------------------------------------------------------------------ path
_TINY = float(np.finfo(np.float64).tiny)


def may_be_indefinite(kernel, coef0):
    """Whether a kernel given by its parameters need not be positive
    semi-definite: sigmoid, and polynomial with coef0 < 0 (a precomputed
    kernel is judged by its matrix, ``_Problem.not_psd``)."""
    return kernel == "sigmoid" or (kernel == "poly" and coef0 < 0)


class _Problem:
    """The data side of a path: kernel, cached Q, bounds per unit C."""

    def __init__(self, X, signs, hi_unit, kernel, gamma, coef0, degree, cache_size,
                 fit_intercept):
        self.X = X
        self.kernel_params = dict(kernel=kernel, gamma=gamma, coef0=coef0, degree=degree)
        self.n = signs.size
        self.signs = signs
        self.kernel = Kernel(compute_layout(X), kernel, gamma, coef0, degree)
        self.Q = QMatrix(self.kernel, signs, cache_size)
        # every column of Q, in doubles, within the cache budget
        self.q_fits_cache = 8.0 * self.n * self.n <= cache_size * (1 << 20)
        self.hi_unit = hi_unit              # C_i / C (class and sample weights)
        self.p = -np.ones(self.n)
        self.lo = np.zeros(self.n)
        self.y = signs if fit_intercept else None
        self.weighted = hi_unit > 0         # the samples that can reach a bound
        positive = hi_unit[self.weighted]
        self._unit_min = float(positive.min()) if positive.size else 0.0

    @property
    def any_weighted(self):
        """Whether some sample has a box above 0 (``_unit_min``, the
        smallest positive C_i / C, is 0 only when none has)."""
        return self._unit_min > 0.0

    def boxes_normal(self, C):
        """Whether every positive box C * hi_unit_i is a normal float: the
        rules need boxes proportional between steps (``_rules._box_ratio``,
        within 1e-12), which a box that underflows to a subnormal or to 0
        (C = 1e-295 times a sample_weight of 1e-20) is not.  The boxes only
        grow along a path, so such steps are a prefix of it."""
        return C * self._unit_min >= _TINY

    @functools.cached_property
    def not_psd(self):
        """Why the kernel need not be positive semi-definite, as the words
        after "needs" in ``screening_applies``'s warning, or None: sigmoid,
        polynomial with coef0 < 0, and a precomputed kernel that is not
        symmetric (``_asymmetry`` above SYMMETRY_RTOL).  A symmetric
        precomputed one is taken to be PSD (testing it costs an
        eigendecomposition)."""
        kernel, coef0 = self.kernel_params["kernel"], self.kernel_params["coef0"]
        if may_be_indefinite(kernel, coef0):
            return (f"a positive semi-definite kernel, which kernel={kernel!r} with "
                    f"coef0={coef0:g} need not be")
        if kernel == "precomputed":
            asymmetry = _asymmetry(self.X)
            if asymmetry > SYMMETRY_RTOL:
                return (f"a symmetric kernel matrix; the precomputed X differs from its "
                        f"transpose by {asymmetry:.3g} of its largest entry")
        return None

    def gap(self, alpha, grad, hi):
        """The duality gap (``objective.Gap``) of a feasible alpha at box hi:
        ``gap_of`` without its conversions, for the path's own float64
        vectors (once or twice a step; they were half of its cost)."""
        return Gap(*_rules.gap_terms(alpha, grad, self.p, self.lo, hi, self.y))


def run_path(problem, grid, *, screening, tol, shrinking, max_iter, keep, epsilon=None,
             C_max=None, progress=None, on_solution=None, label=None):
    """Solve along ``grid`` (or an epsilon-path from grid[0] up to C_max).

    ``on_solution(t, C, alpha, grad)``, if given, sees every solution with
    its full gradient (the ramp-loss path starts CCCP from there).
    ``label`` names the path in its warnings ("fold 2/5", a pair of
    classes): the paths of CV folds and pairs warn at the same C, in the
    same words as the whole-data path.
    """
    where = f"{label}, " if label else ""
    p, lo, y = problem.p, problem.lo, problem.y
    rows, alphas = [], ([] if keep == "all" else None)
    alpha = grad = gap = None       # the previous solution, the rule's reference
    C_prev = hi_prev = C_next = None
    before = None                   # (alpha, C) of the solution before it
    hard_margin = False
    # The domes' larger reference (_DomeStep): rows solved ahead of their turn.
    lookahead = getattr(screening, "lookahead", 0)
    ahead = {}                      # grid index -> (result, put_back, solve seconds, drift)
    drift = 1.0                     # of grad's round-off (``warm_start``)
    options = dict(tol=tol, shrinking=shrinking, max_iter=max_iter)
    # On a kernel that need not be PSD the dual is not convex: a warm start,
    # or keeping a hard-margin solution, ends at another stationary point
    # than a fit at that C alone (LIBSVM's, SVC's; sigmoid: decision values
    # 100s apart, and other C picked by CV), so every C starts from 0
    cold_only = problem.not_psd is not None
    t = 0
    while True:
        if epsilon is None:
            if t >= len(grid):
                break
            C = float(grid[t])
        else:
            C = float(grid[0]) if t == 0 else min(C_next, C_max)
            if t > 0 and (C <= C_prev or hard_margin):
                break
        hi = problem.hi_unit * C
        rule_seconds = 0.0
        n_screened_zero = n_screened_bound = 0
        if hard_margin:
            # alpha stays optimal, but its gap grows with the box: tol-level
            # margin violations are weighted by C
            gap = problem.gap(alpha, grad, hi)
            row = dict(rows[-1], C=C, n_iter=0, rule_seconds=0.0, solve_seconds=0.0,
                       screened_zero=0, screened_bound=0, put_back=0,
                       duality_gap=gap.gap)
            rows.append(row)
            if alphas is not None:
                # its own copy: one array for the tail's rows changed them all
                # when a caller edited one in place
                alphas.append(alpha.copy())
            if on_solution is not None:
                on_solution(t, C, alpha, grad)
            t += 1
            if progress:
                progress(t, C)
            continue
        if lookahead and alpha is not None and t not in ahead and not screening.covers(hi) \
                and problem.boxes_normal(C_prev):
            if epsilon is None:
                # The end of the block is a row of the path: solving it now
                # costs no extra solve, so its time is that row's solve time.
                end = min(t - 1 + lookahead, len(grid) - 1)
                if end > t:
                    start = _clock()
                    result, put_back, end_drift = _solve_upper(
                        problem, screening, alpha, grad, C_prev, float(grid[end]),
                        options, drift)
                    ahead[end] = (result, put_back, _clock() - start, end_drift)
            else:
                # The epsilon grid's values are not known in advance: the
                # optimum at C_max is an extra solve, and the rule's cost.
                start = _clock()
                _solve_upper(problem, screening, alpha, grad, C_prev, C_max, options,
                             drift)
                rule_seconds += _clock() - start
        if t in ahead:
            result, put_back, solve_seconds, drift = ahead.pop(t)
        else:
            fixed = None
            solve_start = _clock()
            # the reference's boxes underflowed (``boxes_normal``): no rule
            # applies at this step; solving it whole is safe
            screen_now = (alpha is not None and screening is not None
                          and problem.boxes_normal(C_prev))
            masks = None
            if screen_now:
                # rule_seconds: the rule (bounds and sets, O(n) given Q alpha);
                # the warm start and moving the proved variables to their
                # bounds in it (kernel columns of those that move) are solver
                # work, timed with the solve.
                masks = screening(alpha, grad, hi_prev, hi, gap)
                rule_end = _clock()
                rule_seconds += rule_end - solve_start
                solve_start = rule_end
            warm_from = None if cold_only else alpha
            alpha0, grad0, drift = _path_start(problem, warm_from, grad, C_prev, C, hi, before,
                                               drift)
            # masks None: the rule proved nothing, and the solve is the
            # unscreened one (no variable fixed, nothing to check after it)
            if masks is not None:
                alpha0, grad0, fixed, counts = apply_screen(problem, alpha0, grad0, hi, *masks,
                                                            counts=True)
                if fixed is not None:
                    n_screened_zero, n_screened_bound = counts
            result, put_back = solve_reduced(problem.Q, p, lo, hi, alpha0, y=y, fixed=fixed,
                                             grad0=grad0,
                                             **_solve_options(options, warm_from, C_prev, C))
            solve_seconds = _clock() - solve_start
        if epsilon is not None:
            start = _clock()
            result, C_next = _epsilon_next(problem, result, C, hi, epsilon, options)
            solve_seconds += _clock() - start
        if result.status != "optimal":
            warnings.warn(f"{where}C={C:g}: {stopped_short(result.status, result.max_iter)}",
                          ConvergenceWarning, stacklevel=3)
        before = (alpha, C_prev) if alpha is not None else None
        alpha, grad, C_prev, hi_prev = result.alpha, result.grad, C, hi
        gap = problem.gap(alpha, grad, hi)
        # a sample of weight 0 (box [0, 0]) is at 0, not at a bound: counted
        # there, it kept the path from seeing a hard margin, and the epsilon
        # path ran on to C_max.  One whose box underflowed at this C is.
        n_bound = int(np.count_nonzero((alpha >= hi) & problem.weighted))
        n_sv = int(np.count_nonzero(alpha > 0))
        rows.append(dict(
            C=C, objective=result.objective, duality_gap=gap.gap,
            intercept=(-result.rho if y is not None else 0.0),
            n_sv=n_sv, n_zero=alpha.size - n_sv,        # (alpha >= 0: a box QP's finite point)
            n_bound=n_bound, screened_zero=n_screened_zero,
            screened_bound=n_screened_bound, put_back=put_back, n_iter=result.n_iter,
            rule_seconds=rule_seconds, solve_seconds=solve_seconds, status=result.status))
        if alphas is not None:
            alphas.append(alpha)
        if on_solution is not None:
            on_solution(t, C, alpha, grad)
        # (a solve stopped at max_iter proves nothing: each C gets its own)
        hard_margin = result.status == "optimal" and n_bound == 0 and not cold_only
        t += 1
        if progress:
            progress(t, C)
    return rows, alphas


def _epsilon_next(problem, result, C, hi, epsilon, options):
    """The epsilon-path's next C from the optimum ``result`` at C, and that
    optimum, solved again to a tighter tolerance while ``epsilon_step``
    certifies no step from it (a tol-level solution's relative gap can
    exceed epsilon: at tol 1e-3 and epsilon 1e-3, 17 of 242 steps on
    heart_scale, RBF).  Below EPSILON_TOL_MIN, a warning and a step of
    C sqrt(epsilon), which is not certified."""
    tol, n_iter = options["tol"], result.n_iter
    while True:
        C_next = epsilon_step(C, result.alpha, result.grad, problem.p, problem.lo, hi,
                              problem.y, epsilon, problem.Q)
        if C_next is not None or tol <= EPSILON_TOL_MIN or result.status != "optimal":
            break
        tol = max(tol * 1e-2, EPSILON_TOL_MIN)
        result, _ = solve_reduced(problem.Q, problem.p, problem.lo, hi, result.alpha,
                                  y=problem.y, grad0=result.grad, **dict(options, tol=tol))
        n_iter += result.n_iter
        result.n_iter = n_iter
    if C_next is None:
        why = (f"the solve stopped at {result.status} before it was epsilon-accurate"
               if result.status != "optimal" else
               f"the solution is not epsilon-accurate even at tol={tol:g}")
        warnings.warn(f"C={C:g}: {why} (duality gap above epsilon={epsilon:g} times the "
                      "dual value), so the next step of the epsilon-path is not certified",
                      ConvergenceWarning, stacklevel=4)
        C_next = C * (1 + np.sqrt(epsilon))
    return result, C_next


def _cold(alpha, C_prev, C):
    """Whether the solve at C starts from 0: first on the path, or after a
    step beyond COLD_START_SCALE."""
    return alpha is None or C > COLD_START_SCALE * C_prev


def _solve_options(options, alpha, C_prev, C):
    """The solver's options at C: LIBSVM's first shrinking round from 0, an
    earlier one (WARM_FIRST_SHRINK) from a warm start."""
    return options if _cold(alpha, C_prev, C) else dict(options,
                                                         first_shrink=WARM_FIRST_SHRINK)


def _path_start(problem, alpha, grad, C_prev, C, hi, before, drift):
    """The warm start at C from the previous optimum (alpha at C_prev;
    None: cold, as after a step beyond COLD_START_SCALE), extrapolated with
    the one ``before`` it (``extrapolated_start``) when Q's columns are all
    cached: the columns of the free support vectors then cost no kernel
    evaluations after their first use.  Without the cache, measured on
    a9a, ijcnn1 and mushrooms (10k rows), computing them took more time
    than the iterations they saved.  Returns (alpha0, grad0, drift of
    grad0: ``warm_start``)."""
    if _cold(alpha, C_prev, C):
        return np.zeros(problem.n), np.array(problem.p), 1.0
    scale = C / C_prev
    alpha0, grad0, drift = warm_start(alpha, grad, problem.p, scale, hi, problem.Q, drift)
    if before is None or not problem.q_fits_cache or scale > GRADIENT_REFRESH_SCALE:
        return alpha0, grad0, drift
    alpha_before, C_before = before
    return extrapolated_start(alpha0, grad0, alpha, alpha_before,
                              (C - C_prev) / (C_prev - C_before), problem, hi) + (drift,)


def _solve_upper(problem, screening, alpha, grad, C_prev, C_upper, options, drift):
    """The optimum at C_upper, warm-started from the one at C_prev, handed
    to the domes' step as its larger reference (``_DomeStep.set_upper``).
    Returns (result, put_back, drift of result.grad) of the solve."""
    hi_upper = problem.hi_unit * C_upper
    alpha0, grad0, drift = _path_start(problem, alpha, grad, C_prev, C_upper, hi_upper, None,
                                       drift)
    result, put_back = solve_reduced(problem.Q, problem.p, problem.lo, hi_upper, alpha0,
                                     y=problem.y, grad0=grad0,
                                     **_solve_options(options, alpha, C_prev, C_upper))
    screening.set_upper(result.alpha, result.grad, hi_upper)
    return result, put_back, drift


def apply_screen(problem, alpha0, grad0, hi, zero, bound, counts=False):
    """Set the screened entries of the warm start to their bounds, restore
    the equality, and update the known gradient by the changed columns.

    Returns (alpha0, grad0, fixed); fixed is None when the screened values
    leave no feasible point (an unsafe rule), and nothing is fixed then.
    With ``counts``, also (|R'|, |L'|).
    """
    fixed = np.empty(alpha0.shape[0], dtype=bool)
    n_moved, n_zero, n_bound = _rules.fix_screened(alpha0, problem.lo, hi, zero.view(np.uint8),
                                                   bound.view(np.uint8), fixed.view(np.uint8))
    out = _apply_screen(problem, alpha0, grad0, hi, zero, bound, fixed, n_moved)
    return out + ((n_zero, n_bound),) if counts else out


def _apply_screen(problem, alpha0, grad0, hi, zero, bound, fixed, n_moved):
    if n_moved == 0:
        # The usual case along a path: the scaled reference already sits at
        # the bounds the rule proved, so y'alpha0 and grad0 stay as they are.
        return alpha0, grad0, fixed
    target = alpha0.copy()
    target[zero] = problem.lo[zero]
    target[bound] = hi[bound]
    if problem.y is not None:
        repaired = repair_equality(target, problem.y, problem.lo, hi, ~fixed,
                                   float(problem.y @ alpha0))
        if repaired is None:
            return alpha0, grad0, None
        target = repaired
    changed = np.flatnonzero(target != alpha0)
    grad0 = problem.Q.add_columns(changed, target[changed] - alpha0[changed], grad0.copy())
    return target, grad0, fixed


# ------------------------------------------------------------- public API
def stratified_folds(y, n_folds, seed=0):
    """Fold number of each sample, each class spread evenly over the folds,
    and the folds' sizes within 1 of each other: each class continues
    where the one before it stopped.  (Each starting at fold 0, the
    classes' remainders all fell on the first folds: 113 samples against
    88 in 10 folds of letter.scale's first 1000 rows, 26 classes.)"""
    rng = np.random.default_rng(seed)
    fold = np.empty(y.shape[0], dtype=np.intp)
    start = 0
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        fold[members] = (start + np.arange(members.size)) % n_folds
        start += members.size
    return fold


def cv_splits(cv, labels, random_state=0, weight=None, held_weight=None):
    """The (train, held-out) boolean masks of ``train_path``'s ``cv``: k
    stratified folds for an integer k >= 2, or the given (train, test)
    index pairs (e.g. a scikit-learn splitter's ``split``), each index at
    most once (a mask cannot repeat a sample: give repeats as weights).
    Each training part must hold every class of ``labels`` with a positive
    ``weight`` (the box units; all positive if None), each held-out part a
    sample, of positive total ``held_weight`` if given (the accuracy's
    weights)."""
    n = labels.shape[0]
    classes, counts = np.unique(labels, return_counts=True)
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be an integer >= 2, got {cv!r}")
        if cv > counts.min():
            raise ValueError(f"cv={cv} is larger than the smallest class "
                             f"({counts.min()} samples)")
        folds = stratified_folds(labels, cv, random_state)
        splits = [(folds != k, folds == k) for k in range(cv)]
    elif callable(getattr(cv, "split", None)) and not hasattr(cv, "__iter__"):
        # a scikit-learn splitter (KFold(3), StratifiedKFold, ...), as
        # GridSearchCV takes it: its split of these labels (X's rows count
        # only; one that needs groups says so itself)
        splits = _index_splits(cv.split(np.zeros((n, 1)), labels), n)
    else:
        splits = _index_splits(cv, n)
    weighs = np.ones(n, dtype=bool) if weight is None else weight > 0
    for k, (train, held) in enumerate(splits):
        in_training = np.unique(labels[train & weighs]).size
        if in_training < classes.size:
            raise ValueError(f"cv split {k}: its training part holds {in_training} of the "
                             f"{classes.size} classes with a positive weight")
        if held_weight is not None and not held_weight[held].sum() > 0:
            raise ValueError(f"cv split {k}: the sample weights of its test part sum to 0 "
                             "(its accuracy, weighted as GridSearchCV's, is undefined)")
    return splits


def _index_splits(cv, n):
    """``cv_splits`` of an iterable of (train, test) index arrays."""
    # a 0-d array has __iter__ but cannot be iterated: numpy's "iteration
    # over a 0-d array" named no parameter
    if isinstance(cv, (str, bytes, bool, float)) or not hasattr(cv, "__iter__") \
            or (isinstance(cv, np.ndarray) and cv.ndim == 0):
        raise ValueError("cv must be an integer >= 2, a splitter with a split method or an "
                         f"iterable of (train, test) index arrays, got {cv!r}")
    splits = []
    for k, pair in enumerate(cv):
        try:
            train_index, held_index = pair
        except (TypeError, ValueError):
            raise ValueError(f"cv split {k} is not a (train, test) pair") from None
        masks = []
        for part, index in (("train", train_index), ("test", held_index)):
            index = np.asarray(index)
            if index.ndim != 1 or index.size == 0 or index.dtype.kind not in "iu":
                raise ValueError(f"cv split {k}: its {part} part must be a non-empty 1-d "
                                 "array of sample indices")
            if index.min() < -n or index.max() >= n:
                raise ValueError(f"cv split {k}: its {part} part has an index out of range "
                                 f"for {n} samples")
            mask = np.zeros(n, dtype=bool)
            mask[index] = True
            if np.count_nonzero(mask) < index.size:
                raise ValueError(f"cv split {k}: its {part} part repeats a sample (bootstrap "
                                 "splits are not supported: give each sample once, and "
                                 "repeats as sample_weight)")
            masks.append(mask)
        splits.append(tuple(masks))
    if not splits:
        raise ValueError("cv is an empty iterable of splits")
    return splits


def centre_sample(n):
    """Samples whose feature-space mean centres the intercept count
    (bias_screening.md §2.4a: any subsample is equally safe).  It costs
    n x m kernel values once per path, so m grows with n: n/20, in [100, 1000]."""
    return int(min(1000, max(100, n // 20)))


# A warm-started solve along the path shrinks first after this many
# iterations, not LIBSVM's min(n, 1000) (the solver keeps 1000 when half the
# variables violate at the start: ``_SMO.count_violators``).  The warm start
# is close to the optimum, so most variables can be set aside at once, and
# the first 1000 iterations over all n were most of a solve's selection
# work: on 10k-row ijcnn1, RBF 1/d, the solves at C >= 30 selected over 10M
# elements each and took 35-55 ms; now 2-2.6M and 10-25 ms.  Path CPU time, best
# of 3, 200 against 1000 (docs/screening.md sec. 13): geometric mean 0.87
# over 14 rows; ijcnn1 10k 0.67-0.87, a9a 10k 0.81/0.95, splice and
# svmguide1 linear 0.67/0.73; splice and svmguide1 RBF 1.14/1.07 (solves of
# 200-1000 iterations now rebuild the gradient of what they shrank).  500 was
# slower than 200 on 3 of 4 rows.  The ramp loss's warm CCCP steps use it too
# (``ramp.cccp``).
WARM_FIRST_SHRINK = 200

# The share of a solve's kernel evaluations that BT2/IT may spend on Q s
# when Q does not fit in the cache (``shat_budget``).
SHAT_KERNEL_SHARE = 0.02


def shat_budget(n, solve_kernel_evals=None):
    """Changes of BT2/IT's s-hat allowed in a path step (kernel form).

    Each change costs one column of Q for Q s, and the argmax s can move by
    thousands between two C (measured on mushrooms: up to 2647 columns a
    step, a third of the solve time).  Any s is safe (paper 000, Thm 7);
    only the rule's strength depends on it.

    * ``solve_kernel_evals`` None (Q fits in the cache, so a column costs n
      additions once cached): max(16, n/400).
    * Otherwise the changed samples' columns are mostly not cached (they
      cross the margin, where shrinking has set them aside), so a column
      costs n kernel evaluations, and the budget is SHAT_KERNEL_SHARE of the
      previous solve's (at least 1).  On 10k-row ijcnn1, RBF, the fixed 25
      columns a step had cost 8% of the path's kernel evaluations and 8% of
      its solve time, and IT screened no more than with s-hat fixed at 0.
    """
    if solve_kernel_evals is None:
        return int(max(16, n // 400))
    return int(max(1, SHAT_KERNEL_SHARE * solve_kernel_evals / max(n, 1)))


class _DomeStep:
    """SSNSV (paper 002) or ESSNSV (paper 003, Thm 19) along the path.

    The domes need two optima, at C_a <= C <= C_b.  As in paper 002's
    Algorithm 2 (notes/seed_002_ssnsv.md sec. 4, safe reconstruction), the
    path works in blocks of ``lookahead`` values of C: ``run_path`` solves the
    block's last C first (that optimum is the path's own solution there, so
    no solve is added) and hands it over with ``set_upper``; every C inside
    the block is screened with C_a = the previous C and C_b = the block's
    end.  On an epsilon grid, whose values are not known in advance, the
    larger optimum is the one at C_max, an extra solve.  Both optima are the
    solver's, to its tolerance: their duality gaps widen the dome
    (``_rules.dome_shape``, docs/screening.md sec. 7).
    """

    # Paper 002 uses blocks of M = 5.  The block's end is warm-started from M
    # values back, which costs iterations: on eight small rows of
    # bench_path.py (--clock cpu), screened / unscreened time was 0.85 at
    # M = 5, 0.93 at M = 3 and 0.95 at M = 2 with the exact-trusting domes;
    # 1.13 at M = 2 with the gap-inflated ones (docs/screening.md sec. 7).
    lookahead = 2

    def __init__(self, rule, data, problem):
        self.n = data.n
        self.step = data.dome_path_step(rule)     # one typed call a step
        self.problem = problem
        self.hi_upper = None

    def set_upper(self, alpha, grad, hi):
        self.step.set_upper(alpha, grad, hi, self.problem.gap(alpha, grad, hi).gap)
        self.hi_upper = hi

    def covers(self, hi):
        """Whether the larger reference is at a box >= hi."""
        return self.hi_upper is not None and bool(np.all(hi <= self.hi_upper))

    def __call__(self, alpha_ref, grad_ref, hi_ref, hi, gap_ref=None):
        """(R', L') masks at box hi, or None if the dome proves nothing
        (``make_screening``)."""
        if not self.covers(hi):
            return None
        if gap_ref is None:
            gap_ref = self.problem.gap(alpha_ref, grad_ref, hi_ref)
        masks = self.step(alpha_ref, grad_ref, hi_ref, hi, gap_ref.gap)
        return masks if self.step.n_screened else None


def screening_applies(problem, rule):
    """False, with a warning, when the kernel need not be positive
    semi-definite: sigmoid, and polynomial with coef0 < 0.  The rules bound
    w* in the kernel's feature space (a concave dual); on such a kernel they
    would screen against a non-convex problem, and the screened solve could
    end at another stationary point.  Likewise a precomputed kernel that is
    not symmetric (``_asymmetry`` above SYMMETRY_RTOL).  A symmetric one is
    taken to be PSD (``train_path``'s screening parameter says so; testing
    it costs an eigendecomposition): on an indefinite one the KKT check puts
    back what a rule got wrong, but the answer can differ from the
    unscreened one."""
    # On K != K' SMO reads Q's column i as row i, the rules bound w* of a
    # Gram matrix: each works on another problem, and the screened solves
    # ended at other points (put back > 0)
    if problem.not_psd is not None:
        warnings.warn(f"screening={rule!r} needs {problem.not_psd}: solving without screening",
                      UserWarning, stacklevel=4)
        return False
    return True


# Above this max |K_ij - K_ji| / max |K| a precomputed kernel is not taken
# for a symmetric one: far above the round-off of a Gram matrix computed in
# any order (a few 1e-16), far below any asymmetry of substance.
SYMMETRY_RTOL = 1e-10


def _asymmetry(K, block=256):
    """max |K - K'| / max |K| of a square dense K (0 for K = 0), a block of
    rows at a time (K - K' whole would double the memory of a large K)."""
    n = K.shape[0]
    scale = float(np.max(np.abs(K))) if n else 0.0
    if scale == 0.0:
        return 0.0
    worst = 0.0
    for start in range(0, n, block):
        rows = K[start:start + block]
        worst = max(worst, float(np.max(np.abs(rows - K[:, start:start + block].T))))
    return worst / scale


def make_screening(rule, problem, fit_intercept):
    """The screening step of the path for ``rule`` (None: no screening):
    ``step(alpha_ref, grad_ref, hi_ref, hi, gap_ref=None) -> (zero, bound)``
    masks, or None when the rule proves nothing (the path then solves the
    step unscreened: fixing and checking no variable costs a small pair of
    a one-vs-one path as much as the rule); ``gap_ref`` is the reference's
    ``duality_gap`` if known.  The masks are the step's scratch, which its
    next call overwrites."""
    if rule is None:
        return None
    if rule not in SCREENING_RULES:
        raise ValueError(f"screening must be one of {SCREENING_RULES} or None, got {rule!r}")
    if not problem.any_weighted:
        # every box is [0, 0] (a one-vs-one pair whose samples all weigh 0):
        # nothing to prove, and the rules' box ratio C / C_ref is undefined
        return None
    if not screening_applies(problem, rule):
        return None
    from svmscreen.screening import ScreeningData
    data = ScreeningData(problem.X, problem.signs, fit_intercept=fit_intercept,
                         qmatrix=problem.Q, centre_sample=centre_sample(problem.n),
                         **problem.kernel_params)
    if rule in ("ssnsv", "essnsv"):
        return _DomeStep(rule, data, problem)
    if rule == "dvi":
        # One typed call a step (the rule of screen(rule="dvi"), without its
        # per-call Python work: on heart_scale that work was half the step).
        step = data.dvi_path_step()
    else:
        # BT2 / IT: the typed step also carries s-hat and Q s along the path.
        step = data.two_ball_path_step(rule, budget=shat_budget(problem.n))
    # Q's kernel evaluations when the last rule call ended (BT2/IT's budget)
    budget_by_solve = rule != "dvi" and not problem.q_fits_cache
    evals_after_rule = [problem.Q.kernel_evals]

    def ball_step(alpha_ref, grad_ref, hi_ref, hi, gap_ref=None):
        if gap_ref is None:
            gap_ref = problem.gap(alpha_ref, grad_ref, hi_ref)
        if rule == "dvi":
            masks = step(alpha_ref, grad_ref, hi_ref, hi, gap_ref.gap)
        else:
            if budget_by_solve:
                step.set_budget(shat_budget(problem.n,
                                            problem.Q.kernel_evals - evals_after_rule[0]))
            masks = step(alpha_ref, grad_ref, hi_ref, hi, gap_ref.gap,
                         gap_ref.b if fit_intercept else 0.0)
            evals_after_rule[0] = problem.Q.kernel_evals
        return masks if step.n_screened else None
    return ball_step


def _progress_printer(verbose, total, label):
    """``(progress(t, C), close)`` for ``run_path``: a tqdm bar if tqdm is
    installed, else one line on stderr rewritten at each C; ``total`` None
    when the number of C is not known in advance (the epsilon grid).
    ``(None, no-op)`` unless ``verbose``."""
    if not verbose:
        return None, lambda: None
    try:
        from tqdm.auto import tqdm
        bar = tqdm(total=total, desc=label, unit="C")
        return (lambda t, C: (bar.update(1), bar.set_postfix(C=f"{C:.3g}"))), bar.close
    except ImportError:
        import sys
        of = "" if total is None else f"/{total}"
        shown = [0]

        def write(text):
            # padded: "\r" only moves the cursor, and a shorter line (C = 1.1
            # after C = 0.869) left the longer one's tail: "(C = 1.1)9)"
            print(f"\r{text:<{shown[0]}}", end="", file=sys.stderr, flush=True)
            shown[0] = max(shown[0], len(text))

        def show(t, C):
            write(f"{label}: {t}{of} (C = {C:.3g})")
        # at once: the first C of a large problem can take a while
        write(f"{label}: 0{of}")
        return show, lambda: print(file=sys.stderr)


class RowSubsets:
    """One X for many paths on subsets of its rows (the pairs of a
    one-vs-one path, CV folds): ``problem(rows, ...)`` is the ``_Problem``
    of X's ``rows``, its kernel on ``compute_layout`` of them.  A CSR X that
    compute_layout densifies is densified once here, and a subset as dense
    (the same test on its own rows) takes its rows from that copy: building
    each subset's CSR matrix (scipy's constructor alone took 9 us) and then
    its dense copy cost 40 us of an 80-row pair's 0.6 ms (letter, 26
    classes).  The linear kernel's rules read the CSR rows themselves
    (``ScreeningData``), and a precomputed kernel's subset is its square
    block (``train_part``)."""

    def __init__(self, X, kernel):
        self.X = X
        self.precomputed = kernel == "precomputed"
        self.dense = None
        if sp.issparse(X) and kernel != "linear":
            layout = compute_layout(X)
            if layout is not X:
                self.dense = layout
                self.row_nnz = np.diff(X.indptr)

    def train_part(self, rows):
        """X on ``rows`` (ascending indices): X[rows], or for a precomputed
        kernel the square block K[rows, rows]."""
        if self.precomputed:
            return self.X[np.ix_(rows, rows)]
        return take_rows(self.X, rows)

    def problem(self, rows, signs, hi_unit, params):
        """The ``_Problem`` of ``rows`` (``signs`` +-1 and ``hi_unit`` of
        those rows)."""
        if self.dense is not None and dense_enough(int(self.row_nnz[rows].sum()), rows.size,
                                                   self.X.shape[1]):
            # compute_layout of X[rows]; the kernels other than linear read
            # no other X
            return _Problem(self.dense[rows], signs, hi_unit, **params)
        return _Problem(self.train_part(rows), signs, hi_unit, **params)


def subset_path(subsets, rows, signs, hi_unit, grid, params, path_options, label=None,
                show_progress=False):
    """``run_path`` over ``grid`` on the ``rows`` of ``subsets.X``
    (``RowSubsets``; ascending indices, ``signs`` +-1 and ``hi_unit`` of
    those rows), keeping every solution: (path rows, alphas).
    ``path_options``: run_path's screening rule name, tol, shrinking,
    max_iter.  ``label`` names the path in its warnings and, with
    ``show_progress``, its progress bar."""
    problem = subsets.problem(rows, signs, hi_unit, params)
    screening = make_screening(path_options["screening"], problem, params["fit_intercept"])
    progress, close = _progress_printer(show_progress, len(grid), label)
    try:
        return run_path(problem, grid, **dict(path_options, screening=screening, keep="all",
                                              progress=progress, label=label))
    finally:
        close()


def path_coefficients(subsets, rows, signs, hi_unit, grid, params, path_options,
                      label=None, show_progress=False):
    """The path over ``grid`` on the ``rows`` of ``subsets.X``
    (``subset_path``) as a
    decision function per C: ``(support, coef, intercepts)`` with
    f_t(x) = sum_k coef[k, t] K(x, X[support[k]]) + intercepts[t].
    ``support`` indexes all rows of X (for a precomputed kernel, its
    columns): the samples that are support vectors at some C, so that a
    kernel value K(x, sv) serves every C."""
    path_rows, alphas = subset_path(subsets, rows, signs, hi_unit, grid, params, path_options,
                                    label, show_progress)
    alphas = np.array(alphas)                               # (n_C, n_rows)
    union = np.flatnonzero(np.any(alphas > 0, axis=0))
    coef = (signs[union] * alphas[:, union]).T              # (n_union, n_C)
    return rows[union], coef, np.array([row["intercept"] for row in path_rows])


def kernel_blocks(X, rows, columns, params):
    """``cross_kernel`` blocks (start, stop, K(X[rows][start:stop], X[columns]))
    for index arrays ``rows`` and ``columns`` of X (a precomputed X: its
    entries [rows][:, columns])."""
    from svmscreen._kernels import cross_kernel
    if params["kernel"] == "precomputed":
        return cross_kernel(X[rows], columns, "precomputed", 0.0, 0.0, 0)
    return cross_kernel(X[rows], X[columns], params["kernel"], params["gamma"],
                        params["coef0"], params["degree"])


def fold_decisions(X, signs, hi_unit, train, held, grid, params, path_options,
                   label=None, show_progress=False):
    """Decision values, shape (held samples, len(grid)), of the path over
    ``grid`` on the ``train`` rows (``path_coefficients``) at the ``held``
    rows (boolean mask): each kernel value K(held, sv) once for the whole
    grid."""
    rows = np.flatnonzero(train)
    support, coef, intercepts = path_coefficients(RowSubsets(X, params["kernel"]), rows,
                                                  signs[rows], hi_unit[rows], grid, params,
                                                  path_options, label, show_progress)
    held_rows = np.flatnonzero(held)
    f = np.tile(intercepts, (held_rows.size, 1))
    if support.size:
        for start, stop, K in kernel_blocks(X, held_rows, support, params):
            f[start:stop] += K @ coef
    return f


def fold_params(params, gamma_spec, X, train):
    """The kernel parameters of a CV fold's paths: gamma="scale" is the
    variance of the fold's training rows, as GridSearchCV(SVC(gamma="scale"))
    computes it (the whole X's would let the held-out rows into the
    model); other gammas do not depend on the rows."""
    if not (isinstance(gamma_spec, str) and gamma_spec == "scale") \
            or params["kernel"] in ("linear", "precomputed"):
        return params
    return dict(params, gamma=resolve_gamma("scale", X[train], params["kernel"]))


def fold_label(k, n_folds, params):
    """The name of fold k's paths in their progress bars and warnings, with
    the fold's gamma where the kernel has one (a list of gammas runs a path
    per value, each with these folds)."""
    if params["kernel"] in ("linear", "precomputed"):
        return f"fold {k + 1}/{n_folds}"
    return f"gamma = {params['gamma']:.3g}, fold {k + 1}/{n_folds}"


def fold_tasks(function, X, labels, units, splits, grid, params, gamma_spec, path_options,
               show_progress, held_weight):
    """``_parallel``'s tasks of a cross-validation: ``function(X, labels,
    units[k], train, held, grid, fold params, path_options, fold label,
    show_progress, held_weight)`` for each fold k of ``splits``, with the
    fold's own kernel parameters (``fold_params``) and name
    (``fold_label``)."""
    tasks = []
    for k, (train, held) in enumerate(splits):
        fold = fold_params(params, gamma_spec, X, train)
        tasks.append((function, (X, labels, units[k], train, held, grid, fold, path_options,
                                 fold_label(k, len(splits), fold), show_progress,
                                 held_weight), {}))
    return tasks


def fold_bounds(y, classes, class_weight, sample_weight, hi_unit, splits):
    """The box units (C_i / C) of each CV fold's paths: with
    class_weight="balanced" the weights of the fold's training labels, as
    GridSearchCV(SVC(class_weight="balanced")) computes them (the whole y's
    would let the held-out labels into the model); else ``hi_unit``."""
    if not is_balanced(class_weight):
        return [hi_unit] * len(splits)
    return [class_bounds(y, classes, 1.0, class_weight, sample_weight, rows=train)
            for train, _ in splits]


def _fold_accuracy(X, signs, hi_unit, train, held, grid, params, path_options,
                   label=None, show_progress=False, held_weight=None):
    """Accuracy on the held-out part at each C of ``fold_decisions``,
    weighted by ``held_weight`` if given (``held_accuracy``)."""
    f = fold_decisions(X, signs, hi_unit, train, held, grid, params, path_options,
                       label, show_progress)
    # f = 0 to the positive class, as BinaryModel.predict
    return held_accuracy(np.where(f >= 0, 1.0, -1.0) == signs[held][:, None], held,
                         held_weight)


def held_accuracy(correct, held, held_weight=None):
    """The accuracy at each C (column) of ``correct`` (held-out rows x C),
    weighted by the held rows' sample weights if given: as GridSearchCV
    scores a fit given sample_weight (scikit-learn 1.9 passes them to its
    scorer)."""
    return np.average(correct, axis=0,
                      weights=None if held_weight is None else held_weight[held])


def train_path(X, y, C=None, *, n_C=50, C_range=(1e-2, 1e3), grid="log", epsilon=1e-3,
               kernel="rbf", gamma=None, coef0=0.0, degree=3, fit_intercept=True,
               class_weight=None, sample_weight=None, screening="dvi", shrinking=True,
               tol=1e-3, cache_size=100.0, max_iter=None, cv=None, n_jobs=None,
               keep="all", random_state=0, verbose=False):
    """Solve the SVM for a whole increasing grid of C, with warm starts and
    safe screening; optionally cross-validate every C.

    Parameters
    ----------
    X, y : training data and labels (as ``fit_binary``).  More than two
        classes are classified one-vs-one, as LIBSVM does: a path per pair
        of classes, combined in a ``OneVsOnePath`` (``svmscreen.one_vs_one``).
    C : array-like or None
        An explicit, strictly increasing grid.  If None, ``grid`` decides.
    n_C : int, default=50
        Size of the log grid.
    C_range : (float, float), default=(1e-2, 1e3)
        Ends of the log grid, or start and cap of the epsilon-path.
    grid : {"log", "epsilon"}
        "epsilon": the epsilon-approximation path of paper 000 App. D, whose
        steps guarantee every C in between a relative dual error <= epsilon.
        A solution whose own duality gap is too large to certify a step is
        solved again at a tighter tolerance first.  Two classes and a kernel
        that is positive semi-definite (see ``screening``) only.
    epsilon : float in [1e-8, 1), default=1e-3
        The epsilon-path's relative dual error.
    kernel, gamma, coef0, degree, fit_intercept, class_weight, sample_weight
        As ``fit_binary``.  A list of gamma values runs one path per value and
        returns a list of PathResult.  class_weight="balanced" weighs each CV
        fold by its own training labels, as GridSearchCV does.
    screening : {"dvi", "it", "bt2", "essnsv", "ssnsv"} or None, default="dvi"
        The safe rule applied before each solve (None: none).  Every screened
        solve is checked; ``put_back`` counts the samples a rule got wrong.
        "dvi" is the default because it costs O(n) a step; "it" screens more
        but updates Q s-hat by kernel columns each step, which measured
        slower overall (benchmarks/bench_path.py).  The domes ("essnsv",
        "ssnsv") need an optimum at a larger C: the path solves every other C
        first and screens the C in between (paper 002, Algorithm 2).  Every
        rule widens its region by its references' duality gaps, so it is
        safe at the solver's tolerance (docs/screening.md secs. 3-7).  The
        domes lose the most to that widening, and on small problems their
        look-ahead solves cost more than they save (sec. 7).  The rules
        need a positive semi-definite kernel: the path turns them off for
        sigmoid, for poly with coef0 < 0 and for a precomputed kernel that
        is not symmetric, and takes a symmetric precomputed kernel to be
        PSD.  On those three the dual is not convex: each C is solved from
        0, as a fit at that C alone, not warm-started (which ended at other
        stationary points).
    shrinking, tol, cache_size, max_iter : solver options, as LIBSVM.
    cv : int, splitter, iterable of (train, test) index arrays, or None
        Cross-validation along the path: k stratified folds, a scikit-learn
        splitter's ``split(X, y)`` (``KFold(5, shuffle=True)``), or the
        given splits (e.g. ``GroupKFold().split(X, y, groups)``), each
        sample at most once per part.  Each training part must give
        every class a positive weight.  With sample_weight, a fold's accuracy
        is weighted by its held-out samples' weights, as GridSearchCV scores
        it.
    n_jobs : int or None
        Folds in parallel through joblib (needs joblib), or with several
        gamma values, the gammas' paths (each its folds in turn); None or 1
        runs them in this process.
    keep : {"all", "summary"}
        "summary" keeps no solution vectors, only the per-C statistics.
    random_state : int
        Seed of the fold assignment.
    verbose : bool
        Show progress on stderr: a bar per path (tqdm if installed), the
        folds' paths included; folds or gamma values run in parallel report
        through joblib's messages instead.

    Returns
    -------
    PathResult (OneVsOnePath for more than two classes), or a list of them
    for a list of gamma values.
    """
    verbose = check_flag(verbose, "verbose")
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(f"random_state must be an integer (the folds' seed), got "
                        f"{random_state!r}")
    if random_state < 0:
        raise ValueError(f"random_state must be >= 0 (the folds' seed), got {random_state!r}")
    check_n_jobs(n_jobs)
    grid = check_choice(grid, "grid", ("log", "epsilon"))
    keep = check_choice(keep, "keep", ("all", "summary"))
    screening = check_choice(screening, "screening", SCREENING_RULES, allow_none=True)
    # checked whichever grid uses them, as the kernel's parameters are
    # whichever kernel: a bad value given and ignored hid a typo
    check_C_range(C_range)
    check_n_C(n_C)
    check_epsilon(epsilon)
    if grid == "epsilon" and C is not None:
        raise ValueError("grid='epsilon' chooses its own values of C: give C_range, not C")
    if isinstance(gamma, (list, tuple)) or np.ndim(gamma) > 0:
        gammas = list(gamma)
        if not gammas:
            raise ValueError("gamma is an empty list")
        if any(np.ndim(g) > 0 for g in gammas):
            raise TypeError(f"gamma must be one value or a flat list of values, got {gamma!r}")
        # every gamma's path takes the same splits (a shuffling splitter
        # without a seed splits anew at each call)
        if callable(getattr(cv, "split", None)) and not hasattr(cv, "__iter__"):
            labels = check_labels(y, np.shape(y)[0] if np.ndim(y) else 0)
            cv = list(cv.split(np.zeros((labels.size, 1)), labels))
        elif hasattr(cv, "__iter__") and not isinstance(cv, (str, bytes)) \
                and not (isinstance(cv, np.ndarray) and cv.ndim == 0):
            cv = list(cv)
        options = dict(C=C, n_C=n_C, C_range=C_range, grid=grid, epsilon=epsilon,
                       kernel=kernel, coef0=coef0, degree=degree,
                       fit_intercept=fit_intercept, class_weight=class_weight,
                       sample_weight=sample_weight, screening=screening,
                       shrinking=shrinking, tol=tol, cache_size=cache_size,
                       max_iter=max_iter, cv=cv, keep=keep, random_state=random_state)
        if len(gammas) == 1:
            # one path: n_jobs runs its folds (SVCPathCV's usual case)
            return [train_path(X, y, **options, gamma=gammas[0], n_jobs=n_jobs,
                               verbose=verbose)]
        return _parallel(n_jobs, [(train_path, (X, y),
                                   dict(options, gamma=g, n_jobs=None,
                                        verbose=verbose and _sequential(n_jobs)))
                                  for g in gammas], verbose=verbose)

    _, kernel, degree, coef0, tol, cache_size, max_iter = check_parameters(
        C=1.0, kernel=kernel, degree=degree, coef0=coef0, tol=tol, cache_size=cache_size,
        max_iter=max_iter)
    fit_intercept = check_flag(fit_intercept, "fit_intercept")
    shrinking = check_flag(shrinking, "shrinking")
    X = check_precomputed(X) if kernel == "precomputed" else check_X(X)
    y = check_labels(y, X.shape[0])
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes, got 1: {classes.tolist()}")
    gamma_spec, gamma = gamma, resolve_gamma(gamma, X, kernel)
    hi_unit = class_bounds(y, classes, 1.0, class_weight, sample_weight)
    epsilon_path = False
    if C is not None:
        C_grid = check_C_grid(C)
    elif grid == "log":
        C_grid = log_grid(C_range, n_C)
    else:
        C_grid = np.array([check_C_range(C_range)[0]])
        epsilon_path = True
    held_weight = None if sample_weight is None else check_sample_weight(sample_weight, y.size)
    splits = None if cv is None else cv_splits(cv, y, random_state, hi_unit, held_weight)
    fold_units = None if splits is None else fold_bounds(y, classes, class_weight,
                                                         sample_weight, hi_unit, splits)
    C_max = check_C_range(C_range)[1] if epsilon_path else C_grid[-1]
    for units in [hi_unit] + (fold_units or []):
        check_box_overflow(C_max, units.max())

    params = dict(kernel=kernel, gamma=gamma, coef0=coef0, degree=degree,
                  cache_size=cache_size, fit_intercept=fit_intercept)
    path_options = dict(screening=screening, tol=tol, shrinking=shrinking, max_iter=max_iter)
    if classes.size > 2:
        if epsilon_path:
            raise ValueError("grid='epsilon' needs two classes (each pair of classes would "
                             "step its own grid); give C or use grid='log'")
        from svmscreen.one_vs_one import train_path_one_vs_one
        return train_path_one_vs_one(X, y, classes, hi_unit, C_grid, params, path_options,
                                     splits, n_jobs=n_jobs, keep=keep, verbose=verbose,
                                     gamma_spec=gamma_spec, fold_units=fold_units,
                                     held_weight=held_weight)
    classes, signs = binary_signs(y)
    problem = _Problem(X, signs, hi_unit, **params)
    if epsilon_path and problem.not_psd is not None:
        # The steps are certified by weak duality (epsilon_step), which a dual
        # that is not concave lacks: on sigmoid the scaled solution was up to
        # 59 epsilon below a fit at C in between, with no warning.
        raise ValueError(f"grid='epsilon' needs {problem.not_psd} (its steps are certified "
                         "by weak duality); give C or use grid='log'")
    rule = make_screening(screening, problem, fit_intercept)
    total = len(C_grid) if not epsilon_path else 0
    label = "path" if kernel in ("linear", "precomputed") else f"path (gamma = {gamma:.3g})"
    progress, close = _progress_printer(verbose, total or None, label)
    try:
        rows, alphas = run_path(problem, C_grid, screening=rule, tol=tol, shrinking=shrinking,
                                max_iter=max_iter, keep=keep,
                                epsilon=epsilon if epsilon_path else None,
                                C_max=C_max, progress=progress)
    finally:
        close()
    result = PathResult(rows, alphas, params, X, signs, classes)
    result.gamma = gamma
    if splits is not None:
        show_folds = verbose and _sequential(n_jobs)
        tasks = fold_tasks(_fold_accuracy, X, signs, fold_units, splits, result.C, params,
                           gamma_spec, path_options, show_folds, held_weight)
        result.cv_accuracy = np.array(_parallel(n_jobs, tasks, verbose=verbose))
    return result


def _sequential(n_jobs):
    return n_jobs is None or n_jobs == 1


def _parallel(n_jobs, tasks, verbose=False):
    """Run (function, args, kwargs) tasks, through joblib when n_jobs != 1
    (with its progress messages on stderr if ``verbose``)."""
    if _sequential(n_jobs):
        return [function(*args, **kwargs) for function, args, kwargs in tasks]
    try:
        from joblib import Parallel, delayed
    except ImportError:
        raise ImportError("n_jobs needs joblib: pip install 'svmscreen[parallel]'") from None
    done = Parallel(n_jobs=n_jobs, verbose=10 if verbose else 0)(
        delayed(_with_warnings)(function, args, kwargs) for function, args, kwargs in tasks)
    for _, caught in done:
        for message, category in caught:
            warnings.warn(message, category, stacklevel=2)
    return [result for result, _ in done]


def _with_warnings(function, args, kwargs):
    """A task in a worker: its result and its warnings, as (message,
    category) pairs, for the caller to issue.  The worker printed them on
    its own stderr, past the caller's filters and showwarning (``svmscreen
    path``'s one line each), once per worker.

    Only in a process's main thread (loky's workers, or joblib running the
    tasks in the caller): ``catch_warnings`` swaps the process-wide filters,
    and tasks on threads (the threading back end, Dask's workers) would
    restore each other's, leaving the caller's warnings recorded into a
    finished task's list.  A thread's warnings reach the process's own
    handlers anyway."""
    if threading.current_thread() is not threading.main_thread():
        return function(*args, **kwargs), []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")     # the caller's filters decide
        result = function(*args, **kwargs)
    return result, [(str(w.message), w.category) for w in caught]
