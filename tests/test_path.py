"""train_path: warm-started path against independent fits and LIBSVM, the
epsilon grid, cross-validation, and its error table."""
import re
import sys
import warnings
from decimal import Decimal

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import examples, load_dataset
from hypothesis import example, given, settings
from hypothesis import strategies as st

import svmscreen
from svmscreen.path import SCREENING_RULES, cv_splits, train_path


def libsvm_objective(X, y, C, gamma, tol, kernel="rbf", weight_pos=1.0):
    """LIBSVM's dual objective 1/2 a'Qa - sum a for a C-SVC (RBF or linear;
    ``weight_pos``: its -w1)."""
    from libsvm.svmutil import svm_train
    from svmscreen._kernels import Kernel
    t = {"linear": 0, "rbf": 2}[kernel]
    model = svm_train(np.asarray(y), X, f"-t {t} -c {float(C)!r} -g {float(gamma)!r} "
                      f"-w1 {float(weight_pos)!r} -e {tol} -q")
    support = np.asarray(model.get_sv_indices()) - 1
    coef = np.asarray(model.get_sv_coef()).ravel()
    K = Kernel(X[support].toarray(), kernel, gamma, 0.0, 3).rows(np.arange(support.size))
    return 0.5 * coef @ K @ coef - np.abs(coef).sum()


@pytest.mark.parametrize("name", ["heart_scale", "breast-cancer_scale"])
def test_path_matches_libsvm_at_every_C(name):
    X, y = load_dataset(name)
    gamma = 1.0 / X.shape[1]
    grid = np.geomspace(1e-2, 1e2, 9)
    path = train_path(X, y, C=grid, gamma=gamma, screening=None, tol=1e-6)
    for t, C in enumerate(grid):
        reference = libsvm_objective(X, y, C, gamma, 1e-6)
        assert path.objective[t] == pytest.approx(reference, rel=1e-6), C


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_path_equals_independent_fits(fit_intercept):
    X, y = load_dataset("australian_scale")
    grid = np.geomspace(0.05, 50, 6)
    path = train_path(X, y, C=grid, kernel="linear", fit_intercept=fit_intercept,
                      screening=None, tol=1e-6)
    for t, C in enumerate(grid):
        model = svmscreen.fit_binary(X, y, C=C, kernel="linear", fit_intercept=fit_intercept,
                                     tol=1e-6)
        assert path.objective[t] == pytest.approx(model.objective_, rel=1e-6)
        assert path.duality_gap[t] <= 1e-3 * abs(path.objective[t]) + 1e-6
        np.testing.assert_allclose(path.model(t).decision_function(X[:50]),
                                   model.decision_function(X[:50]), atol=1e-3)


def test_summary_keeps_no_solutions():
    X, y = load_dataset("heart_scale")
    full = train_path(X, y, n_C=8, screening=None)
    summary = train_path(X, y, n_C=8, screening=None, keep="summary")
    assert summary.alphas is None
    np.testing.assert_allclose(summary.objective, full.objective)
    with pytest.raises(ValueError, match="summar"):
        summary.model(0)


def test_repr_names_the_path_not_its_address():
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, C=[0.5, 2.0, 8.0], gamma=0.25, cv=3, keep="summary")
    assert repr(path) == (f"PathResult(n_C=3, C=[0.5 .. 8], classes=2, gamma=0.25, "
                          f"cv_folds=3, best_C={path.best_C!r})")
    three = np.where(np.arange(y.size) % 3 == 0, 2.0, y)
    multi = train_path(X, three, C=[1.0], gamma=0.25)
    assert repr(multi) == "OneVsOnePath(n_C=1, C=[1 .. 1], classes=3, gamma=0.25)"


def test_hard_margin_stops_solving():
    # Separable data: beyond some C no sample sits at its bound, and the
    # remaining C values reuse that solution without iterations.
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-3, 1, (20, 2)), rng.normal(3, 1, (20, 2))])
    y = np.r_[-np.ones(20), np.ones(20)]
    path = train_path(X, y, C=np.geomspace(1e-2, 1e4, 12), kernel="linear", screening=None,
                      tol=1e-8)
    last_solved = int(np.flatnonzero(path.n_iter > 0).max())
    assert path.n_bound[last_solved] == 0
    assert np.all(path.n_iter[last_solved + 1:] == 0)
    for t in range(last_solved + 1, len(path)):
        model = svmscreen.fit_binary(X, y, C=path.C[t], kernel="linear", tol=1e-8)
        assert path.objective[t] == pytest.approx(model.objective_, rel=1e-6)
    # each row keeps its own alpha: one array for the tail's rows changed
    # them all when one was edited in place
    kept = path.alphas[-1].copy()
    path.alphas[last_solved + 1] *= 0.0
    np.testing.assert_array_equal(path.alphas[-1], kept)
    np.testing.assert_array_equal(path.alphas[last_solved], kept)


def test_rows_after_the_hard_margin_report_their_own_gap():
    # The reused solution's gap grows with C (tol-level margin violations
    # weigh C each): each row reports the gap at its own C.
    X, y = load_dataset("breast-cancer_scale")
    path = train_path(X, y, C=np.geomspace(1.0, 1e6, 8), gamma=0.5, screening=None)
    reused = np.flatnonzero(path.n_iter == 0)
    assert reused.size >= 2
    sign = np.where(y == path.classes_[1], 1.0, -1.0)
    from svmscreen._kernels import Kernel, compute_layout
    K = Kernel(compute_layout(X), "rbf", 0.5, 0.0, 3).rows(np.arange(X.shape[0]))
    for t in reused:
        alpha = path.alphas[t]
        grad = sign * (K @ (sign * alpha)) - 1.0
        gap = svmscreen.duality_gap(alpha, grad, -np.ones(len(y)), 0.0, path.C[t], sign)
        assert path.duality_gap[t] == pytest.approx(gap.gap, rel=1e-6)
    assert path.duality_gap[reused[-1]] > 10 * path.duality_gap[reused[0]]


def test_epsilon_grid_is_epsilon_accurate():
    # Paper 000 App. D, eq. (35): for every C between two steps, the previous
    # solution scaled by C / C_prev is within epsilon (relative) of the
    # optimal dual value at C.
    from svmscreen._kernels import Kernel
    X, y = load_dataset("heart_scale")
    epsilon = 1e-2
    path = train_path(X, y, grid="epsilon", epsilon=epsilon, C_range=(1e-2, 10.0),
                      screening=None, tol=1e-8, fit_intercept=False)
    assert np.all(np.diff(path.C) > 0) and len(path) > 3
    sign = np.where(y == path.classes_[1], 1.0, -1.0)
    K = Kernel(X.toarray(), "rbf", path.gamma, 0.0, 3).rows(np.arange(X.shape[0]))

    def dual(alpha):
        z = sign * alpha
        return alpha.sum() - 0.5 * z @ K @ z

    for t in range(1, min(len(path), 8)):
        alpha_prev, C_prev = path.alphas[t - 1], path.C[t - 1]
        for C in np.linspace(C_prev, path.C[t], 4)[1:]:
            exact = svmscreen.fit_binary(X, y, C=C, fit_intercept=False, tol=1e-9)
            dual_exact = -exact.objective_
            assert (dual_exact - dual(alpha_prev * C / C_prev)) / dual_exact <= epsilon * (1 + 1e-6)


def test_epsilon_grid_certifies_every_step_at_the_default_tol():
    # At tol 1e-3 a solution's own duality gap can exceed epsilon times its
    # dual value, and eq. (35) then certifies no step from it (17 of 242
    # steps here had taken an uncertified step of C sqrt(epsilon)).  Every
    # step must be certified as eq. (35)'s reconstruction certifies it
    # (notes/seed_000_ogawa_tnnls.md sec. 4): at each C in between, the
    # previous solution's primal value at C bounds the optimum, and the
    # scaled previous solution's dual value is within epsilon of it.
    from svmscreen._kernels import Kernel, compute_layout
    X, y = load_dataset("heart_scale")
    epsilon = 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = train_path(X, y, grid="epsilon", epsilon=epsilon, screening=None)
    assert len(path) > 100 and path.C[-1] == 1e3
    sign = np.where(y == path.classes_[1], 1.0, -1.0)
    K = Kernel(compute_layout(X), "rbf", path.gamma, 0.0, 3).rows(np.arange(X.shape[0]))
    p = -np.ones(len(y))
    for t in range(1, len(path)):
        alpha_prev, C_prev = path.alphas[t - 1], path.C[t - 1]
        grad_prev = sign * (K @ (sign * alpha_prev)) + p
        for C in np.linspace(C_prev, path.C[t], 4)[1:]:
            primal = svmscreen.duality_gap(alpha_prev, grad_prev, p, 0.0, C, sign).primal
            s = C / C_prev
            dual = svmscreen.duality_gap(s * alpha_prev, s * (grad_prev - p) + p, p, 0.0, C,
                                         sign).dual
            # the step ends where the two sides are equal: round-off of the
            # values themselves (about 1e-12 relative) is allowed for
            assert primal - dual <= epsilon * dual + 1e-10 * primal, (t, C)


@pytest.mark.parametrize("kernel, coef0", [("sigmoid", 1.0), ("poly", -1.0), ("precomputed", 0.0)])
def test_epsilon_grid_refuses_a_kernel_that_need_not_be_psd(kernel, coef0):
    # epsilon_step certifies a step by weak duality, which a dual that is not
    # concave lacks: on sigmoid (gamma 2, coef0 1) the scaled solution was up
    # to 59 epsilon below a fit at a C in between, silently
    rng = np.random.default_rng(0)
    y = np.where(rng.random(40) < 0.5, 1, -1)
    X = rng.normal(size=(40, 3)) + y[:, None]
    if kernel == "precomputed":
        X = X @ X.T + 0.1 * rng.normal(size=(40, 40))      # not symmetric
    with pytest.raises(ValueError, match="grid='epsilon' needs a (positive semi-definite "
                                         "kernel|symmetric kernel matrix)"):
        train_path(X, y, grid="epsilon", kernel=kernel, coef0=coef0, gamma=2.0,
                   C_range=(1e-2, 1e2), epsilon=1e-2, screening=None)


def test_epsilon_below_its_floor_is_refused():
    X, y = load_dataset("heart_scale")
    with pytest.raises(ValueError, match=r"epsilon must be in \[1e-08, 1\)"):
        train_path(X, y, grid="epsilon", epsilon=1e-12)


def test_model_positions_are_checked():
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, n_C=5, screening=None)
    assert path.model(-1).C == path.C[-1]
    with pytest.raises(IndexError, match="out of range"):
        path.model(5)
    with pytest.raises(TypeError, match="integer position"):
        path.model(1.5)


def test_a_model_taken_from_the_path_shares_no_array_with_it():
    """Changing a model's alpha_ in place leaves the path, and the models
    it builds later, as they were (the model had held the path's own
    alpha; past the hard margin several C share one)."""
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, n_C=5, screening=None)
    kept = path.alphas[2].copy()
    model = path.model(2)
    model.alpha_ *= 0.0
    np.testing.assert_array_equal(path.alphas[2], kept)
    np.testing.assert_array_equal(path.model(2).alpha_, kept)


def test_cross_validation_and_best_model():
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, n_C=6, cv=3, screening=None)
    assert path.cv_accuracy.shape == (3, 6)
    assert np.all((path.cv_accuracy >= 0) & (path.cv_accuracy <= 1))
    best = path.best_index
    assert path.cv_mean[best] == path.cv_mean.max()
    model = path.best_model
    refit = svmscreen.fit_binary(X, y, C=path.best_C)
    np.testing.assert_allclose(model.decision_function(X), refit.decision_function(X),
                               atol=1e-2)
    # folds are fixed by random_state: the same call gives the same accuracy
    again = train_path(X, y, n_C=6, cv=3, screening=None)
    np.testing.assert_array_equal(again.cv_accuracy, path.cv_accuracy)


def test_stratified_folds_are_of_equal_size():
    """Each class started at fold 0, so the classes' remainders all fell on
    the first folds: 113 held-out samples against 88 in 10 folds of
    letter.scale's first 1000 rows (26 classes).  Each class is still
    spread evenly, and the folds are the same at each call."""
    _, y = load_dataset("letter.scale")
    y = y[:1000]
    splits = cv_splits(10, y)
    sizes = [np.count_nonzero(held) for _, held in splits]
    assert max(sizes) - min(sizes) <= 1
    for label in np.unique(y):
        counts = [np.count_nonzero(y[held] == label) for _, held in splits]
        assert max(counts) - min(counts) <= 1
    again = cv_splits(10, y)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again))


def test_best_C_is_the_smallest_on_ties_within_round_off():
    """Equal mean accuracies summed from other fold accuracies differ in
    their last bits: (18 + 18 + 25) / 27 and (18 + 20 + 23) / 27 over three
    folds, and argmax took the larger C (on german.numer_scale, RBF gamma
    0.2, 10 folds, 30 C: best_C 3.86 for 1.74, both 72.00%)."""
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, C=[0.5, 1.0, 2.0], cv=3, keep="summary")
    path.cv_accuracy = np.array([[17, 18, 18], [17, 18, 20], [17, 25, 23]]) / 27.0
    assert path.cv_mean[2] > path.cv_mean[1]        # the round-off this is about
    assert path.best_index == 1 and path.best_C == 1.0


@pytest.mark.parametrize("rule", SCREENING_RULES)
def test_samples_of_weight_zero_keep_screening_safe(rule):
    # hi_i = 0 for them: the rules' boxes stay proportional (0 = q 0)
    X, y = load_dataset("heart_scale")
    weight = np.random.default_rng(1).uniform(0.2, 3.0, len(y))
    weight[::7] = 0.0
    base = train_path(X, y, n_C=12, sample_weight=weight, screening=None, tol=1e-6)
    path = train_path(X, y, n_C=12, sample_weight=weight, screening=rule, tol=1e-6)
    np.testing.assert_allclose(path.objective, base.objective, rtol=1e-6)
    assert np.all(path.put_back == 0)
    if rule == "dvi":
        assert np.sum(path.screened_zero + path.screened_bound) > 0


def test_a_sample_of_weight_zero_is_not_at_its_bound():
    """A sample of weight 0 (box [0, 0]) is at 0, as if it were left out:
    counted at its bound as well, it was in n_bound and hid the hard margin,
    so the epsilon path ran on to C_max (363 steps instead of 60 here)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(np.arange(30) % 2, 1, -1)
    X += 3 * y[:, None]
    weight = np.ones(30)
    weight[5] = 0.0
    options = dict(grid="epsilon", kernel="linear", C_range=(1e-2, 1e3))
    dropped = train_path(X[weight > 0], y[weight > 0], **options)
    weighted = train_path(X, y, sample_weight=weight, **options)
    np.testing.assert_array_equal(weighted.C, dropped.C)
    np.testing.assert_array_equal(weighted.n_bound, dropped.n_bound)
    np.testing.assert_array_equal(weighted.n_zero, dropped.n_zero + 1)


@pytest.mark.parametrize("rule", ["dvi", "it", "bt2"])
def test_ball_rules_put_nothing_back_at_the_edges_of_precision(rule):
    """Cases of an adversarial fuzz (session 9), each once put back:
    * a jump of 3.9e6 in C: the scaled warm-start gradient carried its
      round-off times 3.9e6, and DVI proved two free support vectors (margin
      exactly 1, three identical points) to be 0; the warm start's gradient
      is now computed afresh after a step above GRADIENT_REFRESH_SCALE;
    * tol 1e-12, where the free variables end above tol by round-off: the
      check flagged a fixed sample inside their range;
    * a sample of weight 0 (box [0, 0]) had a nonzero projected gradient."""
    same = train_path(np.full((3, 1), -0.99397404), [1.0, -1.0, -1.0],
                      C=[0.0017694087402574461, 6901.384156412741, 20704.152469238223],
                      kernel="rbf", gamma=0.003111960952853007, fit_intercept=False,
                      tol=1e-6, screening=rule)
    tight = train_path(np.array([[0.16005277899420678], [2.918443025598674]]), [-1.0, 1.0],
                       C=[29530.278136727255, 295302.78136727255], kernel="linear",
                       fit_intercept=False, tol=1e-12, screening=rule)
    weightless = train_path(np.array([[-1.0], [1.0], [-2.0]]), [-1.0, 1.0, 1.0],
                            C=[1.0, 2.0], kernel="linear", fit_intercept=False,
                            sample_weight=[1.0, 1.0, 0.0], screening=rule)
    for path in (same, tight, weightless):
        assert np.all(path.put_back == 0)


# A random problem on which ESSNSV, fed the path's tol-1e-3 optima as if exact,
# proved a free support vector to be at its bound (put back by the check).
DOME_CASE_X = np.array([
    [-1.711491, -0.018258, 2.404792], [-2.182924, -0.356433, -2.759464],
    [-0.691942, 0.349373, 0.789096], [-0.711555, -2.669374, -0.593663],
    [0.150315, -0.037396, 0.303688], [2.461999, 0.189706, -1.574285],
    [-1.148941, 0.492584, 0.115266], [-0.694707, 1.013762, 1.320076],
    [-1.144347, -0.933678, 0.851073], [-0.506258, 1.201595, -0.037357],
    [0.292381, 0.997705, 0.992171], [0.547899, -0.500324, -0.076935],
    [-0.368762, -0.656658, 0.448464], [-1.326483, -0.246693, -0.001628],
    [-0.161149, 0.881627, 1.207359]])
DOME_CASE_Y = [1, -1, 1, -1, -1, 1, -1, 1, 1, 1, 1, 1, -1, 1, -1]


@pytest.mark.parametrize("rule", ["ssnsv", "essnsv"])
def test_domes_are_safe_at_tolerance_level_references(rule):
    """The domes widen by their references' duality gaps (docs/screening.md
    sec. 7): at tol 1e-3 nothing is put back, and the path still screens."""
    options = dict(C=[1.1646e-3, 4.2509e-2, 0.1512, 14.943, 62.68], kernel="linear",
                   class_weight={1: 0.2}, tol=1e-3)
    plain = train_path(DOME_CASE_X, DOME_CASE_Y, screening=None, **options)
    path = train_path(DOME_CASE_X, DOME_CASE_Y, screening=rule, **options)
    assert np.all(path.put_back == 0)
    np.testing.assert_allclose(path.objective, plain.objective, rtol=1e-2)
    X, y = load_dataset("breast-cancer_scale")
    path = train_path(X, y, n_C=20, kernel="linear", screening=rule)
    assert np.all(path.put_back == 0)
    assert np.sum(path.screened_zero + path.screened_bound) > 0


@pytest.mark.parametrize("kernel, coef0", [("sigmoid", -1.0), ("poly", -1.0)])
def test_kernels_that_need_not_be_psd_are_solved_without_screening(kernel, coef0):
    # The rules assume a concave dual; on these kernels a screened path ended
    # at other stationary points (poly, coef0 = -1: objectives 0.1-0.8% apart).
    X, y = load_dataset("heart_scale")
    options = dict(C=[1.0, 2.0, 4.0], kernel=kernel, coef0=coef0, gamma=0.1, tol=1e-6)
    base = train_path(X, y, screening=None, **options)
    with pytest.warns(UserWarning, match="positive semi-definite"):
        path = train_path(X, y, screening="dvi", **options)
    np.testing.assert_array_equal(path.objective, base.objective)
    assert np.all(path.screened_zero + path.screened_bound == 0)
    with pytest.warns(UserWarning, match="positive semi-definite"):
        ramp = svmscreen.train_ramp(X, y, C=1.0, kernel=kernel, coef0=coef0, gamma=0.1)
    plain = svmscreen.train_ramp(X, y, C=1.0, kernel=kernel, coef0=coef0, gamma=0.1,
                                 screening=None)
    np.testing.assert_array_equal(ramp.objective, plain.objective)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kernel, coef0", [("sigmoid", -0.5), ("poly", -1.0)])
def test_kernels_that_need_not_be_psd_give_each_C_its_separate_fit(n_classes, kernel, coef0):
    # The dual is not convex there: warm-started from the previous C the path
    # ended at other stationary points than a fit at that C alone (sigmoid,
    # 3 classes: decision values 600 apart from SVC's and LIBSVM's at
    # C = 100; on other data SVCPathCV picked C = 1 where GridSearchCV(SVC)
    # picks 100).  A pair's model is SVC's (+1 for its first class); two
    # classes, fit_binary's.
    from svmscreen.estimators import SVC
    rng = np.random.default_rng(28)
    X = rng.normal(size=(80, 3))
    y = rng.integers(0, n_classes, 80)
    X += 0.6 * y[:, None]
    grid = [0.1, 1.0, 10.0, 100.0]
    options = dict(kernel=kernel, gamma=0.3, coef0=coef0, degree=3, tol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # screening is off on them
        path = train_path(X, y, C=grid, **options)
    for t, C in enumerate(grid):
        if n_classes == 2:
            alone = svmscreen.fit_binary(X, y, C=C, **options).decision_function(X)
        else:
            alone = SVC(C=C, decision_function_shape="ovo", **options).fit(X, y)\
                .decision_function(X)
        np.testing.assert_allclose(path.model(t).decision_function(X), alone, atol=1e-6,
                                   err_msg=f"C={C}")


def test_asymmetric_precomputed_kernel_is_solved_without_screening():
    # SMO reads row i as Q's column i, the rules a Gram matrix: on K != K'
    # the screened paths had ended elsewhere (dvi -5850, it -10372 against
    # -65479 unscreened at C = 100, samples put back)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1)) + 0.3 * rng.normal(size=(40, 40))
    grid = np.logspace(-1, 2, 6)
    plain = train_path(K, y, C=grid, kernel="precomputed", screening=None)
    for rule in ["dvi", "it", "ssnsv"]:
        with pytest.warns(UserWarning, match="needs a symmetric kernel matrix"):
            path = train_path(K, y, C=grid, kernel="precomputed", screening=rule)
        np.testing.assert_array_equal(path.objective, plain.objective)
        assert path.put_back.sum() == 0
    # a symmetric one, up to round-off, is screened without a warning
    S = 0.5 * (K + K.T)
    S = S @ S.T
    S[0, 1] *= 1 + 1e-15
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        train_path(S, y, C=grid, kernel="precomputed", screening="dvi")


def test_precomputed_kernel_cross_validates_as_its_kernel():
    # a fold of a precomputed kernel trains on K[train, train]
    X, y = load_dataset("heart_scale")
    X = X.toarray()
    linear = train_path(X, y, n_C=5, C_range=(1e-2, 10.0), kernel="linear", cv=3, tol=1e-6)
    gram = train_path(X @ X.T, y, n_C=5, C_range=(1e-2, 10.0), kernel="precomputed", cv=3,
                      tol=1e-6)
    np.testing.assert_allclose(gram.cv_accuracy, linear.cv_accuracy, atol=1e-12)
    np.testing.assert_allclose(gram.objective, linear.objective, rtol=1e-6)


def test_parallel_folds_and_gamma_list_agree_with_serial():
    pytest.importorskip("joblib")
    X, y = load_dataset("heart_scale")
    serial = train_path(X, y, n_C=5, cv=3, gamma=[0.05, 0.2], screening=None)
    parallel = train_path(X, y, n_C=5, cv=3, gamma=[0.05, 0.2], screening=None, n_jobs=2)
    assert [p.gamma for p in serial] == [0.05, 0.2]
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a.cv_accuracy, b.cv_accuracy)
        np.testing.assert_allclose(a.objective, b.objective)


def test_verbose_shows_the_progress_of_the_path_and_of_each_fold(capsys):
    X, y = load_dataset("heart_scale")
    quiet = train_path(X, y, n_C=6, cv=2)
    assert capsys.readouterr().err == ""
    loud = train_path(X, y, n_C=6, cv=2, verbose=True)
    err = capsys.readouterr().err
    # the same lines with or without tqdm: "<label>: ... 6/6"
    for label in ("path (gamma = 0.0769)", "fold 1/2", "fold 2/2"):
        assert f"{label}:" in err and "6/6" in err.split(f"{label}:")[-1], err
    np.testing.assert_array_equal(quiet.cv_accuracy, loud.cv_accuracy)
    # more than two classes: each fold's pairs too
    X3, y3, _, _ = letter_classes(3, n_train=90, n_test=10)
    train_path(X3, y3, n_C=2, cv=2, verbose=True)
    err = capsys.readouterr().err
    for label in ("pair 3/3 (classes ", "fold 1/2, pair 1/3", "fold 2/2, pair 3/3"):
        assert f"{label}" in err, err
    # the epsilon grid's length is not known in advance: a count, no total
    train_path(X, y, grid="epsilon", C_range=(1e-2, 0.1), kernel="linear", verbose=True)
    err = capsys.readouterr().err
    # (without tqdm a "path: 0" line first: the first C can take a while)
    assert err.lstrip("\r").startswith(("path: 0", "path: 1")), err
    assert "path: 1" in err, err


def test_verbose_with_tqdm_updates_one_bar_per_path_once_per_C(monkeypatch):
    # tqdm is optional (not a test dependency either): a stand-in module
    # records what _progress_printer asks of tqdm.auto.tqdm
    import types
    bars = []

    class Bar:
        def __init__(self, total=None, desc=None, unit=None):
            self.total, self.desc, self.unit = total, desc, unit
            self.updates, self.postfix, self.closed = 0, None, False
            bars.append(self)

        def update(self, count):
            self.updates += count

        def set_postfix(self, **fields):
            self.postfix = fields

        def close(self):
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = Bar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    X, y = load_dataset("heart_scale")
    train_path(X, y, C=[0.5, 1.0, 2.0], gamma=0.1, cv=2, verbose=True)
    assert [(b.desc, b.total, b.updates, b.postfix, b.closed) for b in bars] == [
        ("path (gamma = 0.1)", 3, 3, {"C": "2"}, True),
        ("gamma = 0.1, fold 1/2", 3, 3, {"C": "2"}, True),
        ("gamma = 0.1, fold 2/2", 3, 3, {"C": "2"}, True)]
    # the epsilon grid's length is not known in advance: a bar without a total
    bars.clear()
    path = train_path(X, y, grid="epsilon", C_range=(1e-2, 0.1), kernel="linear",
                      verbose=True)
    assert [(b.total, b.updates, b.closed) for b in bars] == [(None, len(path), True)]


def test_verbose_without_tqdm_clears_a_longer_line_it_rewrites(capsys, monkeypatch):
    # without tqdm each C rewrites one line after "\r", which only moves the
    # cursor: C = 1.1 after C = 0.869 showed "(C = 1.1)9)"
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    X, y = load_dataset("heart_scale")
    train_path(X, y, C=[0.869, 1.1], gamma=0.1, verbose=True)
    err = capsys.readouterr().err
    screen = ""
    for text in err.rstrip("\n").split("\r"):
        screen = text + screen[len(text):]      # what a terminal shows
    assert screen.rstrip() == "path (gamma = 0.1): 2/2 (C = 1.1)", repr(err)


def test_verbose_parallel_folds_report_through_joblib(capsys):
    pytest.importorskip("joblib")
    X, y = load_dataset("heart_scale")
    train_path(X, y, n_C=4, cv=2, n_jobs=2, verbose=True)
    err = capsys.readouterr().err
    # "Done 2 out of 2"; or, when both folds end before joblib has finished
    # dispatching, "Done 2 tasks" and no final line (Parallel.print_progress:
    # _is_completed is False while it iterates; this test failed once so)
    assert re.search(r"\[Parallel\(n_jobs=2\)\]: Done +2 (out of +2|tasks)", err), err
    assert "fold 1/2" not in err      # the workers' bars would interleave


def test_dask_backend_if_installed():
    distributed = pytest.importorskip("dask.distributed")
    from joblib import parallel_backend
    X, y = load_dataset("heart_scale")
    serial = train_path(X, y, n_C=4, cv=2, screening=None)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2):
        with parallel_backend("dask"):
            remote = train_path(X, y, n_C=4, cv=2, screening=None, n_jobs=2)
    np.testing.assert_array_equal(serial.cv_accuracy, remote.cv_accuracy)


def test_inputs_not_modified():
    X, y = load_dataset("heart_scale")
    X_copy, y_copy = X.copy(), np.array(y)
    train_path(X, y, n_C=4, cv=2, screening=None)
    assert (X != X_copy).nnz == 0
    np.testing.assert_array_equal(y, y_copy)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(C=[1.0, 0.5]), ValueError, "strictly increasing"),
    (dict(C=[1.0, 1.0]), ValueError, "strictly increasing"),
    (dict(C=[-1.0, 1.0]), ValueError, "> 0"),
    (dict(C=[0.0, 1.0]), ValueError, "> 0"),
    (dict(C=[]), ValueError, "empty"),
    (dict(C=[1.0, np.nan]), ValueError, "finite"),
    (dict(C=[[1.0, 2.0], [3.0, 4.0]]), ValueError, "1-d grid"),
    (dict(C="1.0"), TypeError, "C must be a number"),
    (dict(C=[1.0 + 1.0j]), TypeError, "C must be a number"),
    (dict(n_C=0), ValueError, "n_C"),
    (dict(n_C=2 ** 63 - 1), ValueError, "n_C=9223372036854775807 is more values"),
    (dict(C_range=(10.0, 1.0)), ValueError, "C_range"),
    (dict(C_range=(0.0, 1.0)), ValueError, "C_range"),
    (dict(C_range=(1.0, 1.0), n_C=3), ValueError, "fewer than n_C=3 distinct"),
    (dict(C_range=(1.0, 1.0 + 1e-16), n_C=2), ValueError, "fewer than n_C=2 distinct"),
    (dict(C_range="12"), ValueError, "C_range must be a pair"),
    (dict(C_range=("0.01", "1000")), TypeError, "C_range's ends must be real numbers"),
    (dict(C_range=(True, 10.0)), TypeError, "C_range's ends must be real numbers"),
    (dict(C_range=("1", "10"), grid="epsilon"), TypeError, "C_range's ends"),
    (dict(grid="cubic"), ValueError, "grid"),
    (dict(grid="epsilon", epsilon=2.0), ValueError, "epsilon"),
    # in range, but not a number: it was "epsilon must be in [1e-08, 1)"
    (dict(grid="epsilon", epsilon=Decimal("0.01")), TypeError,
     r"epsilon must be a real number, got Decimal\('0.01'\)"),
    (dict(grid="epsilon", epsilon="0.01"), TypeError, "epsilon must be a real number"),
    (dict(grid="epsilon", epsilon=True), TypeError, "epsilon must be a real number"),
    (dict(grid="epsilon", C=[1.0, 2.0]), ValueError, "give C_range, not C"),
    (dict(grid="cubic", C=[1.0, 2.0]), ValueError, "grid"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
    (dict(n_jobs=1.5), ValueError, "n_jobs"),
    (dict(n_jobs=10 ** 12, cv=3), ValueError, "n_jobs"),
    (dict(cv=1), ValueError, "cv"),
    (dict(cv=500), ValueError, "smallest class"),
    (dict(screening="magic"), ValueError, "screening"),
    (dict(keep="some"), ValueError, "keep"),
    (dict(gamma=[]), ValueError, "gamma"),
    (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(kernel="cubic"), ValueError, "kernel"),
    (dict(tol=0.0), ValueError, "tol"),
    (dict(gamma=[[0.1]]), TypeError, "flat list"),
    (dict(verbose="no"), TypeError, "verbose"),
    (dict(random_state="a"), TypeError, "random_state"),
    (dict(C=[1.0, 1e308], class_weight={1.0: 10.0}), ValueError, "C=1e.308 times class_"),
    (dict(cv=[(np.r_[0:200, 0], np.r_[200:270])]), ValueError, "split 0: its train part "
     "repeats a sample"),
    (dict(cv=[(np.r_[0:200], np.r_[200:270, 269])]), ValueError, "test part repeats"),
    # arrays: numpy's "truth value of an array ... is ambiguous" and
    # "iteration over a 0-d array" named no parameter, and keep=["all"] as an
    # array of one value passed
    (dict(grid=np.geomspace(0.1, 10.0, 3)), ValueError, "grid must be one of"),
    (dict(screening=np.array(["dvi", "it"])), ValueError, "screening must be one of"),
    (dict(screening=np.array(["dvi"])), ValueError, "screening must be one of"),
    (dict(keep=np.array(["all"])), ValueError, "keep must be one of"),
    (dict(cv=np.array(3)), ValueError, "cv must be an integer >= 2, a splitter"),
    (dict(cv=np.array(3), gamma=[0.1, 1.0]), ValueError, "cv must be an integer >= 2"),
    # checked whichever grid is used: each was ignored, a typo unnoticed
    (dict(C=[1.0], n_C=-3), ValueError, "n_C must be a positive integer"),
    (dict(C=[1.0], C_range="x"), ValueError, "C_range must be a pair"),
    (dict(n_C=2, epsilon="1e-3"), TypeError, "epsilon must be a real number"),
    (dict(n_C=2, epsilon=-1.0), ValueError, "epsilon must be in"),
    (dict(grid="epsilon", n_C=0), ValueError, "n_C must be a positive integer"),
])
def test_bad_input(kwargs, error, match):
    X, y = load_dataset("heart_scale")
    with pytest.raises(error, match=match):
        train_path(X, y, **kwargs)


def letter_classes(n_classes, n_train=600, n_test=400):
    """Rows of letter.scale (and its test file) of the first ``n_classes``
    letters, the training rows sorted by label so that LIBSVM's class order
    (first appearance) is the sorted one."""
    X, y = load_dataset("letter.scale")
    X_test, y_test = load_dataset("letter.scale.t")
    rows = np.flatnonzero(y <= n_classes)[:n_train]
    rows = rows[np.argsort(y[rows], kind="stable")]
    test = np.flatnonzero(y_test <= n_classes)[:n_test]
    return X[rows], y[rows], X_test[test], y_test[test]


@pytest.mark.parametrize("screening", ["dvi", "it", None])
def test_more_than_two_classes_match_libsvm_one_vs_one(screening):
    from libsvm.svmutil import svm_predict, svm_train
    X, y, X_test, y_test = letter_classes(4)
    grid, gamma = np.geomspace(0.1, 100, 5), 1.0 / 16
    path = train_path(X, y, C=grid, gamma=gamma, tol=1e-6, screening=screening)
    assert isinstance(path, svmscreen.OneVsOnePath)
    assert path.pairs == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert path.intercept.shape == (grid.size, 6) and path.put_back.sum() == 0
    for t, C in enumerate(grid):
        theirs = svm_train(y, X, f"-t 2 -c {float(C)!r} -g {gamma!r} -e 1e-6 -q")
        assert list(theirs.get_labels()) == [1, 2, 3, 4]
        labels, _, decision = svm_predict(y_test, X_test, theirs, "-q")
        ours = path.model(t)
        np.testing.assert_array_equal(ours.predict(X_test), labels)
        # LIBSVM's float32 kernel cache: b and f within 1e-4 (measured 1e-6 to 9e-5)
        np.testing.assert_allclose(path.intercept[t], -np.asarray(theirs.rho[:6]), atol=5e-4)
        np.testing.assert_allclose(ours.decision_function(X_test), decision, atol=5e-4)
        # alphas within tol of 0 may count or not: measured at most 2 apart
        assert abs(path.n_sv[t] - theirs.get_nr_sv()) <= 0.02 * theirs.get_nr_sv()
        assert ours.n_support_ == path.n_sv[t]


def test_cv_split_needs_each_class_weighing_in_its_training_part():
    # Zero sample weights leave one class in a fold's training part: that
    # fold's models were constant (an accuracy of 0.667 at every C), where
    # fit_binary and scikit-learn refuse such a fit.
    X, y = load_dataset("heart_scale")
    positive = np.flatnonzero(y > 0)
    sample_weight = np.ones(y.size)
    sample_weight[positive[10:]] = 0.0
    test = np.r_[positive[:10], np.flatnonzero(y < 0)[:20]]
    train = np.setdiff1d(np.arange(y.size), test)
    with pytest.raises(ValueError, match="cv split 0: its training part holds 1 of the 2 "
                                         "classes with a positive weight"):
        train_path(X, y, C=[0.1, 1.0], cv=[(train, test)], sample_weight=sample_weight)
    with pytest.raises(ValueError, match="cv split 0: the sample weights of its test part "
                                         "sum to 0"):
        train_path(X, y, C=[0.1, 1.0], cv=[(train, test)],
                   sample_weight=np.where(np.isin(np.arange(y.size), test), 0.0, 1.0))


def test_one_gamma_in_a_list_runs_its_folds_in_parallel(monkeypatch):
    # SVCPathCV passes gamma as a list: with one value, n_jobs went to the
    # list of gammas and the folds ran one after another.
    import svmscreen.path as path_module
    calls = []
    parallel = path_module._parallel

    def recording(n_jobs, tasks, verbose=False):
        calls.append((n_jobs, len(tasks)))
        return parallel(None, tasks)
    monkeypatch.setattr(path_module, "_parallel", recording)
    X, y = load_dataset("heart_scale")
    train_path(X, y, n_C=3, cv=4, gamma=[0.1], n_jobs=2)
    assert calls == [(2, 4)]
    calls.clear()
    train_path(X, y, n_C=3, cv=4, gamma=[0.1, 0.2], n_jobs=2)
    assert calls[0] == (2, 2)


def test_one_vs_one_path_reports_status():
    X, y, _, _ = letter_classes(3, n_train=90, n_test=10)
    with pytest.warns(svmscreen.ConvergenceWarning, match="max_iter"):
        path = train_path(X, y, C=[0.1, 1.0, 10.0], max_iter=5)
    assert path.status.tolist() == ["max_iter"] * 3
    path = train_path(X, y, C=[0.1, 1.0, 10.0])
    assert path.status.tolist() == ["optimal"] * 3


def test_warnings_name_the_fold_and_the_pair():
    """A CV fold's path, or a pair of classes', warned in the same words as
    the whole-data path ("C=1: the solver reached max_iter"), so a user
    could not tell which path had not converged, and the default filter
    showed one of the identical warnings only."""
    X, y = load_dataset("heart_scale")
    with pytest.warns(svmscreen.ConvergenceWarning) as caught:
        train_path(X, y, C=[1.0], max_iter=5, cv=2, gamma=0.5)
    messages = sorted(str(w.message) for w in caught)
    assert messages == [f"{where}C=1: the solver reached max_iter=5 before the tolerance"
                        for where in ("", "gamma = 0.5, fold 1/2, ", "gamma = 0.5, fold 2/2, ")]
    X, y, _, _ = letter_classes(3, n_train=90, n_test=10)
    with pytest.warns(svmscreen.ConvergenceWarning) as caught:
        train_path(X, y, C=[1.0], kernel="linear", max_iter=3, cv=2)
    messages = {str(w.message).split(", C=")[0] for w in caught}
    a, b, c = (f"{label:g}" for label in np.unique(y))
    assert messages == ({f"pair 1/3 (classes {a} and {b})", f"pair 2/3 (classes {a} and {c})",
                         f"pair 3/3 (classes {b} and {c})"}
                        | {f"fold {k}/2, pair {p}/3" for k in (1, 2) for p in (1, 2, 3)})


def test_one_vs_one_cv_holds_its_decision_values_a_block_at_a_time(monkeypatch):
    """A fold held all its decision values at once (held rows x pairs x C
    doubles: 1 GB at 40 classes, 800 held rows, 200 C); now a block of
    rows at a time, with the same accuracies whatever the block."""
    from svmscreen import one_vs_one
    X, y, _, _ = letter_classes(4, n_train=200)
    whole = train_path(X, y, n_C=6, cv=3, keep="summary").cv_accuracy
    # 6 pairs x 6 C x 8 bytes: blocks of 2 held rows
    monkeypatch.setattr(one_vs_one, "DECISION_BLOCK_BYTES", 2 * 6 * 6 * 8)
    np.testing.assert_array_equal(train_path(X, y, n_C=6, cv=3, keep="summary").cv_accuracy,
                                  whole)


def test_one_vs_one_path_is_the_pairs_binary_paths():
    X, y, _, _ = letter_classes(3, n_train=450)
    grid = np.geomspace(0.05, 50, 6)
    weights = {1.0: 2.0, 3.0: 0.5}
    path = train_path(X, y, C=grid, kernel="linear", class_weight=weights, tol=1e-8)
    n_sv = np.zeros(grid.size, dtype=int)
    is_sv = np.zeros((grid.size, y.size), dtype=bool)
    for (i, j), pair, rows in zip(path.pairs, path.pair_paths, path.pair_rows):
        assert set(y[rows]) == {i + 1.0, j + 1.0}
        # +1 for the first class of the pair: its positive decision votes for it
        alone = train_path(X[rows], np.where(y[rows] == i + 1, 1.0, -1.0), C=grid,
                           kernel="linear", tol=1e-8,
                           sample_weight=[weights.get(label, 1.0) for label in y[rows]])
        np.testing.assert_allclose(pair.objective, alone.objective, rtol=1e-9)
        np.testing.assert_allclose(pair.intercept, alone.intercept, atol=1e-9)
        for t in range(grid.size):
            is_sv[t, rows] |= pair.alphas[t] > 0
    n_sv = is_sv.sum(axis=1)
    np.testing.assert_array_equal(path.n_sv, n_sv)
    np.testing.assert_allclose(path.objective, np.sum([p.objective for p in path.pair_paths],
                                                      axis=0))
    assert path.n_variables == sum(rows.size for rows in path.pair_rows) == 2 * y.size
    np.testing.assert_allclose(
        path.screening_rate,
        (path.screened_zero + path.screened_bound) / (2.0 * y.size))
    lines = path.summary().splitlines()
    assert len(lines) == grid.size + 1


def test_one_vs_one_cross_validation_is_the_vote_of_the_pairs():
    X, y, _, _ = letter_classes(3, n_train=300)
    grid = np.geomspace(0.1, 100, 4)
    path = train_path(X, y, C=grid, cv=3, gamma=0.1, tol=1e-8, keep="summary")
    assert path.cv_accuracy.shape == (3, grid.size)
    folds = svmscreen.path.stratified_folds(y, 3)
    for k in range(3):
        train, held = folds != k, folds == k
        fold_path = train_path(X[train], y[train], C=grid, gamma=0.1, tol=1e-8)
        for t in range(grid.size):
            accuracy = np.mean(fold_path.model(t).predict(X[held]) == y[held])
            assert path.cv_accuracy[k, t] == pytest.approx(accuracy)
    assert path.best_C == grid[np.argmax(path.cv_accuracy.mean(axis=0))]
    with pytest.raises(ValueError, match=r"keep=.summary.*train_path\(X, y, C=\[C\]\)"):
        path.best_model
    # a pair's own path has no CV: its error had said to call train_path
    # with cv=k, which this path was
    with pytest.raises(ValueError, match="the multiclass path's best_C is by the pairs' votes"):
        path.pair_paths[0].best_C


def test_one_vs_one_precomputed_equals_linear():
    X, y, X_test, _ = letter_classes(3, n_train=300, n_test=50)
    X = X.toarray()
    grid = np.geomspace(0.1, 10, 3)
    linear = train_path(X, y, C=grid, kernel="linear", cv=3, tol=1e-8)
    pre = train_path(X @ X.T, y, C=grid, kernel="precomputed", cv=3, tol=1e-8)
    np.testing.assert_allclose(pre.objective, linear.objective, rtol=1e-8)
    np.testing.assert_array_equal(pre.cv_accuracy, linear.cv_accuracy)
    K_test = X_test.toarray() @ X.T
    np.testing.assert_array_equal(pre.best_model.predict(K_test),
                                  linear.best_model.predict(X_test))
    with pytest.raises(ValueError, match="needs 300 columns"):
        pre.best_model.predict(K_test[:, :10])


@pytest.mark.parametrize("kwargs, match", [
    (dict(grid="epsilon"), "epsilon.*two classes"),
    (dict(cv=500), "smallest class"),
    (dict(cv=[(np.arange(100), np.arange(100, 150))]), "holds 1 of the 3 classes"),
])
def test_one_vs_one_bad_input(kwargs, match):
    X, y, _, _ = letter_classes(3, n_train=300)
    with pytest.raises(ValueError, match=match):
        train_path(X, y, n_C=3, **kwargs)


def test_kernel_name_as_numpy_str():
    """A numpy.str_ kernel name (from an array of names) passes the name
    check and was kept: the typed prediction routines then refused it after
    the whole path was solved."""
    X, y, X_test, _ = letter_classes(3, n_train=150, n_test=20)
    kernel = np.array(["rbf", "linear"])[0]
    path = train_path(X, y, n_C=3, kernel=kernel, cv=2)
    expected = train_path(X, y, n_C=3, kernel="rbf", cv=2)
    np.testing.assert_array_equal(path.cv_accuracy, expected.cv_accuracy)
    np.testing.assert_array_equal(path.model(1).predict(X_test),
                                  expected.model(1).predict(X_test))
    model = svmscreen.fit_binary(X[y <= 2], y[y <= 2], kernel=kernel)
    assert type(model.kernel) is str
    model.predict(X_test)


def test_one_vs_one_pair_of_zero_weights_with_screening():
    """A pair whose samples all weigh 0 has every box [0, 0]: the rule has
    nothing to prove (it had raised on the undefined box ratio); the path
    equals the unscreened one."""
    X, y, X_test, _ = letter_classes(4, n_train=200, n_test=20)
    weight = np.where(y >= 3, 1.0, 0.0)        # pair (1, 2) weighs nothing
    screened = train_path(X, y, n_C=3, sample_weight=weight)
    plain = train_path(X, y, n_C=3, sample_weight=weight, screening=None)
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=1e-9)
    np.testing.assert_array_equal(screened.model(2).predict(X_test),
                                  plain.model(2).predict(X_test))


def test_a_class_weight_of_zero_is_sample_weights_of_zero():
    """class_weight {label: 0} is LIBSVM's -wi 0, which estimators.SVC and
    the drop-in take: every C_i of the class is 0, as sample weights of 0
    for its samples make them.  fit_binary and train_path had refused it
    ("must be finite and > 0") while taking those sample weights; with two
    classes it leaves one class alone with a positive weight, refused as
    such."""
    from sklearn.datasets import load_iris
    from svmscreen.estimators import SVC
    X, y = load_iris(return_X_y=True)
    grid = [0.1, 1.0, 10.0]
    by_class = train_path(X, y, C=grid, gamma=0.3, class_weight={0: 0.0}, tol=1e-10)
    by_sample = train_path(X, y, C=grid, gamma=0.3, sample_weight=(y != 0) * 1.0, tol=1e-10)
    for t, C in enumerate(grid):
        np.testing.assert_allclose(by_class.model(t).decision_function(X),
                                   by_sample.model(t).decision_function(X), atol=1e-9)
        svc = SVC(C=C, gamma=0.3, tol=1e-10, class_weight={0: 0.0},
                  decision_function_shape="ovo").fit(X, y)
        np.testing.assert_allclose(by_class.model(t).decision_function(X),
                                   svc.decision_function(X), atol=1e-7)
    keep = y > 0
    for run in (lambda: svmscreen.fit_binary(X[keep], y[keep], class_weight={1: 0.0}),
                lambda: train_path(X[keep], y[keep], n_C=3, class_weight={1: 0.0}),
                lambda: svmscreen.train_ramp(X[keep], y[keep], class_weight={1: 0.0})):
        with pytest.raises(ValueError, match="only class .* with a positive weight"):
            run()
    with pytest.raises(ValueError, match=r"class_weight\[1\] must be finite and >= 0"):
        svmscreen.fit_binary(X[keep], y[keep], class_weight={1: -1.0})


@pytest.mark.parametrize("n_classes", [2, 3])
def test_models_do_not_follow_later_changes_of_X(n_classes):
    """The path keeps copies of its support vectors' rows (scikit-learn's SVC
    copies its support vectors at fit): a model built after the caller
    changed its X is the model of the data trained on."""
    X, y, X_test, _ = letter_classes(n_classes, n_train=150, n_test=30)
    X = X.toarray()
    path = train_path(X, y, n_C=3)
    before = [path.model(t).decision_function(X_test) for t in range(3)]
    X *= 3.0
    for t in range(3):
        np.testing.assert_array_equal(path.model(t).decision_function(X_test), before[t])


def test_a_single_class_is_an_error():
    X, y = load_dataset("heart_scale")
    with pytest.raises(ValueError, match="at least two classes, got 1"):
        train_path(X, np.ones_like(y), n_C=3)


def test_command_line_path(capsys):
    from svmscreen.cli import main
    assert main(["path", "data/heart_scale.xz", "--n-C", "5", "--cv", "3",
                 "--screening", "none", "--compare"]) == 0
    out = capsys.readouterr().out
    assert "best C =" in out and "without screening" in out
    assert len([line for line in out.splitlines() if line.strip()[:1].isdigit()]) >= 5
    assert "for 5 values of C and 3 folds; 0 samples put back" in out
    # "1 values of C" until helper Y's report
    assert main(["path", "data/heart_scale.xz", "--n-C", "1", "--cv", "0"]) == 0
    assert "for 1 value of C; 0 samples put back" in capsys.readouterr().out
    # a directory is an OSError with a message, not a traceback
    assert main(["path", "data", "--n-C", "3"]) == 2
    assert "svmscreen: error:" in capsys.readouterr().err
    for folds in ["1", "-2"]:
        with pytest.raises(SystemExit):
            main(["path", "data/heart_scale.xz", "--cv", folds])
        assert "at least 2 folds" in capsys.readouterr().err
    # with workers, --compare starts them before timing both runs
    assert main(["path", "data/heart_scale.xz", "--n-C", "4", "--cv", "3", "--n-jobs", "2",
                 "--screening", "none", "--compare"]) == 0
    assert "without screening" in capsys.readouterr().out


@pytest.mark.parametrize("options, message", [
    (["--C-min", "10", "--C-max", "1"], "svmscreen: error: --C-min 10 is above --C-max 1"),
    (["--C-min", "5", "--C-max", "5"], "--C-min and --C-max are both 5: give --n-C 1"),
    (["--C-min", "5", "--C-max", "5.000000000000001"], "--C-min 5.0 to --C-max "
     "5.000000000000001 holds fewer than --n-C 3 distinct values"),
    (["--cv", "200"], "--cv 200 is larger than the smallest class (120 samples)"),
    (["--C-min", "0"], "argument --C-min: needs a positive, finite C, got '0'"),
    (["--C-max", "inf"], "argument --C-max: needs a positive, finite C, got 'inf'"),
    (["--n-C", "0"], "argument --n-C: needs a positive integer, got '0'"),
    (["--n-C", "99999999999999999999"], "argument --n-C: 99999999999999999999 is more values"),
    # numpy's "array is too big", and near 2**63 geomspace's IndexError traceback
    (["--n-C", str(2 ** 62)], f"argument --n-C: {2 ** 62} is more values"),
    (["--n-C", str(2 ** 63 - 1)], f"argument --n-C: {2 ** 63 - 1} is more values"),
    (["--cv", "x"], "argument --cv: needs a number of folds, got 'x'"),
    (["--cache-size", "0"], "argument --cache-size: needs a positive, finite size, got '0'"),
    (["--tol", "nan"], "argument --tol: needs a positive, finite tolerance, got 'nan'"),
    (["--gamma", "-1"], "argument --gamma: needs a finite gamma >= 0, got '-1'"),
    (["--epsilon", "0"], "argument --epsilon: needs an epsilon in [1e-08, 1), got '0'"),
    (["--coef0", "nan"], "argument --coef0: needs a finite coef0, got 'nan'"),
    (["--degree", "-1"], "argument --degree: needs a degree in [0, 2147483647], got '-1'"),
    (["--n-jobs", "0"], "argument --n-jobs: needs a nonzero integer (joblib's n_jobs), got '0'"),
])
def test_command_line_path_errors_name_the_option(capsys, options, message):
    # They named train_path's parameters (C_range, n_C, cv=), or nothing
    # ("Maximum allowed size exceeded"), after the data line.
    from svmscreen.cli import main
    try:
        status = main(["path", "data/heart_scale.xz", "--n-C", "3"] + options)
    except SystemExit as stop:          # argparse's own errors
        status = stop.code
    assert status == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


@pytest.mark.parametrize("value", ["-1e-3", "-2E-1", "-1.", "-.5", "-1"])
@pytest.mark.parametrize("option", ["--coef0", "--coef"])
def test_command_line_takes_a_negative_value_after_its_option(capsys, option, value):
    # argparse took -1e-3 (and -1.) for an option: "argument --coef0:
    # expected one argument", unless written --coef0=-1e-3
    from svmscreen.cli import main
    common = ["fit", "data/heart_scale.xz", "--kernel", "poly", "--cv", "0"]

    def model_lines():
        # the solver line's wall time differs between two runs
        return re.sub(r"[0-9.]+ s\b", "? s", capsys.readouterr().out).split("\n")[1:]

    assert main(common + [f"--coef0={value}"]) == 0
    joined = model_lines()
    assert main(common + [option, value]) == 0
    assert model_lines() == joined


@pytest.mark.parametrize("options, message", [
    (["--gamma", "-1e-3"], "argument --gamma: needs a finite gamma >= 0, got '-1e-3'"),
    (["--coef0", "-inf"], "argument --coef0: needs a finite coef0, got '-inf'"),
    (["-C", "-1e-3"], "argument -C: needs a positive, finite C, got '-1e-3'"),
])
def test_command_line_refuses_a_negative_value_in_its_own_words(capsys, options, message):
    from svmscreen.cli import main
    with pytest.raises(SystemExit) as stop:
        main(["fit", "data/heart_scale.xz", "--cv", "0"] + options)
    assert stop.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("compare", [[], ["--compare"]])
def test_command_line_n_jobs_without_joblib(monkeypatch, capsys, compare):
    # joblib is optional (svmscreen[parallel]): the path stopped with an
    # ImportError traceback after the data line (with --compare, a
    # ModuleNotFoundError from the workers' warm-up)
    from svmscreen.cli import main
    monkeypatch.setitem(sys.modules, "joblib", None)
    with pytest.raises(SystemExit) as stop:
        main(["path", "data/heart_scale.xz", "--n-C", "2", "--cv", "2", "--n-jobs", "2"]
             + compare)
    captured = capsys.readouterr()
    assert stop.value.code == 2 and captured.out == ""
    assert ("argument --n-jobs: 2 jobs need joblib: pip install 'svmscreen[parallel]'"
            in captured.err)
    # one job needs no joblib
    assert main(["path", "data/heart_scale.xz", "--n-C", "2", "--cv", "2", "--n-jobs", "1"]
                + compare) == 0


def test_command_line_path_of_an_empty_file(tmp_path, capsys):
    # the --cv check took the smallest class of none: "zero-size array to
    # reduction operation minimum which has no identity"
    from svmscreen.cli import main
    (tmp_path / "empty").write_bytes(b"")
    assert main(["path", str(tmp_path / "empty"), "--n-C", "3"]) == 2
    assert "svmscreen: error: X is empty: shape (0, 0)" in capsys.readouterr().err


def test_command_line_path_of_a_file_of_one_class(tmp_path, capsys):
    # three samples of one class under the default --cv 5: the error blamed
    # --cv ("larger than the smallest class"), and --cv 2 then said "one class"
    from svmscreen.cli import main
    (tmp_path / "one").write_text("1 1:0.5 2:1\n1 1:0.2\n1 2:0.3\n")
    assert main(["path", str(tmp_path / "one"), "--n-C", "3"]) == 2
    err = capsys.readouterr().err
    assert "--cv" not in err and "at least two classes, got 1" in err


def test_command_line_path_epsilon_grid_needs_two_classes(tmp_path, capsys):
    from svmscreen.cli import main
    X, y, _, _ = letter_classes(3, n_train=60)
    svmscreen.dump_svmlight_file(X, y, tmp_path / "abc.txt")
    assert main(["path", str(tmp_path / "abc.txt"), "--grid", "epsilon", "--cv", "0"]) == 2
    assert "--grid epsilon needs two classes, the file has 3" in capsys.readouterr().err


@pytest.mark.parametrize("options", [["--kernel", "sigmoid"],
                                     ["--kernel", "poly", "--coef0", "-1"]])
def test_command_line_epsilon_grid_needs_a_psd_kernel_in_the_options_words(capsys, options):
    # train_path's error, after the data line, said "give C or use
    # grid='log'": the command has no option for a grid of C
    from svmscreen.cli import main
    assert main(["path", "data/heart_scale.xz", "--grid", "epsilon"] + options) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("svmscreen: error: --grid epsilon needs a positive "
                                   "semi-definite kernel")
    assert f"which --kernel {options[1]} with --coef0" in captured.err
    assert captured.err.endswith("use --grid log\n")


def test_command_line_path_out_of_memory_is_a_message(monkeypatch, capsys):
    import svmscreen.cli

    def no_memory(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr(svmscreen.cli, "train_path", no_memory)
    assert svmscreen.cli.main(["path", "data/heart_scale.xz", "--n-C", "3"]) == 1
    assert capsys.readouterr().err == "svmscreen: error: not enough memory\n"


SIGMOID_UNSCREENED = ("screening='dvi' needs a positive semi-definite kernel, which "
                      "kernel='sigmoid' with coef0=0 need not be: solving without screening")


def test_command_line_warns_once_in_its_own_words(capsys):
    # The full path and the folds each warn from another source line: the
    # report had Python's two-line warning, source line included, twice.
    # -W error makes it the command's error (it was a traceback).
    from svmscreen.cli import main
    for action, kind, status in [("default", "warning", 0), ("error", "error", 2)]:
        with warnings.catch_warnings():
            warnings.simplefilter(action)
            assert main(["path", "data/heart_scale.xz", "--kernel", "sigmoid", "--n-C", "3",
                         "--cv", "2"]) == status
        assert capsys.readouterr().err.splitlines() == [
            f"svmscreen: {kind}: {SIGMOID_UNSCREENED}"]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_command_line_warns_once_with_workers(tmp_path, capfd, n_classes):
    """--n-jobs: the folds' (and pairs') warnings come from joblib's workers,
    which printed Python's two-line warning on their own stderr, once per
    worker; the command prints each once, in its own words."""
    from svmscreen.cli import main
    X, y, _, _ = letter_classes(n_classes, n_train=90)
    svmscreen.dump_svmlight_file(X, y, tmp_path / "train.txt")
    assert main(["path", str(tmp_path / "train.txt"), "--kernel", "sigmoid", "--n-C", "3",
                 "--cv", "2", "--n-jobs", "2"]) == 0
    assert capfd.readouterr().err.splitlines() == [f"svmscreen: warning: {SIGMOID_UNSCREENED}"]


def test_workers_warnings_reach_the_caller():
    """With n_jobs the caller gets the warnings of every fold, as without
    (the workers printed them on their stderr, past the caller's filters)."""
    X, y = load_dataset("heart_scale")
    caught = {}
    for n_jobs in [None, 2]:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            train_path(X, y, C=[1.0, 2.0], kernel="sigmoid", cv=3, n_jobs=n_jobs)
        caught[n_jobs] = sorted((str(w.message), w.category.__name__) for w in record)
    assert len(caught[None]) == 4 and caught[2] == caught[None]


def test_workers_warnings_on_threads_leave_the_filters_alone():
    """joblib's threading back end: the tasks' warnings reach the caller
    through the process's own handlers, and no task swaps the process-wide
    filters (catch_warnings on concurrent threads restores them out of
    order)."""
    joblib = pytest.importorskip("joblib")
    X, y = load_dataset("heart_scale")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        before = list(warnings.filters), warnings.showwarning
        with joblib.parallel_backend("threading", n_jobs=2):
            train_path(X, y, C=[1.0, 2.0], kernel="sigmoid", cv=3, n_jobs=2)
        # checked before this block restores them: a task's recorder left
        # installed took the caller's warnings
        assert (list(warnings.filters), warnings.showwarning) == before
    assert len(record) == 4


def test_command_line_path_with_more_classes(tmp_path, capsys):
    from svmscreen.cli import main
    X, y, _, _ = letter_classes(4, n_train=400)
    svmscreen.dump_svmlight_file(X, y, tmp_path / "abcd.txt")
    assert main(["path", str(tmp_path / "abcd.txt"), "--n-C", "4", "--cv", "3"]) == 0
    out = capsys.readouterr().out
    assert "4 classes, one-vs-one (6 pairs" in out and "best C =" in out
    assert len([line for line in out.splitlines() if line.strip()[:1].isdigit()]) == 4


def _printed(out, key):
    """The value after ``key`` on its line of ``svmscreen fit``'s output."""
    line = next(line for line in out.splitlines() if line.startswith(key))
    return line[len(key):].split()[0]


@pytest.mark.parametrize("n_classes", [2, 4])
def test_command_line_fit(tmp_path, capsys, n_classes):
    from svmscreen.cli import main
    X, y, X_test, y_test = letter_classes(n_classes, n_train=300, n_test=200)
    svmscreen.dump_svmlight_file(X, y, tmp_path / "train.txt")
    svmscreen.dump_svmlight_file(X_test, y_test, tmp_path / "test.txt")
    assert main(["fit", str(tmp_path / "train.txt"), "--test", str(tmp_path / "test.txt"),
                 "-C", "2", "--gamma", "0.1", "--cv", "3"]) == 0
    out = capsys.readouterr().out
    path = train_path(X, y, C=[2.0], gamma=0.1, cv=3)
    model = path.model(0)
    assert _printed(out, "train acc.") == f"{100 * np.mean(model.predict(X) == y):.2f}%"
    assert _printed(out, "test acc.") == f"{100 * np.mean(model.predict(X_test) == y_test):.2f}%"
    assert f"{model.n_support_ if n_classes > 2 else path.n_sv[0]} support vectors" in out
    if n_classes > 2:
        assert "one-vs-one (6 pairs)" in out
        sizes = np.array([held.sum() for _, held in cv_splits(3, y)])
        cv_accuracy = sizes @ path.cv_accuracy[:, 0] / sizes.sum()
        assert _printed(out, "3-fold CV acc.") == f"{100 * cv_accuracy:.2f}%"


@pytest.mark.parametrize("n_classes", [2, 4])
def test_command_line_fit_cv_accuracy_is_that_of_the_held_out_samples(tmp_path, capsys,
                                                                      n_classes):
    """svmscreen fit's CV figure is the share of samples predicted right
    when held out (svm-train -v's), whatever the number of classes; with
    more than two it was the mean of the folds' accuracies, which differs
    when the folds differ in size (4 classes of 8, 8, 7, 7 in 5 folds of
    8, 8, 6, 4, 4 samples: 30.83% for 9 of 30 samples right)."""
    from svmscreen.cli import main
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = 1.0 + np.arange(30) % n_classes
    svmscreen.dump_svmlight_file(X, y, tmp_path / "train.txt")
    assert main(["fit", str(tmp_path / "train.txt")]) == 0
    right = 0
    for train, held in cv_splits(5, y):
        model = train_path(X[train], y[train], C=[1.0], gamma=1 / 3, screening=None).model(0)
        right += np.sum(model.predict(X[held]) == y[held])
    assert _printed(capsys.readouterr().out, "5-fold CV acc.") == f"{100 * right / 30:.2f}%"


@pytest.mark.parametrize("n_classes", [2, 3])
def test_command_line_fit_test_file_with_more_features(tmp_path, capsys, n_classes):
    """A test file with a feature beyond the training file's largest index:
    svm-predict reads it (it counts in the RBF distance); svmscreen fit had
    refused it, after the fit.  The test accuracy is that of the model
    trained with that column present (all zero), gamma 1/(training width)."""
    from svmscreen.cli import main
    X, y, X_test, y_test = letter_classes(n_classes, n_train=120, n_test=60)
    X_test = sp.hstack([X_test, sp.csr_matrix(np.full((X_test.shape[0], 1), 0.5))]).tocsr()
    svmscreen.dump_svmlight_file(X, y, tmp_path / "train.txt")
    svmscreen.dump_svmlight_file(X_test, y_test, tmp_path / "test.txt")
    assert main(["fit", str(tmp_path / "train.txt"), "--test", str(tmp_path / "test.txt"),
                 "--cv", "0"]) == 0
    out = capsys.readouterr().out
    wide = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], X.shape[1] + 1))
    model = train_path(wide, y, C=[1.0], gamma=1.0 / X.shape[1], screening=None).model(0)
    assert _printed(out, "test acc.") == f"{100 * np.mean(model.predict(X_test) == y_test):.2f}%"
    assert f"{X.shape[1]} features" in out
    # a missing test file fails before the fit, and so does an empty one
    # (the model was reported, then the prediction's "X is empty: shape (0, 16)")
    assert main(["fit", str(tmp_path / "train.txt"), "--test", str(tmp_path / "none")]) == 2
    assert "model" not in capsys.readouterr().out
    (tmp_path / "empty").write_bytes(b"")
    assert main(["fit", str(tmp_path / "train.txt"), "--test", str(tmp_path / "empty")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"svmscreen: error: --test {tmp_path / 'empty'} has no samples\n"


@pytest.mark.parametrize("labels", [[1, 2, 2, 2, 2, 2, 2, 2], [1, 1, 1, 2, 2, 2, 2, 3, 3, 3]])
def test_command_line_fit_with_a_class_smaller_than_cv(tmp_path, capsys, labels):
    """--cv 5 is fit's default: a class of fewer samples gets the model
    and a line saying why there is no CV figure, for two classes and more
    (three classes had stopped before the model, two after it with an
    error about a fold's training part)."""
    from svmscreen.cli import main
    X = np.linspace(0.0, 1.0, len(labels))[:, None]
    svmscreen.dump_svmlight_file(X, np.array(labels, dtype=float), tmp_path / "small.txt")
    assert main(["fit", str(tmp_path / "small.txt")]) == 0
    out = capsys.readouterr().out
    assert "train acc." in out
    assert "5-fold CV acc. not computed: cv=5 is larger than the smallest class" in out


def test_command_line_fit_of_a_file_of_one_class(tmp_path, capsys):
    """fit takes two classes or more: a file of one class was refused
    with fit_binary's "y must contain exactly two classes"."""
    from svmscreen.cli import main
    (tmp_path / "one").write_text("1 1:0.5 2:1\n1 1:0.2\n1 2:0.3\n")
    assert main(["fit", str(tmp_path / "one"), "--cv", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "svmscreen: error: y must contain at least two classes, got 1: [1.0]\n"


def test_command_line_fit_of_a_file_without_features(tmp_path, capsys):
    """A file whose rows have labels only: svm-train leaves the default
    gamma at 0 (no largest index to divide by); svmscreen fit divided by
    the width 0 and stopped with a ZeroDivisionError traceback."""
    from svmscreen.cli import main
    (tmp_path / "labels").write_text("1\n-1\n1\n-1\n")
    assert main(["fit", str(tmp_path / "labels")]) == 2
    assert "svmscreen: error: X is empty" in capsys.readouterr().err
    # a test file with features widens the training rows; gamma stays 0
    (tmp_path / "test").write_text("1 1:1\n-1 1:-1\n")
    assert main(["fit", str(tmp_path / "labels"), "--test", str(tmp_path / "test"),
                 "--cv", "0"]) == 0
    assert "gamma = 0," in capsys.readouterr().out

# --------------------------------------------- screening on and off (issue 4)
@pytest.mark.parametrize("rule", SCREENING_RULES)
@pytest.mark.parametrize("name, kernel, fit_intercept, class_weight", [
    ("heart_scale", "rbf", True, None),
    ("heart_scale", "linear", False, None),
    ("breast-cancer_scale", "linear", True, {1: 3.0}),
    ("diabetes_scale", "rbf", True, {1: 3.0}),
])
def test_screened_path_equals_unscreened_path(rule, name, kernel, fit_intercept, class_weight):
    """At tol 1e-6, every C of the screened path has the unscreened path's
    objective (1e-6 relative) and decision values, and no rule puts a sample
    back (every rule here is safe; the KKT check would catch one that is not)."""
    X, y = load_dataset(name)
    grid = np.geomspace(1e-2, 1e2, 13)
    options = dict(C=grid, kernel=kernel, fit_intercept=fit_intercept,
                   class_weight=class_weight, tol=1e-6)
    plain = train_path(X, y, screening=None, **options)
    screened = train_path(X, y, screening=rule, **options)
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=1e-6)
    assert screened.put_back.sum() == 0
    if rule in ("dvi", "it"):
        assert (screened.screened_zero + screened.screened_bound).sum() > 0
    for t in range(len(grid)):
        np.testing.assert_allclose(screened.model(t).decision_function(X),
                                   plain.model(t).decision_function(X), atol=1e-3)


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 40), d=st.integers(1, 4),
       kernel=st.sampled_from(["linear", "rbf"]), rule=st.sampled_from(SCREENING_RULES),
       fit_intercept=st.booleans(), weight=st.sampled_from([1.0, 0.2, 5.0]),
       log_c_low=st.floats(-2.0, 0.5), span=st.floats(0.5, 3.0))
def test_screened_path_equals_unscreened_path_random(seed, n, d, kernel, rule, fit_intercept,
                                                      weight, log_c_low, span):
    """The same on random problems, at tol 1e-9: objective, nothing put back,
    and (RBF, where the optimum alpha is unique) alpha itself."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + rng.choice([0.0, 2.0]) * rng.normal(size=d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = 1.0, -1.0
    grid = np.geomspace(10.0 ** log_c_low, 10.0 ** (log_c_low + span), 6)
    options = dict(C=grid, kernel=kernel, gamma=1.0 / d, fit_intercept=fit_intercept,
                   class_weight={1.0: weight}, tol=1e-9)
    plain = train_path(X, y, screening=None, **options)
    screened = train_path(X, y, screening=rule, **options)
    scale = np.maximum(np.abs(plain.objective), 1e-3)
    assert np.all(np.abs(screened.objective - plain.objective) <= 1e-7 * scale)
    assert screened.put_back.sum() == 0
    if kernel == "rbf":
        for t, C in enumerate(grid):
            np.testing.assert_allclose(screened.alphas[t], plain.alphas[t],
                                       atol=1e-4 * C * max(weight, 1.0))


@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(6, 30),
       data=st.sampled_from(["opposite_duplicates", "one_of_a_class", "identical_rows",
                             "zero_weights"]),
       kernel=st.sampled_from(["linear", "rbf", "poly", "precomputed"]),
       rule=st.sampled_from(SCREENING_RULES), fit_intercept=st.booleans(),
       max_iter=st.sampled_from([1, 3, 10]), log_c_low=st.floats(-3.0, 1.0))
def test_a_path_through_unconverged_steps_on_degenerate_data_is_fresh_solves(
        seed, n, data, kernel, rule, fit_intercept, max_iter, log_c_low):
    """Degenerate data (a point given twice with opposite labels, a class of
    one sample, rows all equal, samples of weight 0) and a max_iter so small
    that some steps stop short: every C the path reports solved has
    fit_binary's objective at that C (tol 1e-3, within 2e-3 relative), from
    whatever warm start and screening reference the unconverged steps before
    it left, and no rule puts a sample back."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = 1.0, -1.0
    weight = None
    if data == "opposite_duplicates":
        X[1::2] = X[0::2][:n // 2]
        y[1::2] = -y[0::2][:n // 2]
    elif data == "one_of_a_class":
        y[:] = -1.0
        y[rng.integers(n)] = 1.0
    elif data == "identical_rows":
        X[:] = X[0]
    else:
        weight = rng.choice([0.0, 1.0, 2.0], size=n)
        weight[:2] = 1.0
    if kernel == "precomputed":
        X = X @ X.T
    options = dict(kernel=kernel, fit_intercept=fit_intercept, sample_weight=weight,
                   tol=1e-3, **({"gamma": 0.5, "coef0": 1.0, "degree": 2}
                                if kernel == "poly" else {}))
    grid = np.geomspace(10.0 ** log_c_low, 10.0 ** (log_c_low + 3), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", svmscreen.ConvergenceWarning)
        path = train_path(X, y, C=grid, screening=rule, max_iter=max_iter, **options)
    assert path.put_back.sum() == 0
    for t, C in enumerate(grid):
        if path.status[t] != "optimal":
            continue
        fresh = svmscreen.fit_binary(X, y, C=C, **options)
        assert fresh.status_ == "optimal"
        assert abs(path.objective[t] - fresh.objective_) <= 2e-3 * max(
            abs(fresh.objective_), 1e-12 * C)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 40), d=st.integers(1, 4),
       kernel=st.sampled_from(["linear", "rbf"]), rule=st.sampled_from(SCREENING_RULES),
       fit_intercept=st.booleans(), log_s=st.floats(-3.0, 3.0))
def test_screened_path_is_invariant_under_transformations_of_the_data(
        seed, n, d, kernel, rule, fit_intercept, log_s):
    """Metamorphic: rows permuted, labels swapped, one sample given twice
    where the reference gives it sample weight 2, and X scaled by s with C
    divided by s^2 (linear: w scales by 1/s) or gamma by s^2 (RBF: the same
    kernel), all at once, leave the screened path the unscreened one's: the
    objective (times s^2 for linear) and f on fixed points (taken s times as
    far).  A rule whose geometry or gap widening were not scale-invariant,
    or a tie broken by sample order, would show here."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + rng.choice([0.0, 2.0]) * rng.normal(size=d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = 1.0, -1.0
    grid = np.geomspace(0.05, 20.0, 5)
    gamma = 1.0 / d
    weight = np.ones(n)
    weight[0] = 2.0
    reference = train_path(X, y, C=grid, kernel=kernel, gamma=gamma, sample_weight=weight,
                           fit_intercept=fit_intercept, screening=None, tol=1e-9)
    s = 10.0 ** log_s
    rows = rng.permutation(np.append(np.arange(n), 0))
    options = (dict(C=grid / s**2, gamma=gamma) if kernel == "linear"
               else dict(C=grid, gamma=gamma / s**2))
    moved = train_path(s * X[rows], -y[rows], kernel=kernel, fit_intercept=fit_intercept,
                       screening=rule, tol=1e-9, **options)
    objective = moved.objective * (s**2 if kernel == "linear" else 1.0)
    scale = np.maximum(np.abs(reference.objective), 1e-3)
    assert np.all(np.abs(objective - reference.objective) <= 1e-7 * scale)
    assert moved.put_back.sum() == 0
    points = rng.normal(size=(10, d))
    for t in range(len(grid)):
        f = reference.model(t).decision_function(points)
        # the labels swapped: f > 0 now predicts the other class
        np.testing.assert_allclose(-moved.model(t).decision_function(s * points), f,
                                   atol=1e-5 * (1.0 + np.abs(f).max()))


@pytest.mark.parametrize("rule", SCREENING_RULES)
def test_steps_whose_rule_proves_nothing_are_the_unscreened_solves(rule):
    """A path step whose rule proves nothing (its step returns None) solves
    with no variable fixed: on letter pairs whose steps are too long for any
    rule (C x 30), every pair's solutions and iteration counts are the
    unscreened path's, bit for bit."""
    from svmscreen import path as path_module
    X, y = load_dataset("letter.scale")
    keep = np.isin(y[:300], [1, 2, 3])
    X, y = X[:300][keep], y[:300][keep]
    options = dict(C=[1.0, 30.0, 900.0], gamma=1 / 16)
    calls = []
    make = path_module.make_screening

    def recording(*args):
        step = make(*args)
        if step is None:
            return None

        def recorded(*step_args):
            calls.append(step(*step_args))
            return calls[-1]
        for name in ("lookahead", "covers", "set_upper"):
            if hasattr(step, name):
                setattr(recorded, name, getattr(step, name))
        return recorded
    path_module.make_screening = recording
    try:
        screened = train_path(X, y, screening=rule, **options)
    finally:
        path_module.make_screening = make
    plain = train_path(X, y, screening=None, **options)
    assert calls and all(masks is None for masks in calls)
    assert screened.n_iter.tolist() == plain.n_iter.tolist()
    for ours, theirs in zip(screened.pair_paths, plain.pair_paths):
        assert np.array_equal(np.array(ours.alphas), np.array(theirs.alphas))
        assert np.array_equal(ours.intercept, theirs.intercept)


@pytest.mark.parametrize("rule", ["essnsv", "dvi"])
def test_screened_epsilon_path_equals_unscreened(rule):
    """On the epsilon grid (values not known in advance; the domes' larger
    reference is then the optimum at C_max) screening changes nothing."""
    X, y = load_dataset("heart_scale")
    options = dict(grid="epsilon", epsilon=1e-2, C_range=(1e-2, 10.0), kernel="linear",
                   tol=1e-6)
    plain = train_path(X, y, screening=None, **options)
    screened = train_path(X, y, screening=rule, **options)
    # The grid's steps depend on each solution, equal to tol: so do the C.
    np.testing.assert_allclose(screened.C, plain.C, rtol=1e-5)
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=1e-5)
    assert screened.put_back.sum() == 0
    assert (screened.screened_zero + screened.screened_bound).sum() > 0


@pytest.mark.parametrize("rule", ["it", "bt2"])
def test_shat_budget_follows_the_solve_when_q_does_not_fit(rule):
    """When Q does not fit in the cache, a BT2/IT step computes Q s from at
    most max(1, SHAT_KERNEL_SHARE x the previous solve's kernel evaluations / n)
    columns; screening still changes nothing."""
    from svmscreen.path import SHAT_KERNEL_SHARE, _Problem, make_screening, run_path
    X, y = load_dataset("australian_scale")
    signs = np.where(y == y.max(), 1.0, -1.0)
    n = signs.size
    grid = np.geomspace(1e-2, 1e2, 25)
    results = {}
    for screened in (False, True):
        problem = _Problem(X, signs, np.ones(n), "rbf", 1.0 / X.shape[1], 0.0, 3, 0.5, True)
        assert not problem.q_fits_cache
        Q = problem.Q
        step = make_screening(rule, problem, True)
        last = [Q.kernel_evals]
        excess = []

        def counted(*args):
            solve_evals, start = Q.kernel_evals - last[0], Q.kernel_evals
            masks = step(*args)
            excess.append(Q.kernel_evals - start - max(n, SHAT_KERNEL_SHARE * solve_evals))
            last[0] = Q.kernel_evals
            return masks
        rows, _ = run_path(problem, grid, screening=counted if screened else None, tol=1e-6,
                           shrinking=True, max_iter=None, keep="summary")
        results[screened] = rows
    assert len(excess) == len(grid) - 1 and max(excess) <= 0
    plain = np.array([row["objective"] for row in results[False]])
    np.testing.assert_allclose([row["objective"] for row in results[True]], plain, rtol=1e-6)
    assert sum(row["put_back"] for row in results[True]) == 0


def _extrapolation_problem(seed, n, fit_intercept):
    from svmscreen.path import _Problem
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) + 0.8 * rng.normal(size=3)
    signs = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    signs[:2] = 1.0, -1.0
    hi_unit = np.where(signs > 0, 1.0, rng.choice([1.0, 2.5]))
    return _Problem(X, signs, hi_unit, "rbf", 0.5, 0.0, 3, 10.0, fit_intercept)


def _tight_solution(problem, C):
    from svmscreen._solver import solve
    return solve(problem.Q, problem.p, problem.lo, problem.hi_unit * C, np.zeros(problem.n),
                 y=problem.y, tol=1e-12)


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(6, 30), fit_intercept=st.booleans(),
       log_c=st.floats(-1.5, 1.5), ratio=st.floats(0.1, 5.0))
def test_extrapolated_start_is_feasible_with_its_exact_gradient(seed, n, fit_intercept, log_c,
                                                               ratio):
    """The path's extrapolated warm start lies in the box, keeps y'a, and
    carries Q a + p to round-off, whatever the two previous points."""
    from svmscreen.path import extrapolated_start, warm_start
    problem = _extrapolation_problem(seed, n, fit_intercept)
    C_before, C_prev = 10.0 ** log_c, 1.3 * 10.0 ** log_c
    C = C_prev + ratio * (C_prev - C_before)
    before, previous = _tight_solution(problem, C_before), _tight_solution(problem, C_prev)
    hi = problem.hi_unit * C
    alpha0, grad0, _ = warm_start(previous.alpha, previous.grad, problem.p, C / C_prev, hi,
                               problem.Q)
    start, grad = extrapolated_start(alpha0, grad0, previous.alpha, before.alpha, ratio,
                                     problem, hi)
    assert np.all(start >= 0.0) and np.all(start <= hi)
    if fit_intercept:
        assert abs(problem.y @ start - problem.y @ alpha0) <= 1e-9 * hi.sum()
    exact = problem.Q.add_columns(np.arange(n), start, problem.p.copy())     # Q a + p afresh
    np.testing.assert_allclose(grad, exact, atol=1e-9 * (1.0 + np.abs(exact).max()))


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(6, 30), fit_intercept=st.booleans(),
       log_c=st.floats(-1.5, 1.5))
def test_extrapolated_start_is_the_optimum_while_the_sets_stay(seed, n, fit_intercept, log_c):
    """Within a segment of the path (no sample changes between 0, free and
    the bound at the three C), the optimum is affine in C: the start is the
    optimum, where the scaled start is not (when there are free samples)."""
    from hypothesis import assume
    from svmscreen.path import extrapolated_start, warm_start
    problem = _extrapolation_problem(seed, n, fit_intercept)
    grid = 10.0 ** log_c * np.array([1.0, 1.02, 1.04])
    sols = [_tight_solution(problem, C) for C in grid]
    sets = [np.sign(np.round(s.alpha / (problem.hi_unit * C), 7))
            + (np.round(s.alpha / (problem.hi_unit * C), 7) >= 1) for s, C in zip(sols, grid)]
    assume(all(np.array_equal(sets[0], other) for other in sets[1:]))
    hi = problem.hi_unit * grid[2]
    alpha0, grad0, _ = warm_start(sols[1].alpha, sols[1].grad, problem.p, grid[2] / grid[1], hi,
                               problem.Q)
    start, _ = extrapolated_start(alpha0, grad0, sols[1].alpha, sols[0].alpha,
                                  (grid[2] - grid[1]) / (grid[1] - grid[0]), problem, hi)
    # (RBF on distinct points: the optimum alpha is unique)
    np.testing.assert_allclose(start, sols[2].alpha, atol=1e-6 * grid[2])
    scaled_error = np.abs(alpha0 - sols[2].alpha).max()
    if np.any((sets[0] == 1)):                     # a free sample: the scaled start misses
        assert np.abs(start - sols[2].alpha).max() <= scaled_error + 1e-9 * grid[2]


@settings(max_examples=examples(200), deadline=None)
@given(C_prev=st.floats(1e-4, 1e4), scale=st.floats(1.0, 50.0),
       weights=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=8))
@example(C_prev=6554.054950137794, scale=10.0, weights=[1.0])   # C / C_prev = 10 + 2 ulp
def test_warm_start_keeps_bound_samples_exactly_at_the_bound(C_prev, scale, weights):
    """A sample at its bound at C_prev starts exactly at its bound at
    C = scale * C_prev (C_prev * scale can round one ulp below C)."""
    from svmscreen.path import snap_to_upper, warm_start
    hi_unit = np.array(weights)
    C = C_prev * scale
    hi_prev, hi = hi_unit * C_prev, hi_unit * C
    alpha0 = snap_to_upper(np.minimum(hi_prev * (C / C_prev), hi), hi)
    np.testing.assert_array_equal(alpha0, hi)

    # The gradient is not checked here, so Q is a stub whose columns are
    # never read.  Its add_columns serves the refresh above
    # GRADIENT_REFRESH_SCALE: the ratio C / C_prev that warm_start gets
    # rounds above 10 for some scale <= 10 (the @example), where a guard on
    # scale <= 10 called it with no add_columns at all.
    class Q:
        @staticmethod
        def add_columns(rows, coef, out):
            return out
    start, _, _ = warm_start(hi_prev, np.zeros(hi.size), -np.ones(hi.size), C / C_prev, hi, Q)
    np.testing.assert_array_equal(start, hi)


def test_screened_fold_paths_take_the_unscreened_intercept():
    """Regression: on an iris fold (classes 1 and 2, gamma 0.1) a bound
    sample scaled to one ulp below C = 0.052 was left there by the screened
    solve, counted as free, and set b = 0.185 where the unscreened path (and
    LIBSVM's rule, the midpoint with no free sample) gives -0.030."""
    from sklearn.datasets import load_iris
    from sklearn.model_selection import StratifiedKFold
    X, y = load_iris(return_X_y=True)
    train = list(StratifiedKFold(5).split(X, y))[2][0]
    train = train[y[train] > 0]
    X, y = X[train], y[train]
    grid = np.geomspace(0.01, 1000, 15)
    screened = train_path(X, y, C=grid, gamma=0.1, tol=1e-8, screening="dvi")
    plain = train_path(X, y, C=grid, gamma=0.1, tol=1e-8, screening=None)
    # (with free samples both are within the tol-1e-8 solves of each other)
    np.testing.assert_allclose(screened.intercept, plain.intercept, atol=1e-6)
    for t, C in enumerate(grid):
        alpha = screened.alphas[t]
        assert not np.any((alpha > C * (1 - 1e-12)) & (alpha < C))


def test_models_report_a_solve_that_stopped_at_max_iter():
    """A C whose solve reached max_iter gives a model with status_
    "max_iter", as fit_binary's (it was always "optimal"); so does the
    ramp's model when its last inner solve did."""
    import warnings
    X, y = load_dataset("heart_scale")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = train_path(X, y, n_C=3, max_iter=5, screening=None)
        ramp = svmscreen.train_ramp(X, y, C=1.0, max_outer=1, max_iter=5)
        full = train_path(X, y, n_C=3, screening=None)
    assert path.status.tolist() == ["max_iter"] * 3
    assert path.model(-1).status_ == "max_iter" and ramp.model.status_ == "max_iter"
    assert full.model(-1).status_ == "optimal"


def test_path_and_fit_binary_take_the_same_intercept_without_free_svs():
    """Balanced class weights make alpha = C w (every sample at its bound)
    feasible at small C, and the optimal intercepts an interval.  From 0,
    SMO left a variable a few ulps inside its bound, which as a "free" SV
    set b to its end of the interval; the path (warm-started at the bound)
    took the midpoint, and their predictions differed."""
    from sklearn.model_selection import StratifiedKFold
    X, y = load_dataset("heart_scale")
    X = X.toarray()
    y = np.where(X[:, 0] > 0.3, 2.0, y)
    train, _ = next(StratifiedKFold(4).split(X, y))
    X, y = X[train], y[train]
    pair = (y == -1) | (y == 2)
    X, y = X[pair], y[pair]
    Cs = np.geomspace(0.01, 100, 9)[:4]
    weights = {-1.0: 0.7651515151515151, 2.0: 1.2469135802469136}
    path = svmscreen.train_path(X, y, C=Cs, gamma=0.01, tol=1e-6, class_weight=weights,
                                screening=None)
    for t, C in enumerate(Cs):
        alone = svmscreen.fit_binary(X, y, C=C, gamma=0.01, tol=1e-6, class_weight=weights)
        assert path.model(t).intercept_ == pytest.approx(alone.intercept_, abs=1e-9), C


def test_a_single_class_with_weight_is_refused():
    """Weights that leave one class alone with a positive weight give every
    other alpha 0, a constant model; scikit-learn's SVC refuses it, and so
    do fit_binary and train_path (they had returned it)."""
    X, y = load_dataset("heart_scale")
    weight = np.where(y > 0, 1.0, 0.0)
    for run in (lambda: svmscreen.fit_binary(X, y, sample_weight=weight),
                lambda: train_path(X, y, n_C=3, sample_weight=weight)):
        with pytest.raises(ValueError, match="only class .* with a positive weight"):
            run()
    with pytest.raises(ValueError, match="random_state must be >= 0"):
        train_path(X, y, n_C=3, cv=3, random_state=-1)
    with pytest.raises(TypeError, match="C must be a number"):
        train_path(X, y, C=True)


def _violation(K, sign, alpha, hi):
    """LIBSVM's stopping criterion m(a) - M(a) from an exact gradient."""
    v = -sign * (sign * (K @ (sign * alpha)) - 1.0)
    up = ((alpha < hi) & (sign > 0)) | ((alpha > 0) & (sign < 0))
    low = ((alpha < hi) & (sign < 0)) | ((alpha > 0) & (sign > 0))
    return v[up].max() - v[low].min()


def test_a_long_path_refreshes_its_scaled_gradient():
    # 50 C over [1e-6, 1e4]: each warm start scaled the last gradient, its
    # round-off with it (1e10-fold in all), and the last solve stopped, as
    # "optimal", at a true violation of 58 tol.
    from svmscreen._kernels import Kernel, compute_layout
    X, y = load_dataset("australian_scale")
    path = train_path(X, y, C_range=(1e-6, 1e4), n_C=50, tol=1e-6, screening=None)
    sign = np.where(y == path.classes_[1], 1.0, -1.0)
    K = Kernel(compute_layout(X), "rbf", path.gamma, 0.0, 3).rows(np.arange(y.size))
    for t in (25, 40, 49):
        assert _violation(K, sign, path.alphas[t], path.C[t]) <= 2e-6, t
    assert path.objective[-1] == pytest.approx(
        svmscreen.fit_binary(X, y, C=1e4, tol=1e-6).objective_, rel=1e-9)


def test_a_huge_step_starts_cold():
    # From C = 1 straight to 1e16 the scaled start put the bound samples at
    # 1e16, and the solve brought them down to the optimum's ~100 with eps C
    # errors: -29192 reported as optimal, where the optimum is -4980.41.
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, C=[1.0, 1e16], screening=None)
    assert path.objective[-1] == pytest.approx(
        svmscreen.fit_binary(X, y, C=1e16).objective_, rel=1e-9)


def test_no_hard_margin_shortcut_after_max_iter():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    X[:, 0] += 0.3 * y
    with pytest.warns(svmscreen.ConvergenceWarning):
        path = train_path(X, y, C=[1e4, 1e5, 1e6, 1e7], kernel="linear", tol=1e-6,
                          max_iter=20, screening=None)
    # each C gets its own max_iter: none reuses an unconverged solution
    assert np.all(path.n_iter == 20) and np.all(path.status == "max_iter")


def test_an_epsilon_step_after_max_iter_says_why_it_is_not_certified():
    # it had said "not epsilon-accurate even at tol=...", as if tightening
    # tol had failed, where the solve had stopped at max_iter
    X, y = load_dataset("heart_scale")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_path(X, y, grid="epsilon", C_range=(0.01, 0.02), max_iter=5)
    steps = [str(w.message) for w in caught if "not certified" in str(w.message)]
    assert steps and all("the solve stopped at max_iter before it was epsilon-accurate"
                         in message for message in steps)


def test_an_epsilon_step_from_w_zero_is_certified_only_by_an_accurate_reference():
    # With w = 0 at the reference (a zero kernel) epsilon_step returned an
    # infinite step whatever the reference's gap: a solve stopped at
    # max_iter=1 (gap 0.2 at dual value 0.2) went to C_max, unwarned
    X = np.zeros((6, 2))
    y = np.array([1, 1, 1, 1, -1, -1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = train_path(X, y, grid="epsilon", C_range=(0.1, 100.0), kernel="linear",
                          max_iter=1, screening=None)
    assert any("the solve stopped at max_iter before it was epsilon-accurate"
               in str(w.message) for w in caught)
    assert path.C[1] < 1.0
    # from an accurate reference w = 0 certifies every larger C (alpha(C)
    # is C alpha(C_prev) on a zero kernel)
    exact = train_path(X, y, grid="epsilon", C_range=(0.1, 100.0), kernel="linear",
                       screening=None)
    assert exact.C.tolist() == [0.1, 100.0]
    assert exact.model(1).objective_ == pytest.approx(1000 * exact.model(0).objective_)
    # alpha = 0 (dual value 0, gap C n) certifies nothing
    from svmscreen.path import epsilon_step
    p = -np.ones(6)
    assert epsilon_step(0.1, np.zeros(6), p.copy(), p, np.zeros(6), np.full(6, 0.1),
                        y.astype(float), 1e-3) is None


@pytest.mark.parametrize("C_low", [1e-17, 1e-200, 1e-300])
def test_epsilon_path_from_a_tiny_C(C_low):
    # At C = 1e-17, W0 = a'Qa read from the gradient (G = Q a - 1) cancelled
    # to 0, which read as an infinite step: the path went to C_max at once.
    # Below C ~ 1e-160, W0 (quadratic in alpha) underflowed to 0 even from
    # Q's columns, with the same jump.
    X, y = load_dataset("heart_scale")
    path = train_path(X, y, grid="epsilon", epsilon=1e-3, C_range=(C_low, 1e3))
    assert len(path) > 100 and path.C[1] < 1e-2


@pytest.mark.parametrize("C_low", [1e-315, 5e-324])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_epsilon_path_from_a_subnormal_C(C_low, fit_intercept):
    # Below C ~ 1e-308 the step s_max ~ 1 / C_prev overflowed to inf, and the
    # path went from C_low to C_max in one uncertified step (two values, and
    # numpy's "overflow encountered in scalar divide").  From alpha = C_low
    # (every sample at its bound, exact there) the first step does not depend
    # on C_low: it ends where the one from 1e-300 does.
    X, y = load_dataset("heart_scale")
    options = dict(grid="epsilon", epsilon=1e-3, fit_intercept=fit_intercept)
    normal = train_path(X, y, C_range=(1e-300, 1e3), **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = train_path(X, y, C_range=(C_low, 1e3), **options)
    assert len(path) > 100
    assert path.C[1] == pytest.approx(normal.C[1], rel=1e-12)


@pytest.mark.parametrize("rule", ["bt2", "it"])
def test_two_ball_state_after_a_huge_step_screens_nothing_wrong(rule):
    # BT2/IT carry Q s-hat to the next step.  From C = 1e-20 to 0.15
    # (q ~ 1e19) Q s came from q (G + 1), whose round-off (the gradient's
    # floor, times q) left it O(1) off; the next steps reused it, scaled,
    # and proved free samples to be at a bound (15 and 23 put back).
    rng = np.random.default_rng(0)
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(30, 5)) + 0.7 * y[:, None]
    options = dict(C=[1e-20, 0.15, 0.45, 0.9], kernel="rbf", gamma=0.4, tol=1e-3)
    screened = train_path(X, y, screening=rule, **options)
    plain = train_path(X, y, screening=None, **options)
    assert screened.put_back.tolist() == [0, 0, 0, 0]
    if rule == "it":      # (BT2 alone proves nothing here once Q s is right)
        assert screened.screened_zero.sum() + screened.screened_bound.sum() > 0
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=1e-6)


@pytest.mark.parametrize("rule", ["dvi", "it", "bt2", "ssnsv", "essnsv"])
def test_path_box_underflow_at_small_C(rule):
    """C = 1e-295 times a sample_weight of 1e-20 underflows that sample's box
    to 0 (and 1e-290 to a subnormal): the boxes of those steps are not
    proportional, and the ball rules raised 'hi and hi_ref must be positive,
    finite and proportional'.  Such steps are solved without screening."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.array([0, 1] * 6)
    weight = np.ones(12)
    weight[3] = 1e-20
    grid = [1e-295, 1e-290, 1e-2, 1.0]
    plain = svmscreen.train_path(X, y, C=grid, kernel="linear", sample_weight=weight,
                                 screening=None, tol=1e-8)
    path = svmscreen.train_path(X, y, C=grid, kernel="linear", sample_weight=weight,
                                screening=rule, tol=1e-8)
    assert np.all(path.put_back == 0)
    np.testing.assert_allclose(path.objective, plain.objective, rtol=1e-6)


@pytest.mark.parametrize("rule", ["it", "dvi"])
@pytest.mark.parametrize("kernel, weight_pos", [("linear", 1.0), ("rbf", 1.0), ("rbf", 3.0)])
def test_screened_path_matches_libsvm_at_every_C(rule, kernel, weight_pos):
    """Issue 4: with an intercept and screening ON (the default rule, and
    DVI), every C of the path has the objective of a separate libsvm-official
    fit at that C within 1e-6 relative, at tol 1e-6; nothing is put back."""
    X, y = load_dataset("heart_scale")
    gamma = 1.0 / X.shape[1]
    grid = np.geomspace(1e-2, 1e2, 25)     # fine enough that every rule screens
    path = train_path(X, y, C=grid, kernel=kernel, gamma=gamma, screening=rule, tol=1e-6,
                      class_weight={1.0: weight_pos})
    assert path.put_back.sum() == 0
    assert (path.screened_zero + path.screened_bound).sum() > 0
    for t, C in enumerate(grid):
        reference = libsvm_objective(X, y, C, gamma, 1e-6, kernel, weight_pos)
        assert path.objective[t] == pytest.approx(reference, rel=1e-6), C
