"""Ramp-loss SVM by CCCP: each step against an exact QP, monotone objective,
screening on = off, degenerate cases and errors."""
import warnings

import numpy as np
import pytest
from _reference import exact_svc, exact_svc_dual, svc_margins
from conftest import examples, load_dataset
from hypothesis import given, settings
from hypothesis import strategies as st

import svmscreen
from svmscreen._kernels import Kernel
from svmscreen.ramp import outlier_weights, ramp_loss


def noisy_blobs(n, flip, seed, d=3):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, d)) + 1.2 * y[:, None]
    flipped = rng.choice(n, int(flip * n), replace=False)
    y[flipped] *= -1
    return X, y


def reference_cccp(K, y, C, s, max_outer=50, slack=0.0):
    """CCCP with every inner problem solved exactly (notes/seed_001 §1):
    min 1/2 b'Qb + p'b, p = -1 - Q mu, y'b = y'mu, 0 <= b <= C (a number,
    or C_i per sample), by exact_svc_dual; the intercept from the free
    samples, or the midpoint of the optimal interval when there are none,
    as LIBSVM; the tie rule mu_i = C_i [z_i < s - slack].  Returns, per
    step, (outliers, J, inner objective)."""
    n = y.size
    C_i = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,))
    Q = y[:, None] * y[None, :] * K
    mu = np.zeros(n)
    history = []
    for _ in range(max_outer):
        beta, (b_lo, b_hi) = exact_svc_dual(Q, -1.0 - Q @ mu, C_i, y, delta=float(y @ mu))
        coef = beta - mu
        q = Q @ coef
        margins = q + y * (0.5 * (b_lo + b_hi))
        J = 0.5 * coef @ q + float(np.sum(C_i * ramp_loss(margins, s)))
        history.append((np.flatnonzero(mu), J, 0.5 * beta @ Q @ beta + (-1.0 - Q @ mu) @ beta))
        new_mu = outlier_weights(margins, C_i, s, slack=slack)
        if np.array_equal(new_mu, mu):
            break
        mu = new_mu
    return history


@pytest.mark.parametrize("kernel, C, s", [("linear", 1.0, 0.0), ("rbf", 1.0, 0.0),
                                          ("rbf", 10.0, -0.5)])
def test_each_step_matches_exact_qp(kernel, C, s):
    X, y = noisy_blobs(40, 0.2, seed=3)
    result = svmscreen.train_ramp(X, y, C=C, s=s, kernel=kernel, gamma=0.5,
                                  screening=None, tol=1e-10)
    K = Kernel(X, kernel, 0.5, 0.0, 3).rows(np.arange(40))
    reference = reference_cccp(K, y, C, s)
    assert result.n_outer == len(reference)
    for t, (outliers, J, _) in enumerate(reference):
        np.testing.assert_array_equal(result.outlier_history[t], outliers)
        assert result.objective[t] == pytest.approx(J, rel=1e-8)


@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 10_000), C=st.sampled_from([0.1, 1.0, 10.0]),
       s=st.sampled_from([0.0, -0.3, -1.0]))
def test_objective_never_increases(seed, C, s):
    X, y = noisy_blobs(50, 0.15, seed)
    result = svmscreen.train_ramp(X, y, C=C, s=s, gamma=1.0, screening=None, tol=1e-8)
    J = result.objective
    assert np.all(np.diff(J) <= 1e-7 * np.maximum(1.0, np.abs(J[:-1])))
    assert np.all(np.isfinite(J)) and np.isfinite(result.model.intercept_)


def test_objective_decreases_on_real_data_and_resists_flips():
    X, y = load_dataset("australian_scale")
    rng = np.random.default_rng(1)
    noisy = np.array(y)
    flipped = rng.choice(y.size, y.size // 5, replace=False)
    noisy[flipped] *= -1
    result = svmscreen.train_ramp(X, noisy, C=1.0, screening=None, tol=1e-6)
    assert result.converged and result.n_outer >= 2
    assert np.all(np.diff(result.objective) <= 1e-9 * np.abs(result.objective[:-1]))
    # most of the flipped labels end up treated as outliers
    assert np.isin(flipped, result.outlier_history[-1]).mean() > 0.5


def test_first_step_is_the_hinge_svm():
    X, y = load_dataset("heart_scale")
    with pytest.warns(svmscreen.ConvergenceWarning, match="max_outer"):
        result = svmscreen.train_ramp(X, y, C=1.0, screening=None, tol=1e-8, max_outer=1)
    hinge = svmscreen.fit_binary(X, y, C=1.0, tol=1e-8)
    # one step = the standard SVM; its model is the hinge model
    np.testing.assert_allclose(result.model.decision_function(X), hinge.decision_function(X),
                               atol=1e-6)


@pytest.mark.parametrize("screening", [None, "safe"])
def test_whole_class_of_outliers_gives_a_finite_constant_model(screening):
    # notes/seed_001 §6 pitfall 9: RBF gamma 5, C = 0.1, 15% flips; if every
    # positive ends up an outlier the feasible set is a single point.  The
    # case must occur in some of the seeds, not just be tried.
    all_outliers = 0
    for seed in range(8):
        X, y = noisy_blobs(100, 0.15, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = svmscreen.train_ramp(X, y, C=0.1, gamma=5.0, screening=screening)
        assert np.isfinite(result.model.intercept_)
        assert np.all(np.isfinite(result.objective))
        assert np.all(np.isfinite(result.model.decision_function(X)))
        final = result.outlier_history[result.model_step]
        all_outliers += any(np.all(np.isin(np.flatnonzero(y == label), final))
                            for label in (-1.0, 1.0))
    assert all_outliers > 0


@pytest.mark.parametrize("screening", [None, "safe"])
def test_no_free_support_vector(screening):
    # tiny C: every support vector sits at its bound (asserted, not assumed)
    X, y = noisy_blobs(30, 0.2, seed=5)
    box = 1e-4
    result = svmscreen.train_ramp(X, y, C=box, gamma=0.5, screening=screening)
    coef = np.abs(result.model.alpha_)
    assert not np.any((coef > 1e-12 * box) & (coef < box * (1 - 1e-12)))
    assert np.isfinite(result.model.intercept_) and result.converged


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(s=0.5), ValueError, "s must be"),
    (dict(s=np.nan), ValueError, "s must be"),
    (dict(s="0"), TypeError, "s must be"),
    (dict(C=-1.0), ValueError, "> 0"),
    (dict(max_outer=0), ValueError, "max_outer"),
    (dict(screening="always"), ValueError, "screening"),
    (dict(C=[5.0, 100.0]), TypeError, "one number"),
    (dict(C=True), TypeError, "one number"),
])
def test_bad_input(kwargs, error, match):
    X, y = noisy_blobs(20, 0.1, seed=0)
    with pytest.raises(error, match=match):
        svmscreen.train_ramp(X, y, **kwargs)


@pytest.mark.parametrize("max_outer", [0, -1, 1.5, None])
def test_ramp_path_checks_max_outer(max_outer):
    X, y = noisy_blobs(20, 0.1, seed=0)
    with pytest.raises(ValueError, match="max_outer"):
        svmscreen.train_ramp_path(X, y, C=[1.0, 2.0], max_outer=max_outer)


def test_s_takes_any_real_number():
    # C took a Fraction; s refused one as "not a real number"
    from fractions import Fraction
    X, y = noisy_blobs(20, 0.1, seed=0)
    for s in (Fraction(-1, 2), np.float32(-0.5)):
        np.testing.assert_array_equal(svmscreen.train_ramp(X, y, s=s).model.alpha_,
                                      svmscreen.train_ramp(X, y, s=-0.5).model.alpha_)


def test_single_class_is_an_error():
    X, _ = noisy_blobs(20, 0.1, seed=0)
    with pytest.raises(ValueError, match="two classes"):
        svmscreen.train_ramp(X, np.ones(20))


def test_ramp_path_equals_independent_fits():
    X, y = noisy_blobs(80, 0.2, seed=11)
    grid = [0.1, 1.0, 10.0]
    results = svmscreen.train_ramp_path(X, y, grid, gamma=0.5, screening=None, tol=1e-9)
    for C, result in zip(grid, results):
        alone = svmscreen.train_ramp(X, y, C=C, gamma=0.5, screening=None, tol=1e-9)
        assert result.n_outer == alone.n_outer
        assert result.objective[-1] == pytest.approx(alone.objective[-1], rel=1e-8)
        for a, b in zip(result.outlier_history, alone.outlier_history):
            np.testing.assert_array_equal(a, b)


def test_verbose_prints_each_cccp_step_and_the_grid(capsys):
    X, y = noisy_blobs(80, 0.2, seed=11)
    result = svmscreen.train_ramp(X, y, C=10.0, gamma=0.5, verbose=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == result.n_outer >= 2
    for step, (line, objective, n_outliers) in enumerate(
            zip(lines, result.objective, result.n_outliers), start=1):
        assert line == (f"ramp, C = 10: step {step}: objective {objective:.10g}, "
                        f"{n_outliers} outliers")
    svmscreen.train_ramp_path(X, y, [1.0, 3.0, 10.0], gamma=0.5, verbose=True)
    err = capsys.readouterr().err
    assert "ramp path:" in err and "3/3" in err.split("ramp path:")[-1], err


def test_warm_steps_shrink_early_with_the_same_result(monkeypatch):
    """A CCCP step warm-started from the last shrinks first after
    WARM_FIRST_SHRINK iterations (as the path's solves do): on bench_ramp's
    ijcnn1 cell (2000 rows, gamma 0.5, C 10) the select work falls by a
    third against LIBSVM's first round at iteration 1000 (8.7M -> 5.9M
    element visits), and CCCP takes the same steps to the same objective."""
    import svmscreen.ramp as ramp
    X, y = load_dataset("ijcnn1", max_rows=2000)
    options = dict(C=10.0, gamma=0.5, s=0.0, tol=1e-6, screening="safe")
    early = svmscreen.train_ramp(X, y, **options)
    monkeypatch.setattr(ramp, "WARM_FIRST_SHRINK", 1000)
    libsvm_round = svmscreen.train_ramp(X, y, **options)
    assert early.n_outer == libsvm_round.n_outer > 2
    for a, b in zip(early.outlier_history, libsvm_round.outlier_history):
        np.testing.assert_array_equal(a, b)
    assert early.objective[-1] == pytest.approx(libsvm_round.objective[-1], rel=1e-7)
    assert early.work_select.sum() < 0.75 * libsvm_round.work_select.sum()


def test_ramp_verbose_is_a_flag():
    X, y = load_dataset("heart_scale")
    for run in (svmscreen.train_ramp, svmscreen.train_ramp_path):
        with pytest.raises(TypeError, match="verbose must be True or False"):
            run(X, y, 1.0, verbose="no")


def test_round_off_free_variable_does_not_decide_the_intercept():
    """A CCCP step with no free support vector has an interval of optimal
    intercepts.  Unscreened, round-off left beta_24 at 9.7e-17 on its box
    [0, 0.1]; counted as free, it set b to its end of the interval, where
    the screened solve (beta_24 = 0 exactly) took the midpoint, and the two
    runs took different outlier sequences from step 5 on."""
    rng = np.random.default_rng(1962)
    n = 38
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, 1)) + 1.0 * y[:, None]
    y[rng.choice(n, int(0.1 * n), replace=False)] *= -1
    rows = rng.choice(n, n // 3)
    X, y = np.vstack([X, X[rows]]), np.concatenate([y, y[rows]])
    options = dict(C=0.1, s=-0.5, kernel="linear", tol=1e-10,
                   class_weight={-1.0: 0.5, 1.0: 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = svmscreen.train_ramp(X, y, screening=None, **options)
        screened = svmscreen.train_ramp(X, y, screening="safe", **options)
    assert len(plain.outlier_history) == len(screened.outlier_history)
    for a, b in zip(plain.outlier_history, screened.outlier_history):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(plain.objective, screened.objective, rtol=1e-10)


def test_cccp_cycle_ends_at_its_lowest_objective():
    """At a loose tol the outlier sets can return to an earlier one (each
    rise of J within the inner gap); the loop had run to max_outer and
    returned the last iterate.  It now stops at the repeat, with a warning,
    at the lowest objective seen."""
    rng = np.random.default_rng(224)
    n = int(rng.integers(10, 40))
    y = np.where(rng.random(n) < 0.6, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + 0.5 * y[:, None]
    C = float(rng.choice([1e-3, 0.1, 10.0]))
    with pytest.warns(svmscreen.ConvergenceWarning, match="return to an earlier set"):
        result = svmscreen.train_ramp(X, y, C=C, s=-1.0, kernel="linear", tol=0.1,
                                      screening=None)
    assert result.n_outer < 50 and not result.converged
    model = result.model
    w = model.dual_coef_.ravel() @ model.support_vectors_
    margins = y * model.decision_function(X)
    J = 0.5 * float(w @ w) + float(np.sum(C * ramp_loss(margins, -1.0)))
    assert J == pytest.approx(result.objective.min(), rel=1e-9)


def test_rise_of_the_objective_returns_the_lowest_step():
    """A rise of J beyond the inner gap (here a sigmoid kernel, where the
    inner problems are not convex) stops the loop; the model was the
    rejected step's, now the lowest step's, and its objective_ is that J."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.where(rng.random(40) < 0.5, -1.0, 1.0)
    X += y[:, None]
    with pytest.warns(svmscreen.ConvergenceWarning, match="objective rose"):
        result = svmscreen.train_ramp(X, y, kernel="sigmoid", screening=None)
    assert result.objective[-1] > result.objective.min()
    assert result.model_step == int(np.argmin(result.objective))
    assert result.model.objective_ == result.objective.min()
    # the repr describes that step, not the rejected last one
    k = result.model_step
    assert f"model_step={k}, objective={float(result.objective[k])!r}" in repr(result)
    K = np.tanh(X @ X.T / 3.0)                    # gamma 1/d, coef0 0
    margins = y * result.model.decision_function(X)
    coef = np.zeros(40)
    coef[result.model.support_] = result.model.dual_coef_.ravel()
    J = 0.5 * float(coef @ K @ coef) + float(np.sum(ramp_loss(margins, 0.0)))
    assert J == pytest.approx(result.objective.min(), rel=1e-9)


def test_inner_solves_at_max_iter_are_not_a_converged_fixed_point():
    """mu can stop changing between inner solves that all stopped at
    max_iter: not a CCCP fixed point, so converged is False, and the
    per-step status says why."""
    rng = np.random.default_rng(0)
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(40, 3)) + y[:, None]
    with pytest.warns(svmscreen.ConvergenceWarning, match="max_iter"):
        result = svmscreen.train_ramp(X, y, C=100.0, gamma=0.5, max_iter=1)
    assert not result.converged
    assert list(result.status) == ["max_iter"] * result.n_outer
    done = svmscreen.train_ramp(X, y, C=100.0, gamma=0.5)
    assert done.converged and set(done.status) == {"optimal"}
    assert done.model_step == done.n_outer - 1


def test_inner_round_off_stop_is_not_called_max_iter():
    """tol 1e-16 is below the gradient's round-off: the inner solves stop
    "round_off" (1308861), and the warning had said "reached max_iter"."""
    X, y = load_dataset("heart_scale")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = svmscreen.train_ramp(X[:100], y[:100], C=10.0, tol=1e-16, screening=None)
    assert set(result.status) == {"round_off"}
    messages = [str(w.message) for w in caught if issubclass(w.category,
                                                           svmscreen.ConvergenceWarning)]
    assert len(messages) == result.n_outer
    assert all("round-off" in m and "max_iter" not in m for m in messages)


def test_round_off_stop_with_gap_screening():
    """The same fit with the solver's gap screening (the default) and
    shrinking: a step that changed nothing came with variables shrunk, and
    the loop ran on for a screen that needs G whole and never came, to
    max_iter (10M iterations a step, 31 s)."""
    X, y = load_dataset("heart_scale")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = svmscreen.train_ramp(X, y, C=10.0, tol=1e-16, screening=None)
        screened = svmscreen.train_ramp(X, y, C=10.0, tol=1e-16, max_iter=1_000_000)
    assert set(plain.status) == set(screened.status) == {"round_off"}
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=1e-12)


def test_screening_counters_survive_a_put_back():
    """On an indefinite precomputed kernel (taken to be PSD) the KKT check
    puts back a sample fixed at the warm start; the step's counters were
    the unscreened re-solve's: screened_bound 0, frozen 1, n_screens 0."""
    rng = np.random.default_rng(0)
    y = np.where(rng.random(60) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(60, 3)) + y[:, None]
    K = np.tanh(0.5 * X @ X.T - 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = svmscreen.train_ramp(K, y, C=10.0, kernel="precomputed", tol=1e-6)
    step = int(np.flatnonzero(result.put_back)[0])
    assert result.screened_zero[step] + result.screened_bound[step] >= result.put_back[step]
    assert np.all(result.frozen >= 0)
    assert np.all(result.n_screens >= 1) and np.all(result.screen_seconds > 0)


def test_ties_at_s_give_zero_whatever_the_solver_noise():
    """The hinge optimum at C = 100 has w = 0, b = 1: every negative sits
    exactly at margin -1 = s, and the solver leaves them tol-level noise on
    either side.  With a strict z < s the path and a single train_ramp took
    different outlier sequences (J 800 against 637.7); ties now give 0."""
    rng = np.random.default_rng(310)
    y = np.where(rng.random(12) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(12, 3)) + 1.0 * y[:, None]
    y[rng.choice(12, 3, replace=False)] *= -1
    options = dict(s=-1.0, kernel="linear", tol=1e-10, screening=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = svmscreen.train_ramp_path(X, y, [0.01, 100.0], **options)
        alone = svmscreen.train_ramp(X, y, 100.0, **options)
    assert [h.tolist() for h in path[-1].outlier_history] == \
        [h.tolist() for h in alone.outlier_history]
    assert path[-1].objective[-1] == pytest.approx(alone.objective[-1], rel=1e-9)


def test_overflowing_objective_is_an_error():
    X, y = load_dataset("heart_scale")
    with pytest.raises(ValueError, match="overflows float64"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # (max_iter: the solve at 1e200 runs to LIBSVM's 10M cap, 15 s;
            # the check is of the objective, whatever the solve reached)
            svmscreen.train_ramp(X, y, 1e200, kernel="linear", max_iter=10_000)


def test_no_constant_model_warning_for_a_large_C():
    # w^2 was compared with 1e-12 |J|: at C = 1e20 (J = 1.3e18) a model
    # with 100 support vectors and decision values from -8 to 8 was called
    # constant.
    X, y = load_dataset("heart_scale")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        result = svmscreen.train_ramp(X, y, C=1e20)
    assert np.ptp(result.model.decision_function(X)) > 1.0


def test_constant_model_warning_says_may_where_w_is_above_its_round_off():
    """Features offset by 1e6 make the RBF round-off bound (1 + 4 gamma
    max ||x||^2) huge: w^2 = 36.6 sits below 10 times it, and the warning
    said "w = 0: the model is constant" of a model whose decision values run
    from -1 to 1.13 (helper X's report).  A w^2 at most the bound itself is
    still called 0 (tie_problem: the hinge optimum has w = 0)."""
    rng = np.random.default_rng(0)
    y = np.where(rng.random(60) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(60, 4)) + y[:, None] + 1e6
    with pytest.warns(UserWarning, match="may be constant") as caught:
        result = svmscreen.train_ramp(X, y, gamma=1.0)
    assert not any("w = 0" in str(w.message) for w in caught)
    assert np.ptp(result.model.decision_function(X)) > 2.0
    X, y, options = tie_problem()
    with pytest.warns(UserWarning, match=r"w = 0 \(the hinge optimum itself\): the model is "
                                         "constant"):
        svmscreen.train_ramp(X, y, **options)


def weighted_collapse(seed):
    """A small problem where one class weighs 30-1000 and the other 0.1-3,
    with s = -1 and a linear or quadratic kernel: the hinge optimum often has
    w = 0, b = +-1, so the light class sits exactly at margin -1 = s (a tie)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 80))
    d = int(rng.integers(1, 4))
    y = np.where(rng.random(n) < rng.uniform(0.3, 0.7), 1.0, -1.0)
    X = rng.normal(size=(n, d)) + rng.uniform(0.3, 2) * y[:, None]
    y[rng.choice(n, int(rng.uniform(0, 0.3) * n), replace=False)] *= -1
    heavy = float(rng.choice([-1.0, 1.0]))
    class_weight = {heavy: float(10 ** rng.uniform(1.5, 3)),
                    -heavy: float(10 ** rng.uniform(-1, 0.5))}
    options = dict(C=float(10 ** rng.uniform(-2, 1)), s=-1.0,
                   kernel=str(rng.choice(["linear", "poly"])),
                   gamma=float(rng.choice([0.05, 0.5])), coef0=1.0, degree=2,
                   class_weight=class_weight, tol=1e-10, shrinking=bool(rng.random() < 0.5))
    return X, y, options


def exact_outlier_sets(X, y, options):
    """reference_cccp's outlier sets for train_ramp's ``options`` (class
    weights as per-sample boxes, tie slack tol)."""
    K = Kernel(X, options["kernel"], options["gamma"], options["coef0"],
               options["degree"]).rows(np.arange(y.size))
    weights = options["class_weight"]
    C_i = options["C"] * np.where(y > 0, weights[1.0], weights[-1.0])
    return [outliers.tolist() for outliers, _, _ in
            reference_cccp(K, y, C_i, options["s"], slack=options["tol"])]


def assert_same_cccp(plain, screened, rtol=1e-8, atol=0.0):
    assert [h.tolist() for h in plain.outlier_history] == \
        [h.tolist() for h in screened.outlier_history]
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=rtol, atol=atol)


def objective_slack(y, options):
    """How far apart two CCCP objectives at the same outlier sets may be
    when both inner solves stop at ``options["tol"]``: each stops with a
    duality gap of at most tol sum_i C_i, so 2 tol sum_i C_i (class weights
    as per-sample boxes).  On weighted_collapse's heavy classes this is
    above an rtol of 1e-8: seed 108 (sum C_i = 2910) differed by 1.3e-8,
    1.1e-8 relative, on the packages of 2026-11 (numpy 2.4.6, scipy
    1.17.1), within its slack of 5.8e-7."""
    weights = options["class_weight"]
    boxes = options["C"] * np.array([weights[label] for label in y])
    return 2.0 * options["tol"] * boxes.sum()


def tie_problem():
    """(X, y, train_ramp options) whose hinge optimum has w = 0 and b = 1
    (class weights 1.6 and 128, quadratic kernel, s = -1, tol 1e-10): its
    59 negatives sit exactly at margin s."""
    rng = np.random.default_rng(1476)
    n, d = int(rng.integers(20, 150)), int(rng.integers(1, 6))
    y = np.where(rng.random(n) < rng.uniform(0.2, 0.8), 1.0, -1.0)
    X = rng.normal(size=(n, d)) + rng.uniform(0.3, 2) * y[:, None]
    y[rng.choice(n, int(rng.uniform(0, 0.3) * n), replace=False)] *= -1
    rows = rng.choice(n, n // 4) if rng.random() < 0.3 else None
    if rows is not None:
        X, y = np.vstack([X, X[rows]]), np.concatenate([y, y[rows]])
    if rng.random() < 0.3:
        X = np.round(X, 1)
    C, weights = 2.138226490163679, {-1.0: 1.6034341508668555, 1.0: 128.59834797859594}
    return X, y, dict(C=C, s=-1.0, kernel="poly", gamma=0.05, coef0=1.0, degree=2,
                      class_weight=weights, tol=1e-10, shrinking=False)


def test_ties_at_s_survive_noise_above_tol():
    """tie_problem: exact CCCP stops after the first step with no outlier.
    The inner solve at tol = 1e-10 leaves the 59 tied margins up to 1.3e-10
    below s, beyond the tie slack tol: screening off took [] -> [31] ->
    [31, 84], screening on [] -> [31, 84]."""
    X, y, options = tie_problem()
    C, weights = options["C"], options["class_weight"]
    # exact CCCP: the hinge optimum's margins, none below s
    K = Kernel(X, "poly", 0.05, 1.0, 2).rows(np.arange(y.size))
    C_i = C * np.where(y > 0, weights[1.0], weights[-1.0])
    alpha, (b_lo, b_hi) = exact_svc(K, y, C_i)
    margins = svc_margins(K, y, alpha, 0.5 * (b_lo + b_hi))
    assert np.count_nonzero(np.abs(margins + 1.0) < 1e-12) == 59
    assert margins.min() > -1.0 - 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = svmscreen.train_ramp(X, y, screening=None, **options)
        screened = svmscreen.train_ramp(X, y, screening="safe", **options)
    for result in (plain, screened):
        assert result.n_outer == 1 and result.outlier_history[0].size == 0
        assert result.n_refine[0] > 0
    assert_same_cccp(plain, screened)


def test_screening_keeps_the_outliers_of_weighted_collapses():
    """Seeded random problems built to have ties at s (weighted_collapse):
    screening on and off take the same outlier sets and reach the same
    objectives.  Before near-tie margins were re-solved, seeds 134, 165, 224,
    238, 313, 372, 467, 500, 551 and 566 of these 600 took different sets;
    there, both now take exact CCCP's."""
    for seed in range(600):
        X, y, options = weighted_collapse(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = svmscreen.train_ramp(X, y, screening=None, **options)
            screened = svmscreen.train_ramp(X, y, screening="safe", **options)
        try:
            assert_same_cccp(plain, screened, atol=objective_slack(y, options))
            if seed in (134, 165, 224, 238, 313, 372, 467, 500, 551, 566):
                assert [h.tolist() for h in plain.outlier_history] == \
                    exact_outlier_sets(X, y, options)
        except AssertionError as error:
            raise AssertionError(f"seed {seed}: {error}") from None


def test_near_tie_resolves_stay_within_max_iter_and_count_frozen_once():
    # The re-solves had a budget of their own on top of max_iter (a step
    # ran 854 iterations at max_iter=800), and each re-solve's frozen
    # samples were added to the step's (177 frozen of 173 samples).
    X, y, options = tie_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for max_iter in (760, 800):
            result = svmscreen.train_ramp(X, y, screening=None, max_iter=max_iter, **options)
            assert np.all(result.n_iter <= max_iter)
        result = svmscreen.train_ramp(X, y, screening="safe", **options)
    assert result.n_refine.max() > 0
    assert np.all(result.frozen + result.screened_zero + result.screened_bound <= y.size)


def test_ramp_path_refines_its_warm_steps_as_train_ramp():
    # The re-solves' budget was the step's own iterations + 10 n: the path's
    # first step, warm from its hinge solution, takes 0, so its re-solve was
    # dropped, and the path took sample 96 (exact margin 0.22 tol below the
    # edge) as no outlier where train_ramp and exact CCCP take it.
    X, y = load_dataset("diabetes_scale", 400)
    y = np.array(y)
    y[np.random.default_rng(0).choice(y.size, y.size // 10, replace=False)] *= -1
    options = dict(s=-1.0, gamma=0.05, tol=1e-6, class_weight={1.0: 20.0, -1.0: 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = svmscreen.train_ramp_path(X, y, [0.1], **options)[0]
        single = svmscreen.train_ramp(X, y, 0.1, **options)
    assert [h.tolist() for h in path.outlier_history] == \
        [h.tolist() for h in single.outlier_history]
    assert 96 in single.outlier_history[1]


def test_ramp_path_warns_at_each_C():
    # CCCP's warnings did not name C: under the default filter the second
    # C's were dropped as repeats of the first's
    rng = np.random.default_rng(0)
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(40, 3)) + y[:, None]
    y[:5] *= -1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        svmscreen.train_ramp_path(X, y, [1.0, 100.0], gamma=0.5, max_iter=3, max_outer=2,
                                  tol=1e-8)
    messages = [str(w.message) for w in caught]
    for C in ("C=1:", "C=100:"):
        assert any(m.startswith(C) and "did not converge in max_outer" in m for m in messages)


@pytest.mark.parametrize("run", [svmscreen.train_ramp, svmscreen.train_ramp_path])
def test_box_overflow_names_C_and_class_weight(run):
    # the boxes were built at C = 1 and only the solver saw C * weight
    # overflow: "hi must be finite", naming no argument
    X, y = noisy_blobs(20, 0.1, seed=0)
    # (only class_weight, unless sample_weight is given)
    with pytest.raises(ValueError, match="C=1e\\+300 times class_weight overflows"):
        run(X, y, 1e300, class_weight={1.0: 1e10, -1.0: 1.0})
    with pytest.raises(ValueError, match="C=1e\\+300 times class_weight and sample_weight "
                                         "overflows"):
        run(X, y, 1e300, sample_weight=np.full(20, 1e10))


def test_screening_allowances_at_the_largest_C_raise_no_overflow_warning():
    # sum_i C_i overflows at C = 1e308: the rule's allowances are infinite
    # (nothing certified, safe), but numpy's overflow warning leaked out of
    # every CCCP step
    X, y = noisy_blobs(30, 0.0, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = svmscreen.train_ramp(X, y, 1e308, screening="safe")
    plain = svmscreen.train_ramp(X, y, 1e308, screening=None)
    assert result.objective[-1] == plain.objective[-1]


def test_repr_shows_plain_numbers():
    # A numpy C (or J) showed as np.float64(...) in the reprs, unlike
    # fit_binary's and the ramp path's models.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    result = svmscreen.train_ramp(X, y, C=np.float32(2.0), gamma="scale")
    assert type(result.model.C) is float and type(result.model.gamma) is float
    assert "np." not in repr(result) and "np." not in repr(result.model)


# ------------------- CCCP against exact inner QPs, screening on and off
@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 10_000), kernel=st.sampled_from(["linear", "rbf"]),
       C=st.sampled_from([0.1, 1.0, 10.0]), s=st.sampled_from([0.0, -0.5]),
       weight=st.sampled_from([1.0, 2.0]))
def test_screened_cccp_steps_match_exact_qp_and_unscreened(seed, kernel, C, s, weight):
    """Issue 5 on random problems: with screening ON and OFF, every CCCP
    step's outliers and ramp objective equal those of CCCP with each inner
    problem solved exactly (1e-8 relative), nothing is put back, and J never
    increases."""
    X, y = noisy_blobs(30, 0.2, seed)
    if np.all(y == y[0]):
        y[0] = -y[0]
    K = Kernel(X, kernel, 0.5, 0.0, 3).rows(np.arange(30))
    C_i = C * np.where(y > 0, weight, 1.0)
    reference = reference_cccp(K, y, C_i, s)
    runs = {}
    for screening in (None, "safe"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # a constant model is a valid end
            runs[screening] = svmscreen.train_ramp(
                X, y, C=C, s=s, kernel=kernel, gamma=0.5, screening=screening, tol=1e-10,
                class_weight={1.0: weight})
    for screening, result in runs.items():
        assert result.n_outer == len(reference), screening
        for t, (outliers, J, _) in enumerate(reference):
            np.testing.assert_array_equal(result.outlier_history[t], outliers)
            assert result.objective[t] == pytest.approx(J, rel=1e-8, abs=1e-10), (screening, t)
        assert result.put_back.sum() == 0
        J = result.objective
        assert np.all(np.diff(J) <= 1e-9 * np.maximum(1.0, np.abs(J[:-1])))


# ------------------- per-sample weights: C_i = C * class_weight[y_i] * sample_weight_i
def weighted_problem(seed, n=30, zeros=True):
    """noisy_blobs with integer sample weights 0-3 (0 only if ``zeros``),
    each class weighing something."""
    X, y = noisy_blobs(n, 0.2, seed)
    if np.all(y == y[0]):
        y[0] = -y[0]
    rng = np.random.default_rng(seed)
    weight = rng.integers(0 if zeros else 1, 4, n).astype(float)
    for label in (-1.0, 1.0):
        weight[np.flatnonzero(y == label)[0]] = 2.0
    return X, y, weight


def step_objectives_at_own_outliers(result, K, y, C_i, s):
    """For each CCCP step of ``result``, the ramp objective J at the exact
    optimum of its inner QP (exact_svc_dual, boxes [0, C_i]) with the
    step's own outlier weights mu_i = C_i [i an outlier of the step]."""
    Q = y[:, None] * y[None, :] * K
    objectives = []
    for outliers in result.outlier_history:
        mu = np.zeros(y.size)
        mu[outliers] = C_i[outliers]
        beta, (b_lo, b_hi) = exact_svc_dual(Q, -1.0 - Q @ mu, C_i, y, delta=float(y @ mu))
        coef = beta - mu
        q = Q @ coef
        margins = q + y * (0.5 * (b_lo + b_hi))
        objectives.append(0.5 * coef @ q + float(np.sum(C_i * ramp_loss(margins, s))))
    return np.array(objectives)


@pytest.mark.parametrize("screening", [None, "safe"])
@pytest.mark.parametrize("kernel, C, s", [("linear", 1.0, 0.0), ("rbf", 1.0, -0.3),
                                          ("rbf", 0.3, 0.0)])
def test_integer_sample_weights_repeat_samples(screening, kernel, C, s):
    """A sample of weight k is k copies of it: both runs start at beta = 0,
    and the copies' margins are equal, so their mu are too and every inner
    problem of the copies is the weighted one with each sample's betas
    summed.  Same steps, outliers (each copy of a weighted outlier) and J,
    the same decision function."""
    n_outliers = 0
    for seed in range(4):
        X, y, weight = weighted_problem(seed)
        copies = weight.astype(int)
        options = dict(C=C, s=s, kernel=kernel, gamma=0.5, tol=1e-10, screening=screening)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # a constant model is a valid end
            weighted = svmscreen.train_ramp(X, y, sample_weight=weight, **options)
            repeated = svmscreen.train_ramp(np.repeat(X, copies, axis=0),
                                            np.repeat(y, copies), **options)
        source = np.repeat(np.arange(y.size), copies)
        assert weighted.n_outer == repeated.n_outer, seed
        for ours, theirs in zip(weighted.outlier_history, repeated.outlier_history):
            np.testing.assert_array_equal(source[theirs], np.repeat(ours, copies[ours]))
        np.testing.assert_allclose(weighted.objective, repeated.objective, rtol=1e-8)
        np.testing.assert_allclose(weighted.model.decision_function(X),
                                   repeated.model.decision_function(X), atol=1e-7)
        assert weighted.put_back.sum() == repeated.put_back.sum() == 0
        n_outliers += weighted.n_outliers.sum()
    assert n_outliers > 0       # CCCP went beyond the hinge step


@pytest.mark.parametrize("screening", [None, "safe"])
def test_sample_weight_zero_drops_the_sample(screening):
    """A weight 0 gives the box [0, 0]: no influence on w or b, never an
    outlier, never a support vector; the fit equals the one without the
    sample (fixed gamma: "scale" reads every row of X)."""
    for seed in range(4):
        X, y, weight = weighted_problem(seed, n=40)
        # the zero-weight rows on the wrong side: outliers if they counted
        X[weight == 0] += 0.5 * y[weight == 0, None]
        y[weight == 0] *= -1
        keep = weight > 0
        options = dict(C=3.0, s=-0.3, gamma=0.5, tol=1e-10, screening=screening)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            weighted = svmscreen.train_ramp(X, y, sample_weight=weight, **options)
            dropped = svmscreen.train_ramp(X[keep], y[keep], sample_weight=weight[keep],
                                           **options)
        rows = np.flatnonzero(keep)
        # with weight 1 they are outliers: the weight 0 is what sets them aside
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            counted = svmscreen.train_ramp(X, y, sample_weight=np.maximum(weight, 1.0),
                                           **options)
        assert np.any(counted.mu[~keep])
        assert weighted.n_outer == dropped.n_outer
        for ours, theirs in zip(weighted.outlier_history, dropped.outlier_history):
            np.testing.assert_array_equal(ours, rows[theirs])
        np.testing.assert_allclose(weighted.objective, dropped.objective, rtol=1e-10)
        np.testing.assert_allclose(weighted.model.decision_function(X),
                                   dropped.model.decision_function(X), atol=1e-8)
        assert not np.any(weighted.mu[~keep]) and not np.any(weighted.model.alpha_[~keep])
        assert np.all(np.isin(weighted.model.support_, rows))


@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 10_000), kernel=st.sampled_from(["linear", "rbf"]),
       C=st.sampled_from([0.1, 1.0, 10.0]), s=st.sampled_from([0.0, -0.5]))
def test_sample_weighted_cccp_steps_match_exact_qp_and_unscreened(seed, kernel, C, s):
    """Real sample weights from 0.03 to 30, a fifth of them 0: with
    screening on and off, every CCCP step's outliers and J equal those of
    CCCP with each inner problem solved exactly with the boxes [0, C_i]
    (reference_cccp), each step's J equals the exact optimum of the inner
    QP at that step's own mu, nothing is put back (the screening's boxes
    and weighted intercept count are right), and J never increases."""
    X, y = noisy_blobs(30, 0.2, seed)
    if np.all(y == y[0]):
        y[0] = -y[0]
    rng = np.random.default_rng(seed)
    weight = 10 ** rng.uniform(-1.5, 1.5, y.size)
    weight[rng.random(y.size) < 0.2] = 0.0
    for label in (-1.0, 1.0):
        weight[np.flatnonzero(y == label)[0]] = 1.0
    K = Kernel(X, kernel, 0.5, 0.0, 3).rows(np.arange(30))
    C_i = C * weight
    reference = reference_cccp(K, y, C_i, s)
    for screening in (None, "safe"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # a constant model is a valid end
            result = svmscreen.train_ramp(X, y, C=C, s=s, kernel=kernel, gamma=0.5,
                                          sample_weight=weight, screening=screening,
                                          tol=1e-10)
        assert result.n_outer == len(reference), screening
        for t, (outliers, J, _) in enumerate(reference):
            np.testing.assert_array_equal(result.outlier_history[t], outliers)
            assert result.objective[t] == pytest.approx(J, rel=1e-8, abs=1e-10), (screening, t)
        np.testing.assert_allclose(result.objective,
                                   step_objectives_at_own_outliers(result, K, y, C_i, s),
                                   rtol=1e-8, atol=1e-10)
        assert result.put_back.sum() == 0
        J = result.objective
        assert np.all(np.diff(J) <= 1e-9 * np.maximum(1.0, np.abs(J[:-1])))


def test_screening_with_sample_weights_on_real_data():
    """Sample weights 0-7 on 12% flipped labels: screening on and off, and
    the ramp path, take the same outlier sets to the same objective; the
    rules freeze samples (they are exercised) and put back none."""
    X, y = load_dataset("diabetes_scale", 400)
    y = np.array(y)
    rng = np.random.default_rng(0)
    y[rng.choice(y.size, y.size // 8, replace=False)] *= -1
    weight = rng.choice([0.0, 0.5, 1.0, 2.0, 7.0], y.size)
    options = dict(s=-1.0, gamma=0.5, sample_weight=weight, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = svmscreen.train_ramp(X, y, 1.0, screening=None, **options)
        screened = svmscreen.train_ramp(X, y, 1.0, screening="safe", **options)
        path = svmscreen.train_ramp_path(X, y, [0.1, 1.0], **options)
    assert plain.n_outer > 2
    for result in (screened, path[-1]):
        assert_same_cccp(plain, result, rtol=1e-7)
        assert result.put_back.sum() == 0
    assert screened.frozen.sum() + screened.screened_zero.sum() + \
        screened.screened_bound.sum() > 0
    assert path[0].put_back.sum() == 0
    alone = svmscreen.train_ramp(X, y, 0.1, screening=None, **options)
    assert_same_cccp(alone, path[0], rtol=1e-7)


def test_ramp_path_with_integer_sample_weights_repeats_samples():
    X, y, weight = weighted_problem(7, n=40)
    copies = weight.astype(int)
    grid = [0.3, 3.0]
    options = dict(s=-0.5, gamma=0.5, tol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        weighted = svmscreen.train_ramp_path(X, y, grid, sample_weight=weight, **options)
        repeated = svmscreen.train_ramp_path(np.repeat(X, copies, axis=0),
                                             np.repeat(y, copies), grid, **options)
    for ours, theirs in zip(weighted, repeated):
        np.testing.assert_allclose(ours.objective, theirs.objective, rtol=1e-8)
        np.testing.assert_allclose(ours.model.decision_function(X),
                                   theirs.model.decision_function(X), atol=1e-7)


@pytest.mark.parametrize("run", [svmscreen.train_ramp, svmscreen.train_ramp_path])
@pytest.mark.parametrize("weight, error, match", [
    (np.ones(19), ValueError, r"sample_weight must be a finite array of shape \(20,\)"),
    (np.ones((20, 1)), ValueError, "sample_weight must be a finite array of shape"),
    (np.where(np.arange(20) == 3, -1.0, 1.0), ValueError, "sample_weight must be finite and >= 0"),
    (np.where(np.arange(20) == 3, np.nan, 1.0), ValueError, "sample_weight must be a finite"),
    (np.where(np.arange(20) == 3, np.inf, 1.0), ValueError, "sample_weight must be a finite"),
    (np.zeros(20), ValueError, "sample_weight is zero for every sample"),
    (["a"] * 20, TypeError, "sample_weight"),
])
def test_bad_sample_weight_names_it(run, weight, error, match):
    X, y = noisy_blobs(20, 0.1, seed=0)
    with pytest.raises(error, match=match):
        run(X, y, 1.0, sample_weight=weight)


def test_sample_weight_leaving_one_class_is_an_error():
    X, y = noisy_blobs(20, 0.1, seed=0)
    with pytest.raises(ValueError, match="leave only class"):
        svmscreen.train_ramp(X, y, sample_weight=(y > 0) * 1.0)


def test_sample_weight_is_not_modified():
    X, y, weight = weighted_problem(1)
    given = weight.copy()
    weight.flags.writeable = False       # a write would raise
    svmscreen.train_ramp(X, y, sample_weight=weight, gamma=0.5)
    svmscreen.train_ramp_path(X, y, [0.5, 1.0], sample_weight=weight, gamma=0.5)
    np.testing.assert_array_equal(weight, given)
    # a list and an integer array are taken as the float weights
    np.testing.assert_array_equal(
        svmscreen.train_ramp(X, y, sample_weight=given.astype(int).tolist(),
                             gamma=0.5).model.alpha_,
        svmscreen.train_ramp(X, y, sample_weight=given, gamma=0.5).model.alpha_)
