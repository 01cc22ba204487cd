"""The typed one-pass routines the path's screening step runs at every C
(issue 3, cost): each must equal the composition of the per-set building
blocks it replaces, which the safety tests of test_screening.py check
against exact optima.

- ``_rules.fused_margins`` (DVI ball, BT2 ball, IT, domes; bias-free, plain and
  centred intercept sets, weighted or not) against ``_bounds`` bounds +
  ``intercept_interval`` + ``margins_with_intercept``;
- ``_rules.fixed_violators`` (the KKT check of a screened solve) against the
  stopping rule written out in numpy;
- ``_rules.reference_summary``, ``box_ratio``, ``classify_masks``,
  ``fix_screened``;
- ``screen(..., gap_ref=...)`` equals ``screen`` computing the gap itself;
- the unweighted intercept count (a quickselect) equals the order
  statistics of a sort, with ties and infinite thresholds;
- the path's DVI step (``_rules.DviPathStep``, one typed call) equals
  ``screen(rule="dvi")``, and its dome step (``_rules.DomePathStep``)
  equals ``screen_dome``.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmscreen import _rules
from svmscreen._bounds import ball_bounds, dome_bounds, two_ball_bounds
from svmscreen.objective import duality_gap, gap_of
from svmscreen.screening import ScreeningData, screen

from _reference import exact_svc
from conftest import examples


def _per_set_margins(qa, qs, y, hi, q, r1, r2, phi, geometry, norms, centred_norms,
                     centre_index, fit_intercept, weighted):
    """The composition fused_margins replaces, one v-set at a time."""
    n = qa.size
    t = 0.5 * (1.0 + q)
    sets = [(None, norms)]
    if fit_intercept and centre_index.size:
        sets.append((centre_index, centred_norms))
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    intervals = []
    for index, vnorm in sets:
        def dots(qvec):
            if not fit_intercept:
                return qvec.copy()
            scores = y * qvec
            return scores - scores[index].mean() if index is not None else scores
        d_w, d_s = dots(qa), dots(qs)
        if geometry >= 3:        # r1 = r, r2 = d', phi = ||w_a|| (_rules.dome_shape)
            centre = 0.5 * d_s if geometry == 4 else np.zeros(n)
            lo, up, _ = dome_bounds(centre, -d_w, vnorm, r1, phi, r2)
        elif geometry == 0:
            lo, up = ball_bounds(t * d_w, vnorm, r1)
        elif geometry == 1:
            lo, up = ball_bounds(0.5 * (d_w + d_s), vnorm, r2)
        else:
            lo, up, _ = two_ball_bounds(t * d_w, 0.5 * (d_w + d_s), vnorm, r1, r2, phi)
        lo, up = np.ascontiguousarray(lo), np.ascontiguousarray(up)
        if not fit_intercept:
            np.maximum(lower, lo, out=lower)
            np.minimum(upper, up, out=upper)
            continue
        b = _rules.intercept_interval(lo, up, y, hi, weighted)
        _rules.margins_with_intercept(lo, up, y, b[0], b[1], lower, upper)
        intervals.append(b)
    return lower, upper, intervals


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 40),
       geometry=st.sampled_from([0, 1, 2, 3, 4]),
       fit_intercept=st.booleans(), centred=st.booleans(), weighted=st.booleans())
def test_fused_margins_equal_the_per_set_composition(seed, n, geometry, fit_intercept,
                                                     centred, weighted):
    rng = np.random.default_rng(seed)
    qa, qs = rng.normal(size=n), rng.normal(size=n)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    hi = rng.uniform(0.5, 2.0, size=n) if weighted else np.full(n, 1.5)
    norms, centred_norms = rng.uniform(0.0, 2.0, size=n), rng.uniform(0.0, 2.0, size=n)
    centre_index = (np.sort(rng.choice(n, size=max(1, n // 2), replace=False)).astype(np.intp)
                    if centred else np.empty(0, dtype=np.intp))
    q, r1, r2 = rng.uniform(0.5, 2.0), rng.uniform(0.0, 1.0), rng.uniform(0.0, 1.0)
    phi = rng.uniform(0.0, 1.5)
    lower, upper = np.empty(n), np.empty(n)
    work = np.empty((_rules.WORK_ROWS, n))
    got = _rules.fused_margins(qa, qs, y, hi, q, r1, r2, phi, geometry, norms, centred_norms,
                               centre_index, fit_intercept, weighted, 0.0, lower, upper, work)
    want_lo, want_up, intervals = _per_set_margins(
        qa, qs, y, hi, q, r1, r2, phi, geometry, norms, centred_norms, centre_index,
        fit_intercept, weighted)
    np.testing.assert_allclose(lower, want_lo, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(upper, want_up, rtol=1e-12, atol=1e-12)
    if fit_intercept:
        np.testing.assert_allclose(got[:2], intervals[0], rtol=1e-12, atol=1e-12)
        if centred:
            np.testing.assert_allclose(got[2:4], intervals[1], rtol=1e-12, atol=1e-12)
        else:
            assert np.isnan(got[2]) and np.isnan(got[3])
    else:
        assert got[:2] == (0.0, 0.0)


def test_fused_margins_checks_lengths():
    n = 5
    with pytest.raises(ValueError):
        _rules.fused_margins(np.zeros(n), np.zeros(n), np.ones(n), np.ones(n), 1.0, 0.1, 0.1,
                             0.0, 0, np.ones(n), np.ones(n), np.empty(0, dtype=np.intp), True,
                             False, 0.0, np.empty(n), np.empty(n), np.empty((2, n)))


def _numpy_violators(alpha, grad, lo, hi, y, fixed, tol):
    """The stopping rule of reduced.py written out in numpy (LIBSVM's
    maximal violation with y; LIBLINEAR's projected gradient without): a
    fixed variable violates when it widens the free variables' criterion to
    tol or beyond; if none does alone but the fixed ones widen it together,
    all are released."""
    free = ~fixed
    if y is None:
        v = np.where(lo >= hi, 0.0, np.where(alpha <= lo, np.minimum(grad, 0.0),
                                             np.where(alpha >= hi, np.maximum(grad, 0.0), grad)))
        up = low = np.ones(alpha.shape[0], dtype=bool)
        m, M = max(v[free].max(initial=0.0), 0.0), min(v[free].min(initial=0.0), 0.0)
        m_all, M_all = max(v.max(initial=0.0), 0.0), min(v.min(initial=0.0), 0.0)
    else:
        v = -y * grad
        up = np.where(y > 0, alpha < hi, alpha > lo)
        low = np.where(y > 0, alpha > lo, alpha < hi)
        m, M = v[free & up].max(initial=-np.inf), v[free & low].min(initial=np.inf)
        m_all, M_all = v[up].max(initial=-np.inf), v[low].min(initial=np.inf)
    bad = fixed & ((up & (v > m) & (v - M >= tol)) | (low & (v < M) & (m - v >= tol)))
    widened = m_all > m or M_all < M
    whole = m_all - M_all if np.isfinite(m_all) and np.isfinite(M_all) else 0.0
    return fixed.copy() if (not bad.any() and widened and whole >= tol) else bad


@settings(max_examples=examples(100), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30), equality=st.booleans(),
       tol=st.sampled_from([1e-3, 0.1, 1.0]))
def test_fixed_violators_equals_the_stopping_rule(seed, n, equality, tol):
    rng = np.random.default_rng(seed)
    lo, hi = np.zeros(n), rng.uniform(0.5, 2.0, size=n)
    alpha = np.where(rng.random(n) < 0.3, 0.0, np.where(rng.random(n) < 0.5, hi,
                                                         rng.uniform(0, 1, n) * hi))
    grad = rng.normal(scale=rng.choice([0.01, 1.0]), size=n)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0) if equality else None
    fixed = (rng.random(n) < 0.4) & ((alpha <= lo) | (alpha >= hi))
    bad = np.empty(n, dtype=np.uint8)
    count = _rules.fixed_violators(alpha, grad, lo, hi, y, fixed.view(np.uint8), tol, bad)
    want = _numpy_violators(alpha, grad, lo, hi, y, fixed, tol)
    assert bad.view(bool).tolist() == want.tolist()
    assert count == int(want.sum())


def test_reference_summary_and_box_ratio():
    rng = np.random.default_rng(0)
    n = 9
    alpha, qa = rng.uniform(0, 1, n), rng.normal(size=n)
    hi_ref = rng.uniform(0.5, 2.0, n)
    q, weighted, W, l1, total = _rules.reference_summary(alpha, qa, hi_ref, 1.7 * hi_ref)
    assert q == pytest.approx(1.7) and weighted
    assert W == pytest.approx(alpha @ qa) and l1 == pytest.approx(np.abs(alpha).sum())
    assert total == pytest.approx(1.7 * hi_ref.sum())
    assert not _rules.reference_summary(alpha, qa, np.ones(n), np.full(n, 3.0))[1]
    for bad in (np.r_[hi_ref[:-1] * 1.7, hi_ref[-1] * 1.8],      # not proportional
                np.r_[-1.0, hi_ref[1:]],                         # not positive
                np.r_[np.inf, hi_ref[1:]]):                      # not finite
        assert _rules.reference_summary(alpha, qa, hi_ref, bad) is None
        assert np.isnan(_rules.box_ratio(bad, hi_ref))
    assert _rules.box_ratio(2.0 * hi_ref, hi_ref) == pytest.approx(2.0)


def test_classify_masks_and_fix_screened():
    lower = np.array([1.5, 0.0, 1.5, 0.0, 1.0])
    upper = np.array([2.0, 0.5, 0.5, 2.0, 1.0])
    zero, bound = np.full(5, 7, np.uint8), np.full(5, 7, np.uint8)
    assert _rules.classify_masks(lower, upper, 1e-9, zero, bound) == 1   # sample 2 conflicts
    assert zero.tolist() == [1, 0, 0, 0, 0] and bound.tolist() == [0, 1, 0, 0, 0]
    hi = np.full(5, 2.0)
    fixed = np.empty(5, np.uint8)
    assert _rules.fix_screened(np.array([0.0, 2.0, 1.0, 1.0, 1.0]), np.zeros(5), hi, zero,
                               bound, fixed) == (0, 1, 1)
    assert fixed.tolist() == [1, 1, 0, 0, 0]
    assert _rules.fix_screened(np.array([0.5, 1.0, 1.0, 1.0, 1.0]), np.zeros(5), hi, zero,
                               bound, fixed) == (2, 1, 1)


@pytest.mark.parametrize("rule", ["dvi", "it"])
def test_precomputed_gap_gives_the_same_screen(rule):
    rng = np.random.default_rng(3)
    n = 30
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=2))
    Q = y[:, None] * y[None] * K
    alpha = exact_svc(K, y, np.full(n, 0.5), True)[0]
    grad = Q @ alpha - 1.0
    data = ScreeningData(X, y, kernel="rbf", gamma=0.5)
    gap = duality_gap(alpha, grad, -np.ones(n), np.zeros(n), np.full(n, 0.5), y)
    a = screen(data, alpha, grad, 0.5, 0.7, rule)
    b = screen(data, alpha, grad, np.full(n, 0.5), np.full(n, 0.7), rule, gap_ref=gap)
    assert a.lower.tolist() == b.lower.tolist() and a.upper.tolist() == b.upper.tolist()
    assert a.screened_zero.tolist() == b.screened_zero.tolist()
    assert a.screened_bound.tolist() == b.screened_bound.tolist()


@settings(max_examples=examples(200), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 60),
       kind=st.sampled_from(["normal", "ties", "infinite", "decreasing"]))
def test_unweighted_count_equals_sorted_order_statistics(seed, n, kind):
    """bias_screening.md Thm 2: b_lo = beta_lo_(n_P), b_hi = beta_hi_(n_P + 1)."""
    rng = np.random.default_rng(seed)
    scores = {"normal": rng.normal(size=n),
              "ties": rng.integers(0, 3, size=n).astype(float),
              "infinite": np.where(rng.random(n) < 0.3, np.inf, rng.normal(size=n))
              * np.where(rng.random(n) < 0.5, 1.0, -1.0),
              "decreasing": -np.sort(rng.normal(size=n))}[kind]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    score_lo, score_hi = scores - rng.uniform(0, 1, n), scores.copy()
    b_lo, b_hi = _rules.intercept_interval(score_lo, score_hi, y, np.ones(n), False)
    n_pos = int(np.sum(y > 0))
    assert b_lo == (-np.inf if n_pos == 0 else np.sort(y - score_hi)[n_pos - 1])
    assert b_hi == (np.inf if n_pos == n else np.sort(y - score_lo)[n_pos])


def _rbf_problem(seed, n, weighted):
    """(rng, X, y, box per unit C, RBF kernel) of a small random problem."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    hi_unit = np.where(y > 0, 2.0, 0.5) if weighted else np.ones(n)
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=2))
    return rng, X, y, hi_unit, K


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 40), fit_intercept=st.booleans(),
       weighted=st.booleans(), centre=st.booleans(), q=st.sampled_from([0.7, 1.3, 3.0]))
def test_path_dvi_step_equals_screen(seed, n, fit_intercept, weighted, centre, q):
    """The path's step (make_screening: centring on with the intercept) and
    DviPathStep built directly (centring on or off) give screen()'s sets."""
    from svmscreen.path import _Problem, centre_sample, make_screening
    rng, X, y, hi_unit, K = _rbf_problem(seed, n, weighted)
    hi_ref = 0.8 * hi_unit
    alpha = exact_svc(K, y, hi_ref, fit_intercept)[0]
    if not fit_intercept:                   # an inexact (still feasible) reference
        alpha = np.clip(alpha + rng.uniform(-0.01, 0.01, n), 0.0, hi_ref)
    grad = (y[:, None] * y[None] * K) @ alpha - 1.0
    hi = q * hi_ref

    problem = _Problem(X, y, hi_unit, "rbf", 0.5, 0.0, 3, 10.0, fit_intercept)
    masks = make_screening("dvi", problem, fit_intercept)(alpha, grad, hi_ref, hi)
    data = ScreeningData(X, y, kernel="rbf", gamma=0.5, fit_intercept=fit_intercept,
                         centre_sample=centre_sample(n))
    want = screen(data, alpha, grad, hi_ref, hi, "dvi")
    # None: the rule proved nothing (the path then solves unscreened)
    assert (masks is None) == (not want.screened_zero.any() and not want.screened_bound.any())
    zero, bound = masks if masks is not None else (np.zeros(n, bool), np.zeros(n, bool))
    assert zero.dtype == bool and bound.dtype == bool
    assert zero.tolist() == want.screened_zero.tolist()
    assert bound.tolist() == want.screened_bound.tolist()

    data = ScreeningData(X, y, kernel="rbf", gamma=0.5, fit_intercept=fit_intercept,
                         centre=centre, centre_sample=5)
    step = data.dvi_path_step()
    gap = duality_gap(alpha, grad, -np.ones(n), np.zeros(n), hi_ref,
                      y if fit_intercept else None)
    zero, bound = step(alpha, grad, hi_ref, hi, gap.gap)
    want = screen(data, alpha, grad, hi_ref, hi, "dvi")
    assert zero.tolist() == want.screened_zero.tolist()
    assert bound.tolist() == want.screened_bound.tolist()
    assert step.n_screened == zero.sum() + bound.sum()


@pytest.mark.parametrize("form", ["list", "strided", "big-endian", "int-boxes"])
def test_path_steps_convert_their_vectors(form):
    """The steps' calls take any array-like of float64 values (converted,
    as numpy would) and give the masks of the float64 vectors; their
    inputs are not modified."""
    rng = np.random.default_rng(4)
    n = 30
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 3)) + y[:, None]
    K = X @ X.T
    hi_ref, hi = np.full(n, 2.0), np.full(n, 3.0)
    alpha = exact_svc(K, y, hi_ref, True)[0]
    grad = (np.outer(y, y) * K) @ alpha - 1.0

    def as_form(v):
        if form == "list":
            return v.tolist()
        if form == "strided":
            return np.repeat(v, 2)[::2]
        if form == "big-endian":
            return v.astype(">f8")
        return v.astype(np.int64) if v is hi_ref or v is hi else v

    data = ScreeningData(X, y, kernel="linear", fit_intercept=True, centre_sample=5)
    gap = duality_gap(alpha, grad, -np.ones(n), np.zeros(n), hi_ref, y)
    # (BT2 alone proves nothing here; it runs IT's code)
    steps = [(data.dvi_path_step(), (gap.gap,)),
             (data.two_ball_path_step("it"), (gap.gap, gap.b))]
    for step, scalars in steps:
        want = [m.copy() for m in step(alpha, grad, hi_ref, hi, *scalars)]
        assert any(m.any() for m in want)
        inputs = [as_form(v) for v in (alpha, grad, hi_ref, hi)]
        before = [np.array(v, copy=True) for v in inputs]
        got = step(*inputs, *scalars)
        assert [m.tolist() for m in got] == [m.tolist() for m in want]
        for v, w in zip(inputs, before):
            np.testing.assert_array_equal(np.asarray(v), w)


def test_path_dvi_step_checks_its_input():
    y = np.array([1.0, -1.0, 1.0])
    step = _rules.DviPathStep(y, np.ones(3), np.ones(3), np.empty(0, np.intp), True, 1.0,
                              1e-9)
    with pytest.raises(ValueError, match="length 3"):
        step(np.zeros(2), np.zeros(2), np.ones(2), np.ones(2), 0.0)
    with pytest.raises(ValueError, match="proportional"):
        step(np.zeros(3), -np.ones(3), np.ones(3), np.array([1.0, 2.0, 1.0]), 0.0)
    with pytest.raises(ValueError, match="inconsistent"):
        _rules.DviPathStep(y, np.ones(2), np.ones(3), np.empty(0, np.intp), True, 1.0, 1e-9)
    dome = _rules.DomePathStep(y, np.ones(3), np.ones(3), np.empty(0, np.intp), True, True,
                               1.0, 1e-9)
    with pytest.raises(ValueError, match="set_upper first"):
        dome(np.zeros(3), -np.ones(3), np.ones(3), np.ones(3), 0.0)
    with pytest.raises(ValueError, match="length 3"):
        dome.set_upper(np.zeros(2), np.zeros(3), np.ones(3), 0.0)
    for gap in (-1e-3, np.nan, np.inf):
        with pytest.raises(ValueError, match="gap_b must be finite and >= 0"):
            dome.set_upper(np.zeros(3), -np.ones(3), np.ones(3), gap)
        dome.set_upper(np.zeros(3), -np.ones(3), np.ones(3), 0.0)
        with pytest.raises(ValueError, match="gap_a must be finite and >= 0"):
            dome(np.zeros(3), -np.ones(3), np.ones(3), np.ones(3), gap)


@pytest.mark.parametrize("rule", ["it", "bt2"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_budgeted_shat_is_safe_and_keeps_q_shat_exact(rule, fit_intercept):
    """BT2/IT with at most ``shat_budget`` changes of s-hat per step (the
    path's cap on Q s columns): Q s stays the fresh product, s moves by at
    most the budget, and no sample is screened wrongly (exact optima)."""
    from _reference import svc_margins
    rng = np.random.default_rng(11)
    n = 40
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    gamma = 1.0 / 3
    K = np.exp(-gamma * np.sum((X[:, None] - X[None]) ** 2, axis=2))
    Q = y[:, None] * y[None] * K
    data = ScreeningData(X, y, kernel="rbf", gamma=gamma, fit_intercept=fit_intercept)
    state, c_prev = None, 0.05
    alpha_prev, _ = exact_svc(K, y, np.full(n, c_prev), fit_intercept)
    for c in (0.07, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2):
        result = screen(data, alpha_prev, Q @ alpha_prev - 1, c_prev, c, rule,
                        shat_state=state, shat_budget=3)
        previous = state.shat if state is not None else np.zeros(n, bool)
        assert np.count_nonzero(result.shat_state.shat != previous) <= 3
        state = result.shat_state
        np.testing.assert_allclose(state.qs, Q @ (state.shat * c), atol=1e-10)
        alpha, b_range = exact_svc(K, y, np.full(n, c), fit_intercept)
        assert not np.any(result.screened_zero & (alpha > 1e-9))
        assert not np.any(result.screened_bound & (alpha < c - 1e-9))
        for b in (b_range if fit_intercept else (0.0,)):
            margins = svc_margins(K, y, alpha, b)
            assert np.all(result.lower <= margins + 1e-7)
            assert np.all(margins <= result.upper + 1e-7)
        alpha_prev, c_prev = alpha, c


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 40), fit_intercept=st.booleans(),
       weighted=st.booleans(), centre=st.booleans(), rule=st.sampled_from(["ssnsv", "essnsv"]),
       q_a=st.sampled_from([0.3, 0.8, 1.0]), q_b=st.sampled_from([1.0, 1.5, 4.0]))
def test_path_dome_step_equals_screen_dome(seed, n, fit_intercept, weighted, centre, rule,
                                           q_a, q_b):
    """The path's SSNSV/ESSNSV step (``_rules.DomePathStep``, one typed call)
    gives screen_dome()'s sets, and refuses boxes out of order."""
    from svmscreen.screening import screen_dome
    _, X, y, hi, K = _rbf_problem(seed, n, weighted)
    Q = y[:, None] * y[None] * K
    hi_a, hi_b = q_a * hi, q_b * hi
    alpha_a = exact_svc(K, y, hi_a, fit_intercept)[0]
    alpha_b = exact_svc(K, y, hi_b, fit_intercept)[0]
    data = ScreeningData(X, y, kernel="rbf", gamma=0.5, fit_intercept=fit_intercept,
                         centre=centre, centre_sample=5)
    y_gap = y if fit_intercept else None
    gap_a, gap_b = (gap_of(alpha, Q @ alpha - 1.0, -np.ones(n), np.zeros(n), box, y_gap).gap
                    for alpha, box in ((alpha_a, hi_a), (alpha_b, hi_b)))
    step = data.dome_path_step(rule)
    step.set_upper(alpha_b, Q @ alpha_b - 1.0, hi_b, gap_b)
    zero, bound = step(alpha_a, Q @ alpha_a - 1.0, hi_a, hi, gap_a)
    want = screen_dome(data, alpha_a, Q @ alpha_a - 1.0, hi_a, alpha_b, Q @ alpha_b - 1.0,
                       hi_b, hi, rule=rule)
    assert zero.dtype == bool and bound.dtype == bool
    assert zero.tolist() == want.screened_zero.tolist()
    assert bound.tolist() == want.screened_bound.tolist()
    with pytest.raises(ValueError, match="hi_a <= hi <= hi_b"):
        step(alpha_a, Q @ alpha_a - 1.0, hi_a, 1.01 * hi_b, gap_a)


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 40), fit_intercept=st.booleans(),
       weighted=st.booleans(), rule=st.sampled_from(["it", "bt2"]),
       kernel=st.sampled_from(["rbf", "linear"]), budget=st.sampled_from([None, 0, 2]))
def test_path_two_ball_step_carries_state_like_screen(seed, n, fit_intercept, weighted, rule,
                                                      kernel, budget):
    """BT2/IT along a path: the typed step kept from one C to the next
    (``_rules.TwoBallPathStep``, its s-hat and Q s carried inside) gives the
    sets of screen() fed with the previous result's shat_state, and its Q s
    is the fresh product Q (s hi)."""
    rng, X, y, hi_unit, K = _rbf_problem(seed, n, weighted)
    if kernel == "linear":
        K = X @ X.T
    Q = y[:, None] * y[None] * K
    data = ScreeningData(X, y, kernel=kernel, gamma=0.5, fit_intercept=fit_intercept,
                         centre_sample=5)
    step = data.two_ball_path_step(rule, budget=budget)
    state = None
    c_prev = 0.2
    alpha = exact_svc(K, y, c_prev * hi_unit, fit_intercept)[0]
    for c in (0.3, 0.5, 0.9, 2.0):
        grad = Q @ alpha - 1.0
        want = screen(data, alpha, grad, c_prev * hi_unit, c * hi_unit, rule,
                      shat_state=state, shat_budget=budget)
        gap = want.gap_ref
        b_ref = duality_gap(alpha, grad, -np.ones(n), np.zeros(n), c_prev * hi_unit,
                            y if fit_intercept else None).b
        zero, bound = step(alpha, grad, c_prev * hi_unit, c * hi_unit, gap,
                           b_ref if fit_intercept else 0.0)
        assert zero.tolist() == want.screened_zero.tolist()
        assert bound.tolist() == want.screened_bound.tolist()
        shat, qs, hi = step.state()
        assert shat.tolist() == want.shat_state.shat.tolist()
        np.testing.assert_allclose(qs, Q @ (shat * hi), atol=1e-10)
        state, c_prev = want.shat_state, c
        alpha = exact_svc(K, y, c * hi_unit, fit_intercept)[0]
    with pytest.raises(ValueError, match="proportional"):
        step(alpha, Q @ alpha - 1.0, hi_unit, np.linspace(1.0, 2.0, n), 0.0, 0.0)
