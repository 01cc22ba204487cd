"""The scikit-learn estimators (svmscreen.estimators): scikit-learn's own
estimator checks, agreement with sklearn.svm.SVC and with svmscreen's
functions, and their use in pipelines and grid searches."""
import warnings

import numpy as np
import pytest
from conftest import load_dataset

sklearn = pytest.importorskip("sklearn")
from sklearn import svm  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import svmscreen  # noqa: E402
from svmscreen.estimators import SVC, RampSVC, SVCPathCV  # noqa: E402

# scikit-learn lists the same two checks as expected failures of its own SVC
# (sklearn/utils/_test_common/instance_generator.py): integer sample weights
# are not repeated samples to the check's 1e-7, because gamma="scale" reads
# the variance of X, which repeated rows change, and both fits stop at tol.
# RampSVC's defaults are the same (its CCCP steps stop at tol too).
# test_integer_sample_weights_repeat_samples and
# test_ramp_svc_passes_the_weight_checks_at_a_fixed_gamma show the
# equivalence where it holds (a fixed gamma, a tight tol).
_WEIGHTS_ARE_NOT_REPEATS = {
    check: "gamma='scale' depends on repeated rows; the fits agree to tol, not 1e-7"
    for check in ("check_sample_weight_equivalence_on_dense_data",
                  "check_sample_weight_equivalence_on_sparse_data")}


def _expected_failures(estimator):
    return _WEIGHTS_ARE_NOT_REPEATS


@parametrize_with_checks([SVC(), SVC(probability=True, random_state=0), SVCPathCV(Cs=5, cv=3),
                          RampSVC()],
                         expected_failed_checks=_expected_failures)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_svc_matches_scikit_learn_on_three_classes(kernel):
    X, y = load_iris(return_X_y=True)
    ours = SVC(kernel=kernel, C=3.0, tol=1e-8).fit(X, y)
    theirs = svm.SVC(kernel=kernel, C=3.0, tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    # scikit-learn's LIBSVM rounds its kernel cache to float32, so the two
    # optima differ by that rounding: up to 5e-5 here (7e-8 for rbf)
    for shape in ("ovr", "ovo"):
        ours.set_params(decision_function_shape=shape)
        theirs.set_params(decision_function_shape=shape)
        np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                                   atol=5e-4)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=5e-4)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, atol=2e-3)


@pytest.mark.parametrize("kernel, coef0", [("rbf", 0.0), ("poly", 1.0)])
def test_gamma_zero_is_a_constant_kernel_as_in_scikit_learn(kernel, coef0):
    """scikit-learn takes gamma=0.0 literally (a constant kernel), where
    LIBSVM's svm-train reads -g 0 as 1/n_features; the estimators follow
    scikit-learn (they had refused it), train_path too, screened or not."""
    X, y = load_iris(return_X_y=True)
    ours = SVC(kernel=kernel, gamma=0.0, coef0=coef0, C=2.0, tol=1e-8).fit(X, y)
    theirs = svm.SVC(kernel=kernel, gamma=0.0, coef0=coef0, C=2.0, tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               atol=1e-6)
    binary = y < 2
    plain, screened = (svmscreen.train_path(X[binary], y[binary], n_C=6, kernel=kernel,
                                            gamma=0.0, coef0=coef0, tol=1e-8, screening=rule)
                       for rule in (None, "dvi"))
    np.testing.assert_allclose(screened.objective, plain.objective, rtol=1e-10)
    assert screened.put_back.sum() == 0


def test_svc_binary_matches_scikit_learn_with_weights_and_sparse_input():
    X, y = load_dataset("heart_scale")
    X = X.copy()
    # scikit-learn's SVC takes CSR with 32-bit indices only (ours takes both)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    options = dict(C=2.0, gamma=0.05, tol=1e-8, class_weight="balanced")
    ours = SVC(**options).fit(X, y, sample_weight=weight)
    theirs = svm.SVC(**options).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    # (scikit-learn keeps dual_coef_ sparse after a sparse fit; ours is
    # dense.)  Its float32 kernel cache moves the optimum by up to 4e-5 here.
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_.toarray(), atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               atol=1e-4)
    # the binary model is fit_binary's, to the tol-1e-8 solves (SVC orients
    # a pair by its first class, fit_binary by the second: the mirrored
    # problem, whose iterates differ at round-off)
    alone = svmscreen.fit_binary(X, y, C=2.0, gamma=0.05, tol=1e-8,
                                 sample_weight=weight * ours.class_weight_[(y > 0) * 1])
    np.testing.assert_allclose(ours.decision_function(X), alone.decision_function(X),
                               atol=1e-6)


@pytest.mark.filterwarnings("ignore::FutureWarning")   # sklearn 1.9 deprecates probability
@pytest.mark.parametrize("classes", [[0, 1, 2], [0, 1], [1, 2]])
def test_probabilities_are_libsvm_platt_scaling(classes):
    X, y = load_iris(return_X_y=True)
    keep = np.isin(y, classes)
    X, y = X[keep], y[keep]
    assert not hasattr(SVC(), "predict_proba")
    ours = SVC(probability=True, random_state=0).fit(X, y)
    theirs = svm.SVC(probability=True, random_state=0).fit(X, y)
    p_ours, p_theirs = ours.predict_proba(X), theirs.predict_proba(X)
    np.testing.assert_allclose(p_ours.sum(axis=1), 1.0, atol=1e-12)
    assert np.all((p_ours > 0) & (p_ours < 1))
    # the same method; only the random 5-fold split of each pair differs
    # (measured: at most 0.025 apart, 0.005 on average)
    assert np.abs(p_ours - p_theirs).max() < 0.06
    assert np.abs(p_ours - p_theirs).mean() < 0.01
    np.testing.assert_allclose(ours.probA_, theirs.probA_, rtol=0.05)
    again = SVC(probability=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), p_ours)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(p_ours))


@pytest.mark.filterwarnings("ignore::FutureWarning")   # sklearn 1.9 deprecates probability
@pytest.mark.parametrize("kernel", ["rbf", "precomputed"])
def test_probabilities_leave_out_samples_of_weight_zero(kernel):
    """Platt's sigmoid is fitted without the samples of weight 0, as
    scikit-learn's SVC removes them before LIBSVM's CV: their decision
    values had entered the fit (with 40 noisy samples of weight 0 among
    iris's classes 1 and 2, probA_ -1.1 where scikit-learn's is -4.4, and
    probabilities 0.3 apart; here probA_ and probB_ were up to 1.9 off)."""
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    weight = np.ones(y.size)
    noisy = rng.choice(y.size, 50, replace=False)
    X = X.copy()
    X[noisy] += rng.normal(scale=3.0, size=(50, 4))
    weight[noisy] = 0.0
    kept = weight > 0
    if kernel == "precomputed":
        data, alone = X @ X.T, (X @ X.T)[np.ix_(kept, kept)]
    else:
        data, alone = X, X[kept]
    # gamma fixed: "scale" reads every row, weighted 0 or not
    weighted = SVC(kernel=kernel, gamma=0.5, probability=True, random_state=0).fit(
        data, y, sample_weight=weight)
    reference = SVC(kernel=kernel, gamma=0.5, probability=True, random_state=0).fit(
        alone, y[kept])
    np.testing.assert_array_equal(weighted.probA_, reference.probA_)
    np.testing.assert_array_equal(weighted.probB_, reference.probB_)
    if kernel == "rbf":
        theirs = svm.SVC(gamma=0.5, probability=True, random_state=0).fit(
            X, y, sample_weight=weight)
        # the same method; only the random 5-fold splits differ
        assert np.abs(weighted.predict_proba(X) - theirs.predict_proba(X)).max() < 0.05


@pytest.mark.filterwarnings("ignore::FutureWarning")   # sklearn 1.9 deprecates probability
@pytest.mark.parametrize("classes", [[0, 1, 2], [0, 1]])
@pytest.mark.parametrize("attribute", ["probA_", "probB_"])
def test_predict_proba_refuses_sigmoids_set_to_nan(classes, attribute):
    """A nan probA_ or probB_ (set by hand) gave nan probabilities for two
    classes without a word, and for three an error about the coupling's r."""
    X, y = load_iris(return_X_y=True)
    keep = np.isin(y, classes)
    model = SVC(probability=True, random_state=0).fit(X[keep], y[keep])
    getattr(model, attribute)[0] = np.nan
    with pytest.raises(ValueError, match="probA_ and probB_ must be finite"):
        model.predict_proba(X[:3])


@pytest.mark.filterwarnings("ignore::FutureWarning")   # sklearn 1.9 deprecates probability
def test_predict_proba_after_probability_set_without_a_refit():
    """As scikit-learn's SVC: a NotFittedError (it was a bare AttributeError)."""
    X, y = load_iris(return_X_y=True)
    model = SVC().fit(X, y).set_params(probability=True)
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        model.predict_proba(X[:3])
    theirs = svm.SVC().fit(X, y).set_params(probability=True)
    with pytest.raises(NotFittedError):
        theirs.predict_proba(X[:3])


@pytest.mark.filterwarnings("ignore::FutureWarning")   # sklearn 1.9 deprecates probability
def test_dense_enough_csr_is_laid_out_once_for_the_pairs(monkeypatch):
    # A CSR X the kernels densify (compute_layout) reached every pair's solve
    # and every probability fold as CSR: sliced and densified again each
    # time, its folds' kernel blocks sparse products (letter.scale, 3000
    # rows: 2.8 times scikit-learn's fit time with probability=True, 1.4 now)
    import scipy.sparse as sp
    from svmscreen import estimators
    X, y = load_iris(return_X_y=True)
    X_csr = sp.csr_matrix(X)
    seen = []
    solve_dual = estimators.solve_dual

    def recording(X_solve, *args, **kwargs):
        seen.append(sp.issparse(X_solve))
        return solve_dual(X_solve, *args, **kwargs)

    monkeypatch.setattr(estimators, "solve_dual", recording)
    ours = SVC(probability=True, random_state=0).fit(X_csr, y)
    assert len(seen) == 3 * (1 + 5) and not any(seen)
    # the model is the dense fit's, its support vectors sparse as scikit-learn's
    dense = SVC(probability=True, random_state=0).fit(X, y)
    assert sp.issparse(ours.support_vectors_)
    np.testing.assert_array_equal(ours.support_, dense.support_)
    np.testing.assert_allclose(ours.predict_proba(X_csr), dense.predict_proba(X), atol=1e-10)


def test_calibrated_classifier_cv_wraps_svc():
    # what scikit-learn 1.9 recommends instead of probability=True
    from sklearn.calibration import CalibratedClassifierCV
    X, y = load_iris(return_X_y=True)
    calibrated = CalibratedClassifierCV(SVC(), ensemble=False).fit(X, y)
    np.testing.assert_allclose(calibrated.predict_proba(X).sum(axis=1), 1.0)
    assert np.mean(calibrated.predict(X) == y) > 0.9


def test_precomputed_kernel_equals_its_kernel():
    X, y = load_iris(return_X_y=True)
    train, test = np.arange(0, 150, 2), np.arange(1, 150, 2)
    linear = SVC(kernel="linear", tol=1e-10).fit(X[train], y[train])
    gram = SVC(kernel="precomputed", tol=1e-10).fit(X[train] @ X[train].T, y[train])
    np.testing.assert_array_equal(gram.support_, linear.support_)
    np.testing.assert_allclose(gram.decision_function(X[test] @ X[train].T),
                               linear.decision_function(X[test]), atol=1e-8)
    with pytest.raises(ValueError, match="square kernel matrix"):
        SVC(kernel="precomputed").fit(X[train], y[train])
    binary = y < 2
    X_b, y_b = X[binary], y[binary]
    path_linear = SVCPathCV(Cs=[0.1, 1.0], kernel="linear", cv=3, tol=1e-8).fit(X_b, y_b)
    path_gram = SVCPathCV(Cs=[0.1, 1.0], kernel="precomputed", cv=3,
                          tol=1e-8).fit(X_b @ X_b.T, y_b)
    np.testing.assert_array_equal(path_gram.cv_accuracy_, path_linear.cv_accuracy_)
    np.testing.assert_allclose(path_gram.decision_function(X_b @ X_b.T),
                               path_linear.decision_function(X_b), atol=1e-6)
    # one-vs-one: the folds' kernel blocks K(held, every pair's SVs) index
    # the Gram matrix's columns as they index X's rows
    three_linear = SVCPathCV(Cs=[0.1, 1.0], kernel="linear", cv=3, tol=1e-8).fit(X, y)
    three_gram = SVCPathCV(Cs=[0.1, 1.0], kernel="precomputed", cv=3, tol=1e-8).fit(X @ X.T, y)
    np.testing.assert_array_equal(three_gram.cv_accuracy_, three_linear.cv_accuracy_)


@pytest.mark.parametrize("make", [SVC, SVCPathCV, RampSVC], ids=lambda make: make.__name__)
def test_a_sparse_precomputed_kernel_is_refused_as_its_tag_says(make):
    """kernel="precomputed" takes a dense kernel matrix only, and the tag says
    so, as scikit-learn's SVC (input_tags.sparse was True, and
    check_estimator failed its three sparse checks on that kernel); a sparse
    X is refused as sparse in fit and predict, also where it is not square
    (it was told to be a square kernel matrix)."""
    import scipy.sparse as sp
    from sklearn.utils import get_tags
    from sklearn.utils.estimator_checks import (check_estimator_sparse_array,
                                                check_estimator_sparse_matrix,
                                                check_estimator_sparse_tag)
    estimator = make(kernel="precomputed", **({"Cs": 3, "cv": 3} if make is SVCPathCV else {}))
    assert get_tags(estimator).input_tags.sparse is False
    assert get_tags(make()).input_tags.sparse is True
    for check in (check_estimator_sparse_tag, check_estimator_sparse_array,
                  check_estimator_sparse_matrix):
        check(make.__name__, estimator)
    X, y = load_iris(return_X_y=True)
    X, y = X[y < 2], y[y < 2]
    K = X @ X.T
    for bad in (sp.csr_matrix(K), sp.csr_matrix(X)):
        with pytest.raises(TypeError, match="Sparse data was passed for X"):
            clone(estimator).fit(bad, y)
    fitted = clone(estimator).fit(K, y)
    with pytest.raises(TypeError, match="Sparse data was passed for X"):
        fitted.predict(sp.csr_matrix(K))


def test_integer_sample_weights_repeat_samples():
    X, y = load_iris(return_X_y=True)
    weight = np.random.default_rng(1).integers(0, 4, y.size)
    options = dict(C=1.0, gamma=0.3, tol=1e-10)
    weighted = SVC(**options).fit(X, y, sample_weight=weight)
    repeated = SVC(**options).fit(np.repeat(X, weight, axis=0), np.repeat(y, weight))
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X),
                               atol=1e-7)


@pytest.mark.parametrize("check", ["check_sample_weight_equivalence_on_dense_data",
                                   "check_sample_weight_equivalence_on_sparse_data"])
def test_ramp_svc_passes_the_weight_checks_at_a_fixed_gamma(check):
    """The two checks RampSVC() is expected to fail (gamma="scale", tol
    1e-3) pass at a fixed gamma and a tight tol: integer sample weights are
    repeated samples to scikit-learn's 1e-7."""
    from sklearn.utils import estimator_checks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(estimator_checks, check)("RampSVC", RampSVC(gamma=0.5, tol=1e-10))


def test_ramp_svc_sample_weight_in_a_grid_search():
    """GridSearchCV routes sample_weight to RampSVC.fit, each fold's fit
    getting its training rows' weights (and scores the held-out part
    weighted): its split scores are those of fits on the folds by hand."""
    X, y = load_dataset("heart_scale", 150)
    X = X.toarray()
    y = np.array(y)
    y[::7] *= -1
    rng = np.random.default_rng(0)
    weight = rng.choice([0.0, 0.5, 1.0, 3.0], y.size)
    splits = list(StratifiedKFold(3).split(X, y))
    Cs = [0.1, 1.0, 10.0]
    options = dict(gamma=0.1, s=-0.5, tol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = GridSearchCV(RampSVC(**options), {"C": Cs}, cv=splits).fit(
            X, y, sample_weight=weight)
        for k, (train, held) in enumerate(splits):
            for t, C in enumerate(Cs):
                fold = RampSVC(C=C, **options).fit(X[train], y[train],
                                                   sample_weight=weight[train])
                right = fold.predict(X[held]) == y[held]
                assert grid.cv_results_[f"split{k}_test_score"][t] == pytest.approx(
                    np.average(right, weights=weight[held]), rel=1e-12)
        unweighted = GridSearchCV(RampSVC(**options), {"C": Cs}, cv=splits).fit(X, y)
        refit = RampSVC(C=grid.best_params_["C"], **options).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(grid.best_estimator_.decision_function(X),
                                  refit.decision_function(X))
    assert not np.allclose(unweighted.cv_results_["mean_test_score"],
                           grid.cv_results_["mean_test_score"])


@pytest.mark.parametrize("weight, error, match", [
    (np.ones(99), ValueError, r"sample_weight must be a finite array of shape \(100,\)"),
    (np.where(np.arange(100) == 3, -1.0, 1.0), ValueError,
     "sample_weight must be finite and >= 0"),
    (np.where(np.arange(100) == 3, np.nan, 1.0), ValueError, "sample_weight must be a finite"),
    (np.where(np.arange(100) == 3, np.inf, 1.0), ValueError, "sample_weight must be a finite"),
    (np.zeros(100), ValueError, "sample_weight is zero for every sample"),
    (np.arange(100) < 50, ValueError, "positive weights belong to the same class"),
])
def test_ramp_svc_bad_sample_weight_names_it(weight, error, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(error, match=match):
        RampSVC().fit(X[:100], y[:100], sample_weight=weight)


def test_ramp_svc_sample_weight_is_train_ramps():
    """RampSVC.fit(sample_weight=w) fits train_ramp's model with the same
    weights (class_weight on top), and leaves w as it was."""
    X, y = load_iris(return_X_y=True)
    X, y = X[50:], y[50:]          # versicolor and virginica overlap
    weight = np.random.default_rng(0).uniform(0.0, 3.0, y.size)
    given = weight.copy()
    weight.flags.writeable = False
    options = dict(C=3.0, s=-0.5, gamma=0.5, tol=1e-10)
    ours = RampSVC(class_weight={2: 2.0}, **options).fit(X, y, sample_weight=weight)
    theirs = svmscreen.train_ramp(X, y, class_weight={2: 2.0}, sample_weight=given,
                                  **options)
    np.testing.assert_array_equal(weight, given)
    np.testing.assert_array_equal(ours.decision_function(X),
                                  theirs.model.decision_function(X))
    assert ours.result_.n_outliers[-1] > 0


def test_grid_search_over_a_pipeline_picks_what_scikit_learn_picks():
    X, y = load_dataset("australian_scale")
    X = X.toarray()
    grid = {"svc__C": [0.1, 1.0, 10.0], "svc__gamma": [0.01, 0.1]}
    ours = GridSearchCV(make_pipeline(StandardScaler(), SVC()), grid, cv=3).fit(X, y)
    theirs = GridSearchCV(make_pipeline(StandardScaler(), svm.SVC()), grid, cv=3).fit(X, y)
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               theirs.cv_results_["mean_test_score"], atol=2 / y.size)
    assert clone(ours.best_estimator_).get_params()["svc__C"] == ours.best_params_["svc__C"]


def test_svc_path_cv_is_train_path_and_accepts_splitters():
    X, y = load_dataset("heart_scale")
    labels = np.where(y > 0, "present", "absent")
    estimator = SVCPathCV(Cs=8, cv=3, gamma=0.05, tol=1e-6).fit(X, labels)
    # cv=3 means scikit-learn's StratifiedKFold(3), as in GridSearchCV
    path = svmscreen.train_path(X, y, n_C=8, cv=list(StratifiedKFold(3).split(X, y)),
                                gamma=0.05, tol=1e-6)
    np.testing.assert_array_equal(estimator.cv_accuracy_, path.cv_accuracy)
    assert estimator.C_ == path.best_C
    np.testing.assert_array_equal(estimator.predict(X),
                                  np.where(path.best_model.predict(X) > 0, "present",
                                           "absent"))
    assert list(estimator.classes_) == ["absent", "present"]
    assert estimator.path_.put_back.sum() == 0
    # a scikit-learn splitter's folds: each fold's accuracy is that of a
    # separate fit on its training part
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    split_path = SVCPathCV(Cs=[0.1, 1.0, 10.0], cv=splits, gamma=0.05, tol=1e-6).fit(X, y)
    for k, (train, test) in enumerate(splits):
        for t, C in enumerate([0.1, 1.0, 10.0]):
            model = svmscreen.fit_binary(X[train], y[train], C=C, gamma=0.05, tol=1e-6)
            accuracy = np.mean(model.predict(X[test]) == y[test])
            assert split_path.cv_accuracy_[k, t] == pytest.approx(accuracy, abs=1.5 / test.size)


def test_svc_path_cv_takes_groups_and_svc_an_integer_verbose(capsys):
    # GroupKFold needs fit(..., groups=); verbose=2 is scikit-learn's too
    from sklearn.model_selection import GroupKFold
    X, y = load_dataset("heart_scale")
    X = X.toarray()                       # (scikit-learn's SVC: int32 CSR indices only)
    groups = np.arange(y.size) % 5
    path_cv = SVCPathCV(Cs=4, cv=GroupKFold(5)).fit(X, y, groups=groups)
    search = GridSearchCV(svm.SVC(), {"C": path_cv.Cs_}, cv=GroupKFold(5)).fit(
        X, y, groups=groups)
    np.testing.assert_allclose(path_cv.cv_accuracy_.mean(axis=0),
                               search.cv_results_["mean_test_score"], atol=1.5 / (y.size / 5))
    SVC(verbose=2).fit(X[:40], y[:40])
    assert "Total nSV" in capsys.readouterr().out
    with pytest.raises(TypeError, match="verbose must be a bool or an integer >= 0"):
        SVC(verbose=-1).fit(X[:40], y[:40])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_path_cv_and_ramp_show_progress_when_asked(n_classes, capsys):
    # SVCPathCV (minutes on large data) and RampSVC had no verbose; they
    # now show train_path's and train_ramp's progress on stderr
    X, y = load_iris(return_X_y=True)
    keep = y < n_classes
    fitted = SVCPathCV(Cs=3, cv=2, gamma=[0.1, 1.0]).fit(X[keep], y[keep])
    assert capsys.readouterr() == ("", "")
    shown = SVCPathCV(Cs=3, cv=2, gamma=[0.1, 1.0], verbose=2).fit(X[keep], y[keep])
    progress = capsys.readouterr().err
    assert "fold 2/2" in progress      # (tqdm's bars, if installed, have the same labels)
    assert ("pair 3/3" in progress) == (n_classes == 3)
    assert (shown.C_, shown.gamma_) == (fitted.C_, fitted.gamma_)
    with pytest.raises(TypeError, match="verbose must be a bool or an integer >= 0"):
        SVCPathCV(Cs=3, cv=2, verbose="yes").fit(X[keep], y[keep])
    if n_classes == 2:
        RampSVC(verbose=True).fit(X[keep], y[keep])
        assert "step 1: objective" in capsys.readouterr().err
        with pytest.raises(TypeError, match="verbose must be a bool or an integer >= 0"):
            RampSVC(verbose=-1).fit(X[keep], y[keep])


def test_a_decision_value_of_zero_predicts_as_scikit_learn():
    # LIBSVM gives its first label only for f > 0; in scikit-learn's order
    # f(x) = 0 is classes_[1].  BinaryModel (fit_binary, SVCPathCV, RampSVC)
    # and the binary path's CV had given classes_[0].
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]] * 3)
    y = np.array([0, 0, 1, 1] * 3)
    T = np.array([[0.0]])
    theirs = svm.SVC(kernel="linear").fit(X, y)
    assert theirs.decision_function(T) == 0 and theirs.predict(T) == [1]
    for model in [svmscreen.fit_binary(X, y, kernel="linear"),
                  SVC(kernel="linear").fit(X, y),
                  SVCPathCV(kernel="linear", Cs=[1.0], cv=3).fit(X, y),
                  RampSVC(kernel="linear").fit(X, y)]:
        assert model.decision_function(T) == 0 and model.predict(T) == [1]
    # the path's CV scores held-out ties the same way: the midpoint, held
    # out, counts as correct for class 1
    X2, y2 = np.vstack([X, [[0.0]] * 3]), np.concatenate([y, [1] * 3])
    folds = [(np.arange(12), np.arange(12, 15))]
    path = svmscreen.train_path(X2, y2, C=[1.0], kernel="linear", cv=folds)
    assert path.cv_mean[0] == 1.0


@pytest.mark.parametrize("n_classes", [2, 3])
def test_svc_path_cv_breaks_ties_across_gammas_as_grid_search(n_classes):
    # The best accuracy (1.0) at C = 10 with the first gamma and at C = 1
    # with the second: GridSearchCV takes the smallest C, then the first
    # gamma; SVCPathCV took the first gamma, then its smallest C.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(y, 1.0, -1.0)
    if n_classes == 3:
        y = np.digitize(X[:, 0], [-0.7, 0.7])
    Cs, gammas, cv = np.geomspace(0.01, 100, 5), [0.0005, 1.0], StratifiedKFold(4)
    path_cv = SVCPathCV(Cs=Cs, gamma=gammas, cv=cv, tol=1e-8).fit(X, y)
    search = GridSearchCV(SVC(tol=1e-8), {"C": Cs, "gamma": gammas}, cv=cv).fit(X, y)
    means = search.cv_results_["mean_test_score"].reshape(len(Cs), len(gammas))
    assert np.sum(means == means.max()) > 1          # the tie this test is about
    assert (path_cv.C_, path_cv.gamma_) == (search.best_params_["C"],
                                            search.best_params_["gamma"])
    assert path_cv.cv_accuracy_.mean(axis=0).max() == search.best_score_


def test_svc_path_cv_over_gammas_picks_what_grid_search_picks():
    X, y = load_dataset("heart_scale")
    X = X.copy()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    Cs, gammas = np.geomspace(0.1, 100, 7), [0.01, 0.05, 0.3]
    path_cv = SVCPathCV(Cs=Cs, gamma=gammas, cv=4, tol=1e-6).fit(X, y)
    search = GridSearchCV(svm.SVC(tol=1e-6), {"C": Cs, "gamma": gammas}, cv=4).fit(X, y)
    assert (path_cv.C_, path_cv.gamma_) == (search.best_params_["C"],
                                            search.best_params_["gamma"])
    assert [p.gamma for p in path_cv.paths_] == gammas
    # the same folds: per (gamma, C) mean accuracies agree up to samples on
    # the margin of the two solvers' tol-1e-6 optima
    ours = np.array([p.cv_mean for p in path_cv.paths_])                # (gamma, C)
    theirs = search.cv_results_["mean_test_score"].reshape(len(Cs), len(gammas)).T
    np.testing.assert_allclose(ours, theirs, atol=1.5 / (y.size / 4))
    assert path_cv.score(X, y) == pytest.approx(search.score(X, y), abs=1.5 / y.size)


def test_train_path_takes_a_splitter_as_grid_search_does():
    """cv=KFold(...) (an object with split, as GridSearchCV takes) was
    refused: "cv must be an integer >= 2 or an iterable".  It gives the
    folds of its split; one that needs groups says so."""
    from sklearn.model_selection import GroupKFold, KFold
    X, y = load_dataset("heart_scale")
    for splitter in (KFold(3, shuffle=True, random_state=0),
                     StratifiedKFold(4, shuffle=True, random_state=1)):
        given = svmscreen.train_path(X, y, n_C=5, cv=splitter)
        listed = svmscreen.train_path(X, y, n_C=5, cv=list(splitter.split(X, y)))
        np.testing.assert_array_equal(given.cv_accuracy, listed.cv_accuracy)
    with pytest.raises(ValueError, match="groups"):
        svmscreen.train_path(X, y, n_C=5, cv=GroupKFold(3))

    class Counted(KFold):
        calls = 0

        def split(self, X, y=None, groups=None):
            Counted.calls += 1
            return super().split(X, y, groups)

    # several gammas: one split for all (a shuffling splitter without a
    # seed splits anew at each call, and the gammas' accuracies would not
    # be on the same folds)
    svmscreen.train_path(X, y, n_C=3, gamma=[0.1, 1.0], cv=Counted(3, shuffle=True))
    assert Counted.calls == 1


@pytest.mark.parametrize("cv, match", [
    ([(np.arange(5), np.arange(5, 10)), "no pair"], "cv split 1 is not a .train, test. pair"),
    ([(np.arange(5), np.array([], dtype=int))], "split 0: its test part must be a non-empty"),
    ([(np.arange(5), np.array([999]))], "split 0: its test part has an index out of range"),
    ([(np.array([0.5]), np.arange(3))], "split 0: its train part must be"),
    ([], "empty iterable"),
    ("folds", "cv must be an integer >= 2, a splitter"),
    (1, "cv must be an integer >= 2"),
])
def test_bad_cv_splits_are_named(cv, match):
    X, y = load_dataset("heart_scale")
    with pytest.raises(ValueError, match=match):
        svmscreen.train_path(X, y, n_C=3, cv=cv)


def test_splits_from_a_generator_serve_every_gamma():
    X, y = load_dataset("heart_scale")
    splitter = StratifiedKFold(3)
    from_generator = svmscreen.train_path(X, y, n_C=4, gamma=[0.01, 0.1],
                                          cv=splitter.split(X, y))
    from_list = svmscreen.train_path(X, y, n_C=4, gamma=[0.01, 0.1],
                                     cv=list(splitter.split(X, y)))
    for a, b in zip(from_generator, from_list):
        np.testing.assert_array_equal(a.cv_accuracy, b.cv_accuracy)


def test_a_split_whose_training_part_holds_one_class_is_an_error():
    X, y = load_dataset("heart_scale")
    one_class = np.flatnonzero(y > 0)
    with pytest.raises(ValueError, match="split 0: its training part holds 1 of the 2 classes"):
        svmscreen.train_path(X, y, n_C=3, cv=[(one_class, np.flatnonzero(y < 0))])


def test_ramp_svc_is_train_ramp_with_any_labels():
    X, y = load_dataset("heart_scale")
    labels = np.where(y > 0, "b", "a")
    estimator = RampSVC(C=10.0, gamma=0.05).fit(X, labels)
    alone = svmscreen.train_ramp(X, y, C=10.0, gamma=0.05)
    np.testing.assert_array_equal(estimator.result_.objective, alone.objective)
    np.testing.assert_array_equal(estimator.decision_function(X),
                                  alone.model.decision_function(X))
    assert estimator.n_iter_ == alone.n_outer
    np.testing.assert_array_equal(estimator.predict(X), np.where(
        alone.model.predict(X) > 0, "b", "a"))


def test_ramp_svc_refuses_three_classes():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        RampSVC().fit(X, y)


def test_svc_path_cv_one_vs_one_picks_what_grid_search_picks():
    X, y = load_iris(return_X_y=True)
    Cs, gammas = np.geomspace(0.01, 1000, 15), [0.1, 1.0]
    names = np.array(["setosa", "versicolor", "virginica"])
    labels = names[y]
    path_cv = SVCPathCV(Cs=Cs, gamma=gammas, cv=5, tol=1e-8).fit(X, labels)
    search = GridSearchCV(svm.SVC(tol=1e-8), {"C": Cs, "gamma": gammas}, cv=5).fit(X, y)
    assert (path_cv.C_, path_cv.gamma_) == (search.best_params_["C"],
                                            search.best_params_["gamma"])
    assert path_cv.cv_accuracy_.shape == (5, Cs.size)
    theirs = search.cv_results_["mean_test_score"].reshape(Cs.size, len(gammas)).T
    # the same folds and votes: per C, at most a sample (a near-tie of the
    # pairs' decision values) apart; measured 1 sample at one C
    np.testing.assert_allclose(path_cv.cv_accuracy_.mean(axis=0),
                               theirs[gammas.index(path_cv.gamma_)], atol=1.5 / y.size)
    np.testing.assert_array_equal(path_cv.predict(X), names[search.predict(X)])
    assert path_cv.decision_function(X).shape == (y.size, 3)
    # the refit is SVC at (C_, gamma_)
    refit = SVC(C=path_cv.C_, gamma=path_cv.gamma_, tol=1e-8).fit(X, labels)
    np.testing.assert_array_equal(path_cv.decision_function(X), refit.decision_function(X))


@pytest.mark.parametrize("params, match", [
    (dict(C=-1.0), "C must be"), (dict(kernel="cubic"), "kernel"), (dict(tol=0.0), "tol"),
    (dict(gamma=-1.0), "gamma"), (dict(max_iter=0), r"max_iter must be -1 \(no limit\) or"),
    (dict(max_iter=-2), r"max_iter must be -1 \(no limit\) or a positive integer"),
    (dict(max_iter=2.5), r"max_iter must be -1 \(no limit\) or"),
    (dict(max_iter=True), r"max_iter must be -1 \(no limit\) or"),
    (dict(cache_size=-5), "cache_size"), (dict(decision_function_shape="all"), "ovr"),
    (dict(shrinking="yes"), "shrinking"), (dict(probability="False"), "probability"),
    (dict(class_weight={1: -1.0}), "class_weight for class 1 must be finite and >= 0"),
    (dict(class_weight={0: np.nan}), "class_weight for class 0 must be finite"),
])
def test_svc_bad_parameters_name_the_argument(params, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises((ValueError, TypeError), match=match):
        SVC(**params).fit(X, y)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("params, match", [
    (dict(kernel="cubic"), "kernel"), (dict(tol=-1.0), "tol"), (dict(gamma=-1.0), "gamma"),
    (dict(screening="ball"), "screening"), (dict(Cs=[1.0, 0.5]), "strictly increasing"),
    (dict(cv=1), "n_splits=2 or more"),     # scikit-learn's check_cv
    (dict(class_weight={1: -1.0}), "class_weight for class 1 must be finite and >= 0"),
    (dict(gamma=[]), "gamma is an empty list"),
    (dict(n_jobs=10 ** 12), "n_jobs"),      # the one-vs-one folds reached loky unchecked
])
def test_svc_path_cv_bad_parameters_name_the_argument(n_classes, params, match):
    X, y = load_iris(return_X_y=True)
    keep = y < n_classes
    with pytest.raises((ValueError, TypeError), match=match):
        SVCPathCV(**params).fit(X[keep], y[keep])


@pytest.mark.parametrize("Estimator", [SVC, SVCPathCV])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_negative_sample_weight_is_an_error(Estimator, n_classes):
    X, y = load_iris(return_X_y=True)
    keep = y < n_classes
    weight = np.ones(int(keep.sum()))
    weight[3] = -1.0
    with pytest.raises(ValueError, match="sample_weight must be finite and >= 0"):
        Estimator().fit(X[keep], y[keep], sample_weight=weight)


def test_support_indexes_X_as_given_with_samples_of_weight_zero():
    """SVC.fit's notes: support_ indexes the rows of X, samples of weight 0
    counted; scikit-learn's indexes the samples left once those are dropped
    (its support_ maps through them to ours), so its precomputed-kernel
    predictions read other columns, and ours equal the linear kernel's."""
    X, y = load_iris(return_X_y=True)
    weight = np.ones(y.size)
    weight[::3] = 0.0
    kept = np.flatnonzero(weight > 0)
    options = dict(C=1.0, tol=1e-10)
    ours = SVC(kernel="linear", **options).fit(X, y, sample_weight=weight)
    theirs = svm.SVC(kernel="linear", **options).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(ours.support_, kept[theirs.support_])
    np.testing.assert_array_equal(ours.support_vectors_, X[ours.support_])
    K = X @ X.T
    precomputed = SVC(kernel="precomputed", **options).fit(K, y, sample_weight=weight)
    np.testing.assert_array_equal(precomputed.support_, ours.support_)
    np.testing.assert_allclose(precomputed.decision_function(K), ours.decision_function(X),
                               atol=1e-9)


@pytest.mark.parametrize("how", ["class_weight", "sample_weight"])
def test_a_class_of_weight_zero_beside_two_others_is_never_predicted(how):
    """SVC.fit's notes: with its C_i all 0, a class's pairs vote for the
    other class (the finite end of the intercept's interval), it has no
    support vector, and the other pair is the fit without it."""
    X, y = load_iris(return_X_y=True)
    if how == "class_weight":
        model = SVC(class_weight={0: 0.0}, tol=1e-10).fit(X, y)
    else:
        model = SVC(tol=1e-10).fit(X, y, sample_weight=(y != 0) * 1.0)
    assert model.n_support_[0] == 0
    assert not np.any(model.predict(X) == 0)
    np.testing.assert_array_equal(model.intercept_[:2], [-1.0, -1.0])
    alone = SVC(tol=1e-10, gamma=model._solve_options[1]["gamma"]).fit(X[y > 0], y[y > 0])
    # (a binary SVC reports f > 0 for classes_[1], the pair's second class)
    np.testing.assert_allclose(model.intercept_[2], -alone.intercept_[0], atol=1e-9)


@pytest.mark.parametrize("Estimator", [SVC, SVCPathCV, RampSVC])
def test_a_single_class_with_weight_is_an_error(Estimator):
    """As scikit-learn's SVC: when only one class weighs something (class
    weights times sample weights), there is nothing to separate; the
    estimators had fitted a constant model in silence."""
    X, y = load_iris(return_X_y=True)
    keep = y < 2
    with pytest.raises(ValueError, match="all samples with positive weights belong to the "
                                         "same class"):
        Estimator(class_weight={0: 0.0}).fit(X[keep], y[keep])


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_coef_matches_scikit_learn(n_classes, sparse):
    """coef_ (kernel "linear"), as scikit-learn's: dual_coef_ times the
    support vectors for two classes, one row per pair otherwise; it serves
    feature selection (RFE)."""
    import scipy.sparse as sp
    from sklearn.feature_selection import RFE
    X, y = load_iris(return_X_y=True)
    keep = y < n_classes
    X, y = X[keep], y[keep]
    Xs = sp.csr_matrix(X) if sparse else X
    ours = SVC(kernel="linear", C=0.5, tol=1e-10).fit(Xs, y)
    theirs = svm.SVC(kernel="linear", C=0.5, tol=1e-10).fit(Xs, y)
    coef = ours.coef_.toarray() if sparse else ours.coef_
    assert sp.issparse(ours.coef_) == sparse
    expected = theirs.coef_.toarray() if sp.issparse(theirs.coef_) else theirs.coef_
    np.testing.assert_allclose(coef, expected, atol=1e-3)     # LIBSVM's float cache
    np.testing.assert_allclose(X @ coef.T + ours.intercept_,
                               ours.decision_function(X).reshape(len(y), -1)
                               if n_classes == 2 else
                               ours.set_params(decision_function_shape="ovo")
                               .decision_function(X), rtol=1e-9, atol=1e-9)
    assert ours.shape_fit_ == X.shape and ours.fit_status_ == 0
    selected = RFE(SVC(kernel="linear"), n_features_to_select=2).fit(X, y).support_
    np.testing.assert_array_equal(
        selected, RFE(svm.SVC(kernel="linear"), n_features_to_select=2).fit(X, y).support_)
    with pytest.raises(AttributeError, match="linear kernel"):
        SVC(kernel="rbf").fit(X, y).coef_


def test_kernel_names_from_an_array_and_unsorted_csr():
    """A grid of kernel names as an array gives numpy.str_ values, and a
    column selection leaves CSR rows unsorted: scikit-learn's SVC takes
    both, and so do these (they had failed at predict, or refused the CSR)."""
    import scipy.sparse as sp
    X, y = load_iris(return_X_y=True)
    grid = GridSearchCV(SVC(), {"kernel": np.array(["linear", "rbf"])}, cv=3,
                        error_score="raise").fit(X, y)
    assert grid.best_estimator_.predict(X).shape == y.shape
    shuffled = sp.csr_matrix(X)[:, [3, 2, 1, 0]]
    assert not shuffled.has_sorted_indices
    for Estimator in (SVC, SVCPathCV):
        model = Estimator().fit(shuffled, y)
        np.testing.assert_array_equal(model.predict(shuffled), model.predict(X[:, [3, 2, 1, 0]]))


def test_max_iter_warning_is_also_scikit_learns():
    """scikit-learn's ConvergenceWarning filters catch SVC's max_iter warning."""
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    from svmscreen._validation import ConvergenceWarning as OwnWarning
    X, y = load_iris(return_X_y=True)
    for category in (ConvergenceWarning, OwnWarning):
        with warnings.catch_warnings():
            warnings.simplefilter("error", category)
            with pytest.raises(category, match="max_iter=3"):
                SVC(max_iter=3).fit(X, y)


def test_ramp_convergence_warnings_are_also_scikit_learns():
    """RampSVC's CCCP warnings (here max_outer) were svmscreen's alone:
    scikit-learn's ConvergenceWarning filters, which catch SVC's, let them
    through.  train_ramp's stay svmscreen's."""
    from sklearn.exceptions import ConvergenceWarning
    from svmscreen._validation import ConvergenceWarning as OwnWarning
    X, y = load_dataset("heart_scale")
    for category in (ConvergenceWarning, OwnWarning):
        with warnings.catch_warnings():
            warnings.simplefilter("error", category)
            with pytest.raises(category, match="max_outer=1"):
                RampSVC(C=10.0, gamma=0.05, max_outer=1).fit(X, y)
    with pytest.warns(OwnWarning, match="max_outer=1") as caught:
        svmscreen.train_ramp(X, y, C=10.0, gamma=0.05, max_outer=1)
    assert not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert caught[0].filename == __file__


def test_fit_binary_balanced_is_scikit_learns_weights():
    from sklearn.utils import compute_class_weight
    X, y = load_dataset("diabetes_scale")
    weights = compute_class_weight("balanced", classes=np.unique(y), y=y)
    explicit = svmscreen.fit_binary(X, y, C=2.0, class_weight=dict(zip(np.unique(y), weights)))
    balanced = svmscreen.fit_binary(X, y, C=2.0, class_weight="balanced")
    np.testing.assert_array_equal(balanced.alpha_, explicit.alpha_)
    assert balanced.intercept_ == explicit.intercept_
    with pytest.raises(TypeError, match='or "balanced"'):
        svmscreen.fit_binary(X, y, C=2.0, class_weight="balance")


@pytest.mark.parametrize("n_classes", [2, 3])
def test_balanced_class_weight_is_each_training_folds(n_classes):
    """class_weight="balanced" in cross-validation weighs each fold by its
    training labels, as GridSearchCV(SVC(class_weight="balanced")) does; it
    was the whole y's.  The folds' class proportions differ on purpose."""
    X, y = load_dataset("breast-cancer_scale")
    X = X.toarray()
    if n_classes == 3:
        X, y = load_iris(return_X_y=True)
    rank = np.argsort(np.argsort(y, kind="stable"), kind="stable")
    first = y == y.min()
    # the first class mostly in group 0, the others spread over 0, 1, 2
    groups = np.where(first, np.where(rank % 5 == 0, 1 + rank % 2, 0), rank % 3)
    splits = [(np.flatnonzero(groups != g), np.flatnonzero(groups == g)) for g in range(3)]
    Cs = [0.3, 3.0, 30.0]
    ours = SVCPathCV(Cs=Cs, cv=splits, gamma=0.5, tol=1e-8, class_weight="balanced",
                     screening=None).fit(X, y)
    grid = GridSearchCV(svm.SVC(gamma=0.5, tol=1e-8, class_weight="balanced"), {"C": Cs},
                        cv=splits).fit(X, y)
    theirs = np.array([grid.cv_results_[f"split{k}_test_score"] for k in range(3)])
    np.testing.assert_array_equal(ours.cv_accuracy_, theirs)
    path = svmscreen.train_path(X, y, C=Cs, cv=splits, gamma=0.5, tol=1e-8,
                                class_weight="balanced", screening="dvi")
    np.testing.assert_array_equal(path.cv_accuracy, theirs)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gamma_scale_is_each_training_folds(n_classes):
    """gamma="scale" in cross-validation is the variance of each fold's
    training rows, as GridSearchCV(SVC(gamma="scale")) computes it; it was
    the whole X's (held-out rows included), which moved a CV accuracy by a
    sample on breast-cancer_scale."""
    X, y = load_dataset("breast-cancer_scale")
    X = X.toarray()
    if n_classes == 3:
        X, y = load_iris(return_X_y=True)
    Cs = [0.1, 1.0, 10.0]
    ours = SVCPathCV(Cs=Cs, cv=3, gamma="scale", tol=1e-6, screening=None).fit(X, y)
    grid = GridSearchCV(svm.SVC(gamma="scale", tol=1e-6), {"C": Cs}, cv=3).fit(X, y)
    theirs = np.array([grid.cv_results_[f"split{k}_test_score"] for k in range(3)])
    np.testing.assert_array_equal(ours.cv_accuracy_, theirs)
    path = svmscreen.train_path(X, y, C=Cs, cv=StratifiedKFold(3).split(X, y), gamma="scale",
                                tol=1e-6, screening="dvi")
    np.testing.assert_array_equal(path.cv_accuracy, theirs)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sample_weight_weighs_the_held_out_accuracy(n_classes):
    """With sample_weight, GridSearchCV scores each held-out part by the
    weighted accuracy (scikit-learn 1.9 passes the weights to its scorer);
    SVCPathCV and train_path scored them unweighted, and picked another C
    (0.052 against 0.268 on heart_scale)."""
    X, y = load_dataset("heart_scale")
    X = X.toarray()
    if n_classes == 3:
        X, y = load_iris(return_X_y=True)
    sample_weight = np.linspace(0.2, 3.0, y.size)
    Cs = [0.1, 1.0, 10.0]
    splits = list(StratifiedKFold(3).split(X, y))
    ours = SVCPathCV(Cs=Cs, cv=splits, gamma=0.5, tol=1e-8, screening=None).fit(
        X, y, sample_weight=sample_weight)
    grid = GridSearchCV(svm.SVC(gamma=0.5, tol=1e-8), {"C": Cs}, cv=splits).fit(
        X, y, sample_weight=sample_weight)
    theirs = np.array([grid.cv_results_[f"split{k}_test_score"] for k in range(3)])
    np.testing.assert_allclose(ours.cv_accuracy_, theirs, rtol=1e-12)
    path = svmscreen.train_path(X, y, C=Cs, cv=splits, gamma=0.5, tol=1e-8,
                                sample_weight=sample_weight)
    np.testing.assert_allclose(path.cv_accuracy, theirs, rtol=1e-12)
    assert not np.allclose(theirs, SVCPathCV(Cs=Cs, cv=splits, gamma=0.5, tol=1e-8).fit(
        X, y).cv_accuracy_)


def test_path_cv_grid_errors_name_Cs():
    X, y = load_dataset("heart_scale")
    for Cs, error in ((10.0, "Cs must be a positive integer"), (0, "Cs must be a positive"),
                      ([1.0, 0.5], "Cs: C must be strictly increasing")):
        with pytest.raises(ValueError, match=error):
            SVCPathCV(Cs=Cs, cv=3).fit(X, y)


@pytest.mark.parametrize("make, bad", [
    (lambda: SVC(), dict(C=0)),
    (lambda: SVC(kernel="linear"), dict(kernel="cubic")),
    (lambda: RampSVC(), dict(C=-1)),
    (lambda: SVCPathCV(Cs=5, cv=3), dict(screening="bogus")),
])
def test_a_refit_that_fails_keeps_the_previous_fit(make, bad):
    # The checks run along the fit: the new classes_ had been set beside the
    # old model, which then predicted wrong labels without an error.
    X, y = load_iris(return_X_y=True)
    X, y = (X[:100], y[:100]) if isinstance(make(), RampSVC) else (X, y)
    estimator = make().fit(X, y)
    before = estimator.predict(X)
    with pytest.raises(ValueError):
        estimator.set_params(**bad).fit(X[50:], y[50:])
    np.testing.assert_array_equal(estimator.predict(X), before)
    assert set(estimator.classes_) == set(np.unique(y))


def test_svc_refuses_weights_that_overflow():
    # C * sample_weight = inf had sent SMO into an endless loop
    X, y = load_dataset("heart_scale")
    with pytest.raises(ValueError, match="overflows float64"):
        SVC(C=1e200, kernel="linear").fit(X, y, sample_weight=np.full(270, 1e200))
    with pytest.raises(ValueError, match="overflows float64"):
        SVC(C=1e300, kernel="linear", class_weight={1: 1e300}).fit(X, y)
    with pytest.raises(ValueError, match="overflows float64"):
        SVCPathCV(Cs=[1.0, 1e300], cv=3, class_weight={1: 1e300}).fit(*load_iris(return_X_y=True))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_predicting_from_overflowing_decision_values_is_an_error(n_classes):
    """A poly kernel value that overflows makes the pairs' decision values
    NaN: SVC voted with them (more than two classes: some class, and
    uniform probabilities; two: NaN probabilities), where svmscreen's own
    models, and SVCPathCV's for two classes, refuse to predict."""
    X, y = load_iris(return_X_y=True)
    X, y = X[y < n_classes], y[y < n_classes]
    far = np.array([[1e120, -1e120, 1e120, -1e120]])
    svc = SVC(kernel="poly", gamma=1.0, coef0=1.0, probability=True, random_state=0).fit(X, y)
    path_cv = SVCPathCV(Cs=3, cv=3, kernel="poly", gamma=1.0, coef0=1.0).fit(X, y)
    for predict in (svc.predict, svc.predict_proba, path_cv.predict):
        with pytest.raises(ValueError, match="decision values overflow"):
            predict(far)
    np.testing.assert_array_equal(svc.predict(X[:5]), y[:5])


def test_svc_fit_status_verbose_and_random_state(capsys):
    X, y = load_dataset("heart_scale")
    with pytest.warns(svmscreen.ConvergenceWarning):
        assert SVC(max_iter=5).fit(X, y).fit_status_ == 1
    assert SVC().fit(X, y).fit_status_ == 0
    capsys.readouterr()
    model = SVC(verbose=True).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("optimization finished, #iter = ")
    assert lines[-1] == f"Total nSV = {model.support_.size}"
    with pytest.raises(ValueError, match="random_state must be >= 0"):
        SVC(probability=True, random_state=-1).fit(X, y)
    with pytest.raises(TypeError, match="random_state must be None"):
        SVC(probability=True, random_state="x").fit(X, y)
    rs = SVC(probability=True, random_state=np.random.RandomState(0)).fit(X, y)
    assert rs.predict_proba(X[:2]).shape == (2, 2)


def test_svc_verbose_counts_bound_support_vectors_as_scikit_learn(capfd):
    """LIBSVM's nBSV counts the support vectors at their bound: a sample of
    weight 0 (alpha = 0 = its box) had been counted (28 against 18 here)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (rng.random(40) < 0.5).astype(int)
    X += y[:, None]
    weight = np.ones(40)
    weight[::4] = 0.0
    counts = []
    for Estimator in (SVC, svm.SVC):
        capfd.readouterr()
        Estimator(verbose=True, tol=1e-8).fit(X, y, sample_weight=weight)
        counts.append([line for line in capfd.readouterr().out.splitlines()
                       if line.startswith("nSV = ")])
    assert counts[0] == counts[1]


def test_break_ties_and_ovr_ties_as_scikit_learn():
    X = np.array([[1.0, 0], [2, 0], [-1, 0], [-2, 0], [0, 3], [0, 4]])
    y = np.array([0, 0, 1, 1, 2, 2])
    X_test = np.array([[0.0, 0], [0, -1]])
    ours = SVC(kernel="linear", C=10).fit(X, y)
    theirs = svm.SVC(kernel="linear", C=10).fit(X, y)
    # a pair's value of exactly 0 votes for its first class in scikit-learn's ovr
    np.testing.assert_allclose(ours.decision_function(X_test), theirs.decision_function(X_test),
                               atol=1e-9)
    np.testing.assert_array_equal(ours.set_params(break_ties=True).predict(X_test),
                                  theirs.set_params(break_ties=True).predict(X_test))
    with pytest.raises(ValueError, match="break_ties must be False"):
        SVC(break_ties=True, decision_function_shape="ovo").fit(X[:4], y[:4]).predict(X[:4])


@pytest.mark.slow
def test_svc_stops_on_a_kernel_matrix_that_is_not_symmetric():
    """SMO need not converge on a non-symmetric kernel matrix, and with
    max_iter=-1 SVC ran without end on np.triu(X X') of heart_scale (as
    scikit-learn's SVC does); it now warns and stops at the solver's default
    cap.  A symmetric matrix keeps max_iter=-1 (no warning)."""
    X, y = load_dataset("heart_scale")
    X = X.toarray()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SVC(kernel="precomputed").fit(np.triu(X @ X.T), y)
    assert model.n_iter_[0] == 10_000_000
    assert any(w.category is UserWarning and "not symmetric" in str(w.message) for w in caught)
    assert any(issubclass(w.category, svmscreen.ConvergenceWarning) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SVC(kernel="precomputed").fit(X @ X.T, y)
