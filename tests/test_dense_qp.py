"""The solver's dense fallback (``svmscreen.dense_qp``, ``_SMO.dense_fallback``).

* ``interior_point`` against the exact active-set QP of ``_reference.py`` on
  random box QPs, rank-deficient and badly scaled ones included, with Q
  dense or as its low-rank factor (``LowRankQ``, a linear kernel's form).
* ``solve`` on a problem where SMO alone crawls (a linear kernel on
  unscaled, low-rank features, like raw madelon): it hands over to the
  interior-point method, ends optimal by its own stopping rule, and agrees
  with the exact QP; with fixed variables, without the equality, from a
  warm start; never in LIBSVM mode, nor when Q's block exceeds the cache
  budget.  A linear kernel's fallback works on Q's factor Z (Z Z' = Q);
  the dense form is tested on the same Q given as a precomputed kernel.
"""
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _reference import exact_box_qp
from conftest import examples
from svmscreen._kernels import Kernel, compute_layout
from svmscreen._solver import QMatrix, solve
from svmscreen.dense_qp import LowRankQ, interior_point, snap_to_bounds


def objective(Q, p, a):
    return 0.5 * a @ Q @ a + p @ a


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 30), rank=st.integers(1, 30),
       scale=st.sampled_from([1e-3, 1.0, 1e6]), equality=st.booleans(),
       low_rank=st.booleans())
def test_interior_point_matches_the_exact_qp(seed, n, rank, scale, equality, low_rank):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, min(rank, n))) * np.sqrt(scale)
    Q = F @ F.T
    p = rng.uniform(-2, 1, n)
    lo = np.where(rng.random(n) < 0.3, -rng.uniform(0, 1, n), 0.0)
    hi = lo + rng.uniform(0.1, 2, n)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0) if equality else None
    # a reachable right-hand side: y'a for a point of the box
    delta = float(y @ (lo + rng.random(n) * (hi - lo))) if equality else 0.0
    given_Q = LowRankQ(F) if low_rank else Q
    found, side, n_steps = interior_point(given_Q, p, lo, hi, y, delta)
    assert found is not None and n_steps > 0
    assert np.all(found >= lo) and np.all(found <= hi)
    if equality:
        assert abs(y @ found - delta) <= 1e-8 * (1 + np.abs(hi).sum())
    exact = exact_box_qp(Q, p, lo, hi, y, delta)
    best = objective(Q, p, exact)
    # an approximate minimiser: within 1e-7 of the optimum, relative to the
    # objective's terms
    size = abs(best) + 0.5 * abs(exact @ Q @ exact) + np.abs(p) @ np.abs(exact) + 1e-12
    assert objective(Q, p, found) - best <= 1e-7 * size
    # the sides it reports: where the exact optimum is strictly inside, the
    # iterate is not placed at a bound (strict complementarity aside)
    inside = (exact > lo + 1e-6 * (hi - lo)) & (exact < hi - 1e-6 * (hi - lo))
    assert not np.any((side != 0) & inside & (np.abs(found - exact) < 1e-9 * (hi - lo)))
    # snapping moves Q a by at most its limit, and only onto the bounds
    limit = 1e-9 * (1 + np.abs(Q).max())
    snapped = snap_to_bounds(found, lo, hi, side, given_Q, limit)
    moved = snapped != found
    assert np.all((snapped[moved] == lo[moved]) | (snapped[moved] == hi[moved]))
    assert np.all(side[moved] != 0)
    assert np.abs(Q @ (snapped - found)).max(initial=0.0) <= limit


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 60), k=st.integers(1, 8),
       spread=st.sampled_from([0.0, 6.0, 14.0]))
def test_low_rank_solves_with_q_plus_d(seed, m, k, spread):
    """LowRankQ's Newton solves, (Z Z' + D) x = r by Woodbury and
    iterative refinement, backward stable with D over up to 14 decades (an
    interior point's z / s: tiny for free variables, huge at a bound; one
    variable with z^2 = 1e14 d kept 2 digits unrefined); and its products
    and diagonal."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((m, k)) * 10.0 ** rng.uniform(-2, 4)
    scale = float(np.einsum("ij,ij->i", Z, Z).max())
    d = scale * 10.0 ** rng.uniform(-spread, 0.0, m) + 1e-14 * scale
    r = rng.standard_normal(m)
    x = LowRankQ(Z).newton(d)(r)
    M = Z @ Z.T + np.diag(d)
    # backward stable: the residual is round-off of the matrix's terms
    residual = np.abs(M @ x - r).max()
    assert residual <= 1e-9 * (np.abs(M) @ np.abs(x) + np.abs(r)).max()
    Q = LowRankQ(Z)
    np.testing.assert_allclose(Q.diagonal(), np.diagonal(Z @ Z.T), rtol=1e-12)
    v = rng.standard_normal(m)
    np.testing.assert_allclose(Q @ v, (Z @ Z.T) @ v, rtol=1e-9, atol=1e-9 * scale * np.abs(v).sum())


@pytest.mark.parametrize("low_rank", [False, True])
def test_interior_point_goes_on_while_mu_falls_slowly(low_rank):
    """breast-cancer_scale, linear, C = 100, bias-free, every variable:
    mu fell from 1.5 to 0.94 in 6 steps, then to 1e-11 in 20 more.  Stopped
    after 5 steps without halving, the method returned a point 13% above the
    optimum's objective (and SMO, with the fallback on Q's factor, ran 12
    times longer from there)."""
    import svmscreen
    X, y = svmscreen.load_dataset("breast-cancer_scale")
    X, s = X.toarray(), np.where(y == y.max(), 1.0, -1.0)
    n, C = len(s), 100.0
    Z = X * s[:, None]
    Q = Z @ Z.T
    p, lo, hi = -np.ones(n), np.zeros(n), np.full(n, C)
    found, _, _ = interior_point(LowRankQ(Z) if low_rank else Q, p, lo, hi)
    tight = solve(_qmatrix(X, s, form="dense"), p, lo, hi, np.zeros(n), tol=1e-9)
    assert tight.status == "optimal"
    assert objective(Q, p, found) - tight.objective <= 1e-9 * abs(tight.objective)


@pytest.mark.parametrize("low_rank", [False, True])
def test_interior_point_with_boxes_1e9_apart_is_no_blow_up(low_rank):
    """A fallback's problem captured from a bias-free solve (227 variables,
    2 features, boxes from 6e-5 to 6e4): its round-off floor fell faster
    than the residual the first steps left, which read as a blow-up at
    step 3, on every try (300k SMO iterations, 4.7 times the code before
    the factor).  Against the largest floor so far it reaches the optimum."""
    data = np.load(os.path.join(os.path.dirname(__file__), "data", "spread_boxes.npz"))
    Z, p, lo, hi = data["Z"], data["c"], data["lo"], data["hi"]
    Q = Z @ Z.T
    found, _, n_steps = interior_point(LowRankQ(Z) if low_rank else Q, p, lo, hi)
    best = objective(Q, p, exact_box_qp(Q, p, lo, hi))
    assert n_steps > 10
    assert objective(Q, p, found) - best <= 1e-9 * abs(best)


def _narrow_box_problem():
    """Bias-free poly-kernel C-SVC of 8 samples: rows 5 and 6 are the same
    point with opposite labels (a direction without curvature, along which
    single-variable SMO moves 1 / K_ii a step), rows 2 and 3 weigh 1e-8."""
    X = np.array([[1., -1.], [1., 1.], [-1., 0.], [2., 2.], [2., -1.], [1., 2.], [1., 2.],
                  [1., 1.]])
    y = np.array([1., -1., 1., 1., 1., 1., -1., -1.])
    sample_weight = np.array([1., 1., 1e-8, 1e-8, 1., 1., 1., 1.])
    K = (0.1 * X @ X.T + 1.0) ** 3
    return X, y, sample_weight, K * np.outer(y, y)


@pytest.mark.parametrize("C", [1e3, 3e6])
def test_interior_point_with_boxes_1e8_apart(C):
    # Near the bound of a box 1e-8 as wide as the others, z_lo and z_hi
    # grow to mu / slack (1.6e9 at the second step), and the dual residual
    # carries their round-off (1e-7): read as a blow-up, it ended the method
    # at its start, the boxes' centres.
    _, _, sample_weight, Q = _narrow_box_problem()
    p, lo, hi = -np.ones(8), np.zeros(8), C * sample_weight
    found, _, n_steps = interior_point(Q, p, lo, hi)
    assert found is not None and n_steps > 5
    exact = exact_box_qp(Q, p, lo, hi)
    best = objective(Q, p, exact)
    assert objective(Q, p, found) - best <= 1e-7 * abs(best)


def test_bias_free_fit_with_boxes_1e8_apart_reaches_the_optimum():
    # SMO crawls along rows 5 and 6 (2e7 steps to reach C = 3e6), and the
    # fallback, which failed on the narrow boxes (above), left it to run to
    # max_iter (1e7 iterations) at an objective 1.2% above the optimum.
    import svmscreen
    X, y, sample_weight, Q = _narrow_box_problem()
    C = 3e6
    model = svmscreen.fit_binary(X, y, C=C, kernel="poly", gamma=0.1, coef0=1.0, degree=3,
                                 fit_intercept=False, sample_weight=sample_weight, tol=1e-6)
    assert model.status_ == "optimal" and model.n_iter_ < 1_000_000
    p, lo, hi = -np.ones(8), np.zeros(8), C * sample_weight
    best = objective(Q, p, exact_box_qp(Q, p, lo, hi))
    assert abs(model.objective_ - best) <= 1e-6 * abs(best)


def _stalling_problem(n=400, d=20, seed=0):
    """Integer features around 480, rank d < n: K_ii about 4.6e6, and most
    of the dual's directions without curvature (raw madelon's shape)."""
    rng = np.random.default_rng(seed)
    X = np.round(480 + 30 * rng.standard_normal((n, d)))
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + 20 * rng.standard_normal(n) > 480, 1.0, -1.0)
    return X, y


FORMS = ["dense", "low_rank"]


def _qmatrix(X, y, cache_mb=100.0, round_float32=False, form="low_rank"):
    """The linear kernel's Q of X: its fallback works on the factor Z
    (form "low_rank"); form "dense": the same Q given as a precomputed
    kernel, which has no factor."""
    if form == "dense":
        kernel = Kernel(np.ascontiguousarray(X @ X.T), "precomputed", 0.0, 0.0, 3)
    else:
        kernel = Kernel(compute_layout(X), "linear", 0.0, 0.0, 3)
    return QMatrix(kernel, y, cache_mb, round_float32=round_float32)


def _assert_exact_optimum(result, Q, lo, hi, y=None, delta=0.0):
    """result (of solve with p = -1) is the exact box QP's optimum within
    1e-6 relative objective, its gradient is Q alpha + p, and it keeps the
    equality's value."""
    p = -np.ones(len(lo))
    exact = exact_box_qp(Q, p, lo, hi, y, delta)
    best = objective(Q, p, exact)
    assert abs(result.objective - best) <= 1e-6 * abs(best)
    np.testing.assert_allclose(result.grad, Q @ result.alpha + p, rtol=0,
                               atol=1e-9 * np.abs(Q).max())
    if y is not None:
        assert abs(y @ result.alpha - delta) <= 1e-9 * len(lo)


@pytest.fixture(scope="module")
def stalling():
    X, y = _stalling_problem()
    Q = (X @ X.T) * np.outer(y, y)
    return X, y, Q


@pytest.mark.parametrize("form", FORMS)
def test_smo_alone_crawls_where_the_fallback_finishes(stalling, form):
    X, y, Q = stalling
    n = len(y)
    args = (-np.ones(n), np.zeros(n), np.ones(n), np.zeros(n))
    # a cache budget too small for any active block (16 a^2 bytes, a >= 2)
    # or factor (16 a k bytes): SMO alone
    alone = solve(_qmatrix(X, y, cache_mb=1e-6, form=form), *args, y=y, tol=1e-3,
                  max_iter=2_000_000)
    assert alone.status == "max_iter" and alone.n_dense_steps == 0
    result = solve(_qmatrix(X, y, form=form), *args, y=y, tol=1e-3)
    assert result.status == "optimal" and result.n_dense_steps > 0
    assert result.violation < 1e-3
    assert result.n_iter < 2_000_000
    _assert_exact_optimum(result, Q, np.zeros(n), np.ones(n), y, 0.0)
    assert result.objective < alone.objective


@pytest.mark.parametrize("form", FORMS)
def test_fallback_keeps_fixed_variables_and_warm_starts(stalling, form):
    X, y, Q = stalling
    n = len(y)
    rng = np.random.default_rng(1)
    hi = np.where(y > 0, 1.0, 2.0)
    fixed = rng.random(n) < 0.2
    # the fixed ones at 0 (at their upper bound they would dominate the
    # problem and leave SMO nothing hard to do); a nonzero start for the rest
    start = np.zeros(n)
    start[np.flatnonzero(~fixed & (y > 0))[:5]] = 0.5
    start[np.flatnonzero(~fixed & (y < 0))[:5]] = 0.5
    # a feasible warm start: the equality's value is what the start gives
    delta = float(y @ start)
    result = solve(_qmatrix(X, y, form=form), -np.ones(n), np.zeros(n), hi, start, y=y,
                   fixed=fixed,
                   grad0=Q @ start - 1, tol=1e-3)
    assert result.status == "optimal" and result.n_dense_steps > 0
    np.testing.assert_array_equal(result.alpha[fixed], start[fixed])
    lo_ref, hi_ref = np.zeros(n), hi.copy()
    lo_ref[fixed] = hi_ref[fixed] = start[fixed]
    _assert_exact_optimum(result, Q, lo_ref, hi_ref, y, delta)


@pytest.mark.parametrize("form", FORMS)
def test_fallback_without_the_equality(stalling, form):
    X, y, Q = stalling
    n = len(y)
    result = solve(_qmatrix(X, y, form=form), -np.ones(n), np.zeros(n), np.ones(n),
                   np.zeros(n), tol=1e-3)
    assert result.status == "optimal" and result.n_dense_steps > 0
    _assert_exact_optimum(result, Q, np.zeros(n), np.ones(n))


def _few_free_problem(n, seed=0):
    """Overlapping classes on 3 unscaled features: few free vectors, most
    at C, where SMO crawls on a small active set."""
    rng = np.random.default_rng(seed)
    X = np.round(480 + 30 * rng.standard_normal((n, 3)))
    y = np.where(X[:, 0] - X[:, 1] + 40 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _record_blocks(monkeypatch):
    """(size, type) of the blocks the dense fallback takes, in order: an
    ndarray, or a LowRankQ for a linear kernel's factor."""
    import svmscreen.dense_qp
    blocks = []
    method = svmscreen.dense_qp.interior_point

    def recording(Q, *args, **kwargs):
        blocks.append((Q.shape[0], type(Q)))
        return method(Q, *args, **kwargs)

    monkeypatch.setattr(svmscreen.dense_qp, "interior_point", recording)
    return blocks


@pytest.mark.parametrize("cache_mb", [100.0, 0.5])
def test_fallback_on_the_working_set_when_shrinking(cache_mb):
    """Few free vectors, most at C (overlapping classes, 3 features): SMO
    crawls on a small active set.  The fallback rebuilds the gradient and
    factorises only the free variables and those that could still move,
    which fits 0.5 MB where the whole block (400^2 doubles) does not (the
    dense form: a linear kernel's factor takes 16 m k bytes)."""
    n = 400
    X, y = _few_free_problem(n)
    Q = (X @ X.T) * np.outer(y, y)
    args = (-np.ones(n), np.zeros(n), np.ones(n), np.zeros(n))
    alone = solve(_qmatrix(X, y, cache_mb=1e-6, form="dense"), *args, y=y, tol=1e-3)
    assert 16 * n * n > 0.5 * 2**20 and alone.n_dense_steps == 0
    result = solve(_qmatrix(X, y, cache_mb=cache_mb, form="dense"), *args, y=y, tol=1e-3)
    assert result.status == "optimal" and result.n_dense_steps > 0
    assert result.n_iter < alone.n_iter / 4
    _assert_exact_optimum(result, Q, np.zeros(n), np.ones(n), y, 0.0)


def test_fallback_on_the_working_set_without_shrinking(monkeypatch):
    """shrinking=False (-h 0) sets nothing aside, and the fallback took
    every variable, the many held at C by the shrinking test's measure
    too: 400 of 400 here; on 1024 rows of diabetes_scale (RBF, C = 1e3, a
    third duplicated with the other label) its 29 factorisations were 60%
    of a fit 2.1 times LIBSVM's -h 0 time.  It re-applies the test as with
    shrinking, and the solve still ends at the exact optimum.  (The dense
    form: a linear kernel's factor costs O(m) in its block, and runs before
    the bounded variables settle.)"""
    blocks = _record_blocks(monkeypatch)
    n = 400
    X, y = _few_free_problem(n)
    Q = (X @ X.T) * np.outer(y, y)
    result = solve(_qmatrix(X, y, form="dense"), -np.ones(n), np.zeros(n), np.ones(n),
                   np.zeros(n), y=y, tol=1e-3, shrinking=False)
    assert result.status == "optimal" and result.n_dense_steps > 0
    at_upper = np.count_nonzero(result.alpha == 1.0)
    assert at_upper > n / 4 and blocks and max(m for m, _ in blocks) <= n - at_upper / 2
    _assert_exact_optimum(result, Q, np.zeros(n), np.ones(n), y, 0.0)


def test_fallback_blocks_are_paid_for_by_smo_work(monkeypatch):
    """The crawl test weighs SMO's work against the cube of its active set,
    a few free vectors here, but the block the fallback then factorises is
    what the gradient rebuild and the shrinking test leave: 764 of 800
    variables at first, whose Newton steps cost more than the iterations
    they saved (svmguide1, linear, C = 1: 1.6 s of a 1.8 s fit, LIBSVM
    0.65 s).  A fallback now waits until SMO's work since the last one that
    ran, STALL_WORK_PER_CUBE m^3, pays for its block of m variables too."""
    blocks = _record_blocks(monkeypatch)
    n = 800
    X, y = _few_free_problem(n)
    args = (-np.ones(n), np.zeros(n), np.ones(n), np.zeros(n))
    result = solve(_qmatrix(X, y, form="dense"), *args, y=y, tol=1e-3)
    assert result.status == "optimal" and blocks
    assert sum(0.1 * m ** 3 for m, _ in blocks) <= result.work_select
    blocks.clear()
    tight = solve(_qmatrix(X, y, form="dense"), *args, y=y, tol=1e-9)
    assert abs(result.objective - tight.objective) <= 1e-6 * abs(tight.objective)


@pytest.mark.parametrize("equality", [True, False])
def test_linear_kernel_fallback_works_on_the_factor(monkeypatch, equality):
    """A linear kernel on 3 features: the fallback takes Q as Z Z'
    (LowRankQ), whose Newton steps cost O(m k^2), and it runs early: far
    fewer SMO iterations than the dense form, which waits for
    STALL_MIN_ITERATIONS and SMO work of 0.1 m^3 (svmguide1, linear, C =
    1, bias-free: 855,000 iterations and 20 s before; 0.2 s now).  Both end
    at the optimum."""
    blocks = _record_blocks(monkeypatch)
    n = 800
    X, y = _few_free_problem(n)
    args = (-np.ones(n), np.zeros(n), np.ones(n), np.zeros(n))
    sign = y if equality else None
    found = {form: solve(_qmatrix(X, y, form=form), *args, y=sign, tol=1e-3)
             for form in FORMS}
    assert all(r.status == "optimal" for r in found.values())
    assert blocks and {kind for _, kind in blocks} == {np.ndarray, LowRankQ}
    assert found["low_rank"].n_dense_steps > 0
    assert found["low_rank"].n_iter < found["dense"].n_iter / 4
    tight = solve(_qmatrix(X, y, form="dense"), *args, y=sign, tol=1e-9)
    for result in found.values():
        assert abs(result.objective - tight.objective) <= 1e-6 * abs(tight.objective)


@pytest.mark.parametrize("layout", ["dense", "csr", "csr_wide", "twins"])
def test_low_rank_block_is_a_factor_of_the_dense_block(layout):
    """QMatrix.low_rank_block(m) is Z with Z Z' = Q's block at positions
    0..m-1, in the position order a solve leaves (shrinking scatters it),
    for dense rows, CSR rows (also with the columns in use remapped, a
    width far beyond the nonzeros) and rows shared by two variables (SVR)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(3)
    n = 60
    X = np.round(rng.standard_normal((n, 4)) * 3) * (rng.random((n, 4)) < 0.6)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    rows = None
    if layout == "csr":
        X = sp.csr_matrix(X)
    elif layout == "csr_wide":
        X = sp.csr_matrix((X.ravel(), (np.repeat(np.arange(n), 4),
                                        np.tile([3, 900, 5000, 70000], n))), shape=(n, 80000))
        X.eliminate_zeros()
    elif layout == "twins":
        rows = np.concatenate([np.arange(n), np.arange(n)])
        y = np.concatenate([np.ones(n), -np.ones(n)])
    Q = QMatrix(Kernel(X, "linear", 0.0, 0.0, 3), y, 100.0, rows=rows)
    size = len(y)
    solve(Q, -np.ones(size), np.zeros(size), np.ones(size), np.zeros(size),
          y=y if rows is None else None, tol=1e-3)
    for m in (size, size // 3, 0):
        Z = Q.low_rank_block(m)
        assert Z.shape == (m, Q.low_rank_width())
        np.testing.assert_allclose(Z @ Z.T, Q.dense_block(m), rtol=1e-12, atol=1e-12)
    rbf = QMatrix(Kernel(np.asarray(X.toarray() if sp.issparse(X) else X), "rbf", 0.5, 0.0, 3),
                  y, 100.0, rows=rows)
    assert rbf.low_rank_width() == -1
    with pytest.raises(ValueError, match="no low-rank factor"):
        rbf.low_rank_block(3)
    rounded = QMatrix(Kernel(X, "linear", 0.0, 0.0, 3), y, 100.0, round_float32=True,
                      rows=rows)
    assert rounded.low_rank_width() == -1


def test_libsvm_mode_keeps_libsvm_iterations(stalling):
    X, y, _ = stalling
    n = len(y)
    result = solve(_qmatrix(X, y, round_float32=True), -np.ones(n), np.zeros(n), np.ones(n),
                   np.zeros(n), y=y, tol=1e-3, max_iter=300_000)
    assert result.n_dense_steps == 0 and result.n_iter == 300_000


def test_ordinary_solves_never_fall_back():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 5))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(300) > 0, 1.0, -1.0)
    Q = QMatrix(Kernel(compute_layout(X), "rbf", 0.2, 0.0, 3), y, 100.0)
    result = solve(Q, -np.ones(300), np.zeros(300), np.full(300, 10.0), np.zeros(300), y=y)
    assert result.status == "optimal" and result.n_dense_steps == 0


def test_an_overflowing_fallback_warns_only_of_max_iter():
    """C = 1e300 on data no hyperplane separates: the dense steps' iterates
    overflow, which ends each of them (found None), and SMO runs to max_iter.
    numpy's overflow warnings came once per dense step, thousands per fit;
    the one warning left is the solver's own."""
    import warnings

    import svmscreen
    X = np.array([[0.0], [1.0], [2.0], [3.0], [1.5], [2.5]])
    y = np.array([1, -1, 1, -1, 1, -1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svmscreen.fit_binary(X, y, C=1e300, kernel="linear")
    assert [w.category for w in caught] == [svmscreen.ConvergenceWarning]
