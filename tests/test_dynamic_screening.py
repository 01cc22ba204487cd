"""Dynamic (gap-safe) screening at any feasible point, for the SVM and for
the CCCP steps of the ramp loss (p = -1 - Q mu, y'beta = y'mu): nothing is
ever screened onto the wrong side, and solves and CCCP runs with it equal
those without."""
import numpy as np
import pytest
from _reference import exact_box_qp
from conftest import examples, load_dataset
from hypothesis import given, settings
from hypothesis import strategies as st

import svmscreen
from svmscreen._kernels import Kernel
from svmscreen._solver import QMatrix
from svmscreen.path import repair_equality
from svmscreen.reduced import solve_reduced
from svmscreen.screening import ScreeningData, gap_rule_allowances, screen_dynamic


def problem(n, seed, kernel, gamma=0.5, flip=0.15):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, -1.0, 1.0)
    X = rng.normal(size=(n, 3)) + y[:, None]
    y[rng.random(n) < flip] *= -1
    if np.all(y == y[0]):
        y[0] = -y[0]
    K = Kernel(X, kernel, gamma, 0.0, 3).rows(np.arange(n))
    return X, y, K


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 100_000), kernel=st.sampled_from(["linear", "rbf"]),
       C=st.sampled_from([0.1, 1.0, 10.0]), outliers=st.floats(0.0, 0.4),
       progress=st.floats(0.0, 1.0), fit_intercept=st.booleans())
def test_no_wrong_screen_at_any_feasible_point(seed, kernel, C, outliers, progress,
                                                fit_intercept):
    n = 24
    X, y, K = problem(n, seed, kernel)
    rng = np.random.default_rng(seed + 1)
    Q = y[:, None] * y[None, :] * K
    mu = np.where(rng.random(n) < outliers, C, 0.0)
    if not fit_intercept:
        mu[:] = 0.0                       # the bias-free SVM: no CCCP shift
    p = -1.0 - Q @ mu
    hi = np.full(n, C)
    target = float(y @ mu)
    star = exact_box_qp(Q, p, np.zeros(n), hi, y=y if fit_intercept else None, delta=target)
    # a feasible point between a random box point and the optimum
    point = np.clip(rng.uniform(0, C, n), 0, C)
    if fit_intercept:
        point = repair_equality(point, y, np.zeros(n), hi, np.ones(n, bool), target)
    beta = (1 - progress) * point + progress * star
    beta = np.clip(beta, 0, C)
    if fit_intercept:
        beta = repair_equality(beta, y, np.zeros(n), hi, np.ones(n, bool), target)
    grad = Q @ beta + p
    data = ScreeningData(X, y, kernel=kernel, gamma=0.5, fit_intercept=fit_intercept)
    found = screen_dynamic(data, beta, grad, p, hi, target, coef=beta - mu)
    assert np.all(star[found.screened_zero] <= 1e-9 * C)
    assert np.all(star[found.screened_bound] >= C * (1 - 1e-9))


def test_hook_in_the_solver_keeps_the_optimum():
    from svmscreen._validation import check_X
    X, y = load_dataset("australian_scale")
    X = check_X(X)
    signs = np.where(y > 0, 1.0, -1.0)
    n = y.size
    for kernel, C in (("rbf", 1.0), ("linear", 0.5)):
        K = Kernel(X, kernel, 1 / 14, 0.0, 3)
        Q = QMatrix(K, signs, 100.0)
        data = ScreeningData(X, signs, kernel=kernel, gamma=1 / 14, qmatrix=Q)
        p, lo, hi = -np.ones(n), np.zeros(n), np.full(n, C)

        def hook(alpha, grad, movable):
            found = screen_dynamic(data, alpha, grad, p, hi)
            return found.screened_zero | found.screened_bound

        plain, _ = solve_reduced(Q, p, lo, hi, np.zeros(n), y=signs, tol=1e-8)
        screened, put_back = solve_reduced(Q, p, lo, hi, np.zeros(n), y=signs, tol=1e-8,
                                           screen_callback=hook, screen_every=n)
        assert put_back == 0 and screened.n_frozen > 0
        assert screened.objective == pytest.approx(plain.objective, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_cccp_with_screening_equals_without(seed):
    X, y, _ = problem(120, seed, "rbf", flip=0.2)
    for C in (0.1, 1.0, 10.0):
        plain = svmscreen.train_ramp(X, y, C=C, gamma=0.5, screening=None, tol=1e-10)
        safe = svmscreen.train_ramp(X, y, C=C, gamma=0.5, screening="safe", tol=1e-10)
        assert safe.n_outer == plain.n_outer
        for a, b in zip(safe.outlier_history, plain.outlier_history):
            np.testing.assert_array_equal(a, b)
        assert safe.objective[-1] == pytest.approx(plain.objective[-1], rel=1e-8)
        assert safe.put_back.sum() == 0


def test_cccp_screening_on_real_data():
    X, y = load_dataset("australian_scale")
    noisy = np.array(y)
    noisy[np.random.default_rng(0).choice(y.size, y.size // 5, replace=False)] *= -1
    plain = svmscreen.train_ramp(X, noisy, C=1.0, gamma=0.5, screening=None, tol=1e-8)
    safe = svmscreen.train_ramp(X, noisy, C=1.0, gamma=0.5, screening="safe", tol=1e-8)
    for a, b in zip(safe.outlier_history, plain.outlier_history):
        np.testing.assert_array_equal(a, b)
    assert safe.objective[-1] == pytest.approx(plain.objective[-1], rel=1e-8)
    assert safe.put_back.sum() == 0 and safe.frozen.sum() > 0


# --- the solver's own gap-safe screening (_rules._gap_safe_flags) ------------

@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 100_000), kernel=st.sampled_from(["linear", "rbf"]),
       C=st.sampled_from([0.1, 1.0, 10.0]), outliers=st.floats(0.0, 0.4),
       weighted=st.booleans(), period=st.sampled_from([1, 3, 50]),
       shrinking=st.booleans())
def test_in_solver_gap_screening_never_freezes_wrongly(seed, kernel, C, outliers, weighted,
                                                        period, shrinking):
    # a CCCP-shaped step (p = -1 - Q mu, y'beta = y'mu), equal or per-class
    # boxes (the quickselect and the sorted counts), warm start from a
    # random feasible point: every frozen sample sits at its bound in the
    # exact optimum, and the solution equals the unscreened one.
    n = 30
    X, y, K = problem(n, seed, kernel)
    rng = np.random.default_rng(seed + 7)
    Q = y[:, None] * y[None, :] * K
    hi = np.where(y > 0, C, (2.0 if weighted else 1.0) * C)
    mu = np.where(rng.random(n) < outliers, hi, 0.0)
    p = -1.0 - Q @ mu
    target = float(y @ mu)
    start = repair_equality(rng.uniform(0, 1, n) * hi, y, np.zeros(n), hi,
                            np.ones(n, bool), target)
    star = exact_box_qp(Q, p, np.zeros(n), hi, y=y, delta=target)
    qm = QMatrix(Kernel(X, kernel, 0.5, 0.0, 3), y, 100.0)
    plain, _ = solve_reduced(qm, p, np.zeros(n), hi, start, y=y, tol=1e-10,
                             shrinking=shrinking)
    screened, put_back = solve_reduced(
        qm, p, np.zeros(n), hi, start, y=y, tol=1e-10, shrinking=shrinking,
        gap_screening=period,
        **gap_rule_allowances(float(np.max(np.diag(K))), hi.sum() + mu.sum(), hi))
    frozen = screened.frozen
    assert put_back == 0
    at_lower = frozen & (screened.alpha <= 0)
    at_upper = frozen & (screened.alpha >= hi)
    assert np.all(at_lower | at_upper == frozen)
    assert np.all(star[at_lower] <= 1e-9 * C)
    assert np.all(star[at_upper] >= hi[at_upper] * (1 - 1e-9))
    assert screened.objective == pytest.approx(plain.objective, rel=1e-9, abs=1e-12)
    assert screened.frozen_lower + screened.frozen_upper == int(frozen.sum())


def test_in_solver_gap_screening_needs_the_equality():
    from svmscreen._solver import solve
    X, y, _ = problem(10, 0, "rbf")
    qm = QMatrix(Kernel(X, "rbf", 0.5, 0.0, 3), y, 100.0)
    with pytest.raises(ValueError, match="gap_screening"):
        solve(qm, -np.ones(10), np.zeros(10), np.ones(10), np.zeros(10), gap_screening=10)
    # ... and the round-off allowances of the caller's problem
    with pytest.raises(ValueError, match="gap_rule_allowances"):
        solve(qm, -np.ones(10), np.zeros(10), np.ones(10), np.zeros(10), y=y,
              gap_screening=10)


@pytest.mark.parametrize("cache_size", [100.0, 0.02])
def test_cccp_screening_with_a_small_cache_and_class_weights(cache_size):
    # 0.02 MB holds only a few columns of 300: freezing then reorders partly
    # cached columns (ColumnCache.swap_many gives up the ones it cannot keep).
    X, y, _ = problem(300, 4, "rbf", flip=0.2)
    for class_weight in (None, {1.0: 2.0}):
        kwargs = dict(C=1.0, gamma=0.5, tol=1e-10, cache_size=cache_size,
                      class_weight=class_weight)
        plain = svmscreen.train_ramp(X, y, screening=None, **kwargs)
        safe = svmscreen.train_ramp(X, y, screening="safe", **kwargs)
        assert safe.n_outer == plain.n_outer
        for a, b in zip(safe.outlier_history, plain.outlier_history):
            np.testing.assert_array_equal(a, b)
        assert safe.objective[-1] == pytest.approx(plain.objective[-1], rel=1e-8)
        assert safe.put_back.sum() == 0 and safe.frozen.sum() > 0
        # the screened solves really are smaller
        assert safe.work_select.sum() < plain.work_select.sum()
