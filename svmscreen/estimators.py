"""scikit-learn estimators over svmscreen's solver, path and ramp loss.

* ``SVC``: a drop-in for ``sklearn.svm.SVC`` (C-SVC, one-vs-one over the
  classes, the same parameters, defaults and fitted attributes), solved by
  svmscreen's SMO.
* ``SVCPathCV``: C (and gamma) chosen by cross-validation along
  warm-started, safely screened regularization paths (``train_path``; one
  per pair of classes, one-vs-one, for more than two), then refit on all
  data.
* ``RampSVC``: the ramp-loss (robust) SVM trained by CCCP (``train_ramp``);
  binary.

They work in pipelines, ``GridSearchCV`` and ``clone``, and pass
scikit-learn's ``check_estimator`` (tests/test_estimators.py) except its two
sample-weight-equivalence checks for ``SVC`` and ``SVCPathCV``, which
scikit-learn's own ``SVC`` is also expected to fail.  This module
imports scikit-learn (>= 1.6), which the rest of svmscreen does not need:
``pip install "svmscreen[sklearn]"``.
"""
import functools
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import check_cv
from sklearn.utils import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from svmscreen._kernels import compute_layout, cross_kernel
from svmscreen._validation import (INT64_MAX, ConvergenceWarning, check_box_overflow,
                                   check_csr_structure, check_flag, check_n_jobs,
                                   check_parameters, check_precomputed, check_sample_weight,
                                   check_X, is_balanced, resolve_gamma,
                                   warn_if_not_converged)
from svmscreen.libsvm.model import (MIN_PROB, PROBABILITY_FOLDS, class_pairs,
                                    pairwise_coupling, sigmoid_predict, sigmoid_train)
from svmscreen.model import check_decisions_finite, solve_dual
from svmscreen.one_vs_one import class_rows, fold_accuracy, pair_rows, pair_votes
from svmscreen.path import (SCREENING_RULES, SYMMETRY_RTOL, _asymmetry, _parallel, _sequential,
                            check_C_grid, cv_splits, first_best, fold_bounds, fold_tasks,
                            log_grid, train_path)
from svmscreen.ramp import _train_ramp

__all__ = ["SVC", "SVCPathCV", "RampSVC"]


class EstimatorConvergenceWarning(ConvergenceWarning, SklearnConvergenceWarning):
    """svmscreen's ConvergenceWarning that scikit-learn's filters also
    catch (``warnings.filterwarnings(..., category=sklearn.exceptions.
    ConvergenceWarning)``)."""


def _no_cap(max_iter):
    """scikit-learn's max_iter, -1 (no limit) or a positive int, as the
    solver's int (None, which is not scikit-learn's, gives the solver's
    default cap)."""
    if max_iter is None:
        return None
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) \
            or not (max_iter == -1 or 0 < max_iter <= INT64_MAX):
        # check_parameters' words ("or None") do not name SVC's -1
        raise ValueError(f"max_iter must be -1 (no limit) or a positive integer (at most "
                         f"{INT64_MAX}), got {max_iter!r}")
    return INT64_MAX if max_iter == -1 else int(max_iter)


def _accept_sparse(kernel):
    """validate_data's accept_sparse: CSR, or none for a kernel matrix, so
    that a sparse one is refused as sparse (scikit-learn's words) before
    the square-matrix check."""
    return False if kernel == "precomputed" else "csr"


def _check_X_y(estimator, X, y, kernel):
    """scikit-learn's validation (n_features_in_, feature names), then X as
    svmscreen's functions take it (CSR with int32 indices, or a square
    kernel matrix), the classes and each sample's class index."""
    if sp.issparse(X):
        # before scipy's conversions in validate_data, which segfault on it
        check_csr_structure(X, "X")
    X, y = validate_data(estimator, X, y, accept_sparse=_accept_sparse(kernel),
                         dtype=np.float64, order="C")
    if kernel == "precomputed" and X.shape[0] != X.shape[1]:
        raise ValueError(f"X should be a square kernel matrix, got shape {X.shape}")
    X = check_precomputed(X) if kernel == "precomputed" else check_X(X)
    check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"The number of classes has to be greater than one; got "
                         f"{classes.size} class")
    return X, y, classes, y_index


def _class_weights(class_weight, classes, y, sample_weight):
    """(the class weights, the sample weights checked, ones if None):
    compute_class_weight ("balanced", a dict or None), each weight finite
    and >= 0 and named by its label when not; with the samples' weights
    (class times sample weight), at least two classes must weigh
    something, as scikit-learn's SVC asks."""
    weights = compute_class_weight(class_weight, classes=classes, y=y)
    for label, weight in zip(classes, weights):
        if not (np.isfinite(weight) and weight >= 0):
            raise ValueError(f"class_weight for class {np.asarray(label).item()!r} must be "
                             f"finite and >= 0, got {float(weight)!r}")
    sample_weight = (np.ones(y.size) if sample_weight is None
                     else check_sample_weight(sample_weight, y.size))
    y_index = np.searchsorted(classes, y)
    total = np.bincount(y_index, weights=weights[y_index] * sample_weight,
                        minlength=classes.size)
    if not np.any(total > 0):
        raise ValueError("class_weight times sample_weight is zero for every sample: "
                         "nothing to train")
    if np.count_nonzero(total > 0) < 2:
        raise ValueError("Invalid input - all samples with positive weights belong to "
                         f"the same class (class weights {weights.tolist()}, and "
                         "sample_weight)")
    return weights, sample_weight


def _check_verbose(verbose):
    """scikit-learn's "verbose" constraint: a bool or an int >= 0; returns
    whether to show progress."""
    if not (isinstance(verbose, (bool, np.bool_))
            or (isinstance(verbose, numbers.Integral) and verbose >= 0)):
        raise TypeError(f"verbose must be a bool or an integer >= 0, got {verbose!r}")
    return bool(verbose)


def _check_random_state(random_state):
    """random_state as ``np.random.default_rng`` takes it: None, an int >= 0
    or a Generator; a RandomState (which scikit-learn's estimators take)
    gives a seed drawn from it."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError("random_state must be None, an int >= 0, a numpy Generator or "
                        f"RandomState, got {random_state!r}")
    if random_state < 0:
        raise ValueError(f"random_state must be >= 0, got {random_state!r}")
    return int(random_state)


def _check_X(estimator, X):
    check_is_fitted(estimator)
    if sp.issparse(X):
        check_csr_structure(X, "X")
    return validate_data(estimator, X, accept_sparse=_accept_sparse(estimator.kernel),
                         dtype=np.float64, order="C", reset=False)


def _binary_only(estimator, classes):
    if classes.size != 2:
        raise ValueError(f"Only binary classification is supported by "
                         f"{type(estimator).__name__}; y has {classes.size} classes "
                         "(svmscreen.estimators.SVC and SVCPathCV split them one-vs-one)")


def ovr_decision_function(dec, n_classes):
    """One-vs-rest scores from one-vs-one decision values (positive for the
    pair's first class): the votes plus the summed confidences squashed
    into (-1/3, 1/3), so that they only break ties of the votes
    (scikit-learn's ``decision_function_shape="ovr"``, whose votes give a
    value of exactly 0 to the first class; LIBSVM's, in ``pair_votes`` and
    ``predict``, to the second)."""
    confidence = np.zeros((dec.shape[0], n_classes))
    for pair, (i, j) in enumerate(class_pairs(n_classes)):
        confidence[:, i] += dec[:, pair]
        confidence[:, j] -= dec[:, pair]
    return (pair_votes(dec, n_classes, ties_to_first=True)
            + confidence / (3 * (np.abs(confidence) + 1)))


def _check_pair_box(positive):
    """Refuse a pair of classes whose samples all have C_i = 0 (``positive``:
    whether some C_i is above 0)."""
    if not positive:
        raise ValueError("C times class_weight and sample_weight is zero for every "
                         "sample of a pair of classes: nothing to train")


def _keeps_state_on_failure(fit):
    """A fit that raises leaves the estimator as it was.  scikit-learn
    checks every parameter before it changes any state; here the checks
    run along the fit, and a refit that failed had left the new classes_
    beside the old model (wrong labels, no error)."""
    @functools.wraps(fit)
    def checked_fit(self, *args, **kwargs):
        state = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(state)
            raise
    return checked_fit


class _Estimator(ClassifierMixin, BaseEstimator):
    """The tags the three estimators share: CSR input (not for
    kernel="precomputed", which takes a dense square kernel matrix, as
    scikit-learn's SVC), and whether they take more than two classes
    (``_multi_class``)."""

    _multi_class = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a kernel matrix must be dense (_accept_sparse), as scikit-learn's SVC
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.classifier_tags.multi_class = self._multi_class
        return tags


class SVC(_Estimator):
    """C-support vector classification, as ``sklearn.svm.SVC``, solved by
    svmscreen's SMO (LIBSVM's working-set selection, shrinking and cache).

    Multi-class problems are split one-vs-one, as LIBSVM and scikit-learn
    do: a binary SVM per pair of classes (i < j in ``classes_`` order),
    prediction by votes (ties to the lower class).

    Parameters
    ----------
    C, kernel, degree, gamma, coef0, shrinking, probability, tol,
    cache_size, class_weight, max_iter, decision_function_shape,
    break_ties, random_state, verbose :
        As ``sklearn.svm.SVC``: kernel one of "linear", "poly", "rbf",
        "sigmoid", "precomputed"; gamma a number, "scale" or "auto";
        class_weight a dict or "balanced"; max_iter -1 for no limit.
        ``probability``: Platt scaling of each pair's decision values
        from a 5-fold CV of that pair (LIBSVM's ``-b 1``, folds drawn with
        ``random_state``), coupled over the pairs by Wu, Lin and Weng's
        method; ``predict_proba`` then exists.  ``verbose``: LIBSVM's
        lines per pair on stdout.

    Attributes
    ----------
    classes_, class_weight_, support_, support_vectors_, n_support_,
    dual_coef_, intercept_, n_iter_, n_features_in_, feature_names_in_ :
        As ``sklearn.svm.SVC`` (``dual_coef_`` in LIBSVM's layout; for two
        classes, f(x) > 0 predicts ``classes_[1]``).
    probA_, probB_ : ndarray of shape (n_pairs,)
        The pairs' sigmoids, P(i | i or j) = 1 / (1 + exp(A f_ij + B))
        (with ``probability``).
    """

    def __init__(self, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, verbose=False):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.verbose = verbose

    def _solve_pair(self, X, signs, hi):
        """(support, coef, b, n_iter, status) of one pair's binary SVM: signs +1 for
        the pair's first class, so that f(x) = K(x, X[support]) coef + b > 0
        votes for it; the bounds hi = C * weight, some positive
        (``_check_pair_box``)."""
        result = solve_dual(X, signs, hi, **self._solve_options[1])
        warn_if_not_converged(result.status, result.max_iter, EstimatorConvergenceWarning)
        support = (result.alpha > 0).nonzero()[0]
        if self.verbose:
            # LIBSVM's lines, which scikit-learn's SVC(verbose=True) prints;
            # its nBSV counts support vectors (not a sample of weight 0, at
            # its box [0, 0])
            at_bound = np.count_nonzero(result.alpha[support] >= hi[support])
            print(f"optimization finished, #iter = {result.n_iter}\n"
                  f"obj = {result.objective:f}, rho = {result.rho:f}\n"
                  f"nSV = {support.size}, nBSV = {at_bound}")
        return (support, signs[support] * result.alpha[support], -result.rho, result.n_iter,
                result.status)

    def _kernel_blocks(self, A, B):
        """``cross_kernel`` blocks K(A, B) with the fitted kernel."""
        options = self._solve_options[1]
        return cross_kernel(A, B, options["kernel"], options["gamma"], options["coef0"],
                            options["degree"])

    def _pair_sigmoid(self, X, signs, weight, in_problem, rng):
        """(A, B) of Platt's sigmoid P(first class | f) for one pair: fitted
        to decision values from a 5-fold CV of the pair, as LIBSVM's
        ``svm_binary_svc_probability`` (a fold whose training part holds one
        class predicts it with f = +-1, one with no weight with f = 0), on
        the samples ``in_problem``: those of sample weight above 0, as
        scikit-learn's ``remove_zero_weight`` leaves the others out of the
        problem before LIBSVM's CV."""
        precomputed = self.kernel == "precomputed"
        # a sample of weight 0 had its decision value in Platt's fit: with 40
        # noisy samples of weight 0 among iris's classes 1 and 2, probA_ was
        # -1.1 where scikit-learn's is -4.4, probabilities 0.3 apart
        kept = np.flatnonzero(in_problem)
        if kept.size < signs.size:
            X = X[np.ix_(kept, kept)] if precomputed else X[kept]
            signs, weight = signs[kept], weight[kept]
        n = signs.size
        order = rng.permutation(n)
        dec = np.zeros(n)
        for fold in range(PROBABILITY_FOLDS):
            held = order[fold * n // PROBABILITY_FOLDS:(fold + 1) * n // PROBABILITY_FOLDS]
            train = np.setdiff1d(order, held)
            if held.size == 0 or not np.any(weight[train] > 0):
                continue
            present = np.unique(signs[train])
            if present.size < 2:
                dec[held] = present[0]
                continue
            hi = self._solve_options[0] * weight[train]
            _check_pair_box((hi > 0).any())
            support, coef, b, _, _ = self._solve_pair(
                X[np.ix_(train, train)] if precomputed else X[train], signs[train], hi)
            A = X[np.ix_(held, train)] if precomputed else X[held]
            B = support if precomputed else X[train][support]
            dec[held] = b
            for start, stop, K in self._kernel_blocks(A, B):
                dec[held[start:stop]] += K @ coef
        return sigmoid_train(dec, signs)

    @_keeps_state_on_failure
    def fit(self, X, y, sample_weight=None):
        """Fit one binary SVM per pair of classes.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            For kernel="precomputed", the (n_samples, n_samples) kernel matrix.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None
            C_i = C * class_weight[y_i] * sample_weight_i, as scikit-learn's.

        Returns
        -------
        self

        Notes
        -----
        Where weights differ from ``sklearn.svm.SVC``:

        * a negative, NaN or infinite ``sample_weight`` or class weight is
          a ValueError naming it.  scikit-learn drops the samples of
          negative or NaN sample weight as if they weighed 0, and trains
          with an infinite one (and with a NaN or infinite class weight).
        * ``support_`` indexes the rows of X as given, samples of weight 0
          counted.  scikit-learn's indexes the samples left once those of
          weight 0 are dropped (its precomputed-kernel predictions then
          read the wrong columns; scikit-learn pull request 27763).
        * A class whose C_i are all 0 (class_weight 0, or sample weights 0)
          beside at least two classes with a positive weight is fitted: its
          pairs' intercepts are the finite end of their interval, so each
          votes for the other class and it is never predicted.
          scikit-learn raises there.  Two such classes (a pair with nothing
          to train) are an error here too.
        """
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError("decision_function_shape must be 'ovr' or 'ovo', got "
                             f"{self.decision_function_shape!r}")
        X, y, self.classes_, y_index = _check_X_y(self, X, y, self.kernel)
        probability = check_flag(self.probability, "probability")
        # C_i = C * class_weight[y_i] * sample_weight_i, as scikit-learn's SVC
        self.class_weight_, sample_weight = _class_weights(self.class_weight, self.classes_, y,
                                                           sample_weight)
        weight = self.class_weight_[y_index] * sample_weight
        precomputed = self.kernel == "precomputed"
        C, kernel, degree, coef0, tol, cache_size, max_iter = check_parameters(
            C=self.C, kernel=self.kernel, degree=self.degree, coef0=self.coef0, tol=self.tol,
            cache_size=self.cache_size, max_iter=_no_cap(self.max_iter))
        if precomputed and self.max_iter == -1 and _asymmetry(X) > SYMMETRY_RTOL:
            # SMO need not converge on a kernel matrix that is not symmetric:
            # with no cap, scikit-learn's SVC and LIBSVM run without end there
            # (np.triu(X @ X.T) on heart_scale)
            warnings.warn("the precomputed kernel matrix is not symmetric, so the solver "
                          "need not converge: max_iter=-1 is capped at the solver's default "
                          "(the larger of 10^7 and 100 n iterations)", UserWarning, stacklevel=3)
            max_iter = None
        check_box_overflow(C, weight)
        # one gamma for all pairs: "scale" and "auto" read the whole X
        self._solve_options = C, dict(
            kernel=kernel, gamma=resolve_gamma(self.gamma, X, kernel), coef0=coef0,
            degree=degree, cache_size=cache_size, tol=tol,
            shrinking=check_flag(self.shrinking, "shrinking"), max_iter=max_iter)
        _check_verbose(self.verbose)
        pairs, sigmoids = [], []
        stopped_short = False
        rng = np.random.default_rng(_check_random_state(self.random_state))
        # The kernels' layout once: a CSR X they would densify (letter.scale)
        # was sliced and densified again for every pair and every probability
        # fold, and its folds' kernel blocks were sparse products (letter 3000
        # rows, probability=True: 2.8 times scikit-learn's time, 1.6 dense)
        X_rows = X if precomputed else compute_layout(X)
        # each class's samples found once, not in a pass over y for every
        # pair (100 classes: 4950 passes); a pair's in sample order, which
        # breaks the solver's ties
        rows_of = class_rows(y_index, self.classes_.size)
        # C_i of every sample (a pair's are the same products, taken), and
        # whether each class has one above 0, found once, not per pair
        hi_all = C * weight
        has_box = [bool((hi_all[rows] > 0).any()) for rows in rows_of]
        for i, j in class_pairs(self.classes_.size):
            rows, signs = pair_rows(rows_of, i, j)
            _check_pair_box(has_box[i] or has_box[j])
            X_pair = X[np.ix_(rows, rows)] if precomputed else X_rows[rows]
            support, coef, b, n_iter, status = self._solve_pair(X_pair, signs, hi_all[rows])
            pairs.append((rows[support], coef, b, n_iter))
            stopped_short |= status != "optimal"
            if probability:
                sigmoids.append(self._pair_sigmoid(X_pair, signs, weight[rows],
                                                     sample_weight[rows] > 0, rng))
        if probability:
            self.probA_, self.probB_ = (np.array(v, dtype=np.float64) for v in zip(*sigmoids))
        else:
            self.probA_ = self.probB_ = np.empty(0)
        self._set_support(X, y_index, precomputed, pairs)
        if self.verbose:
            print(f"Total nSV = {self.support_.size}")
        # scikit-learn's: 0 when fitted to the tolerance, 1 otherwise
        self.fit_status_ = int(stopped_short)
        self.shape_fit_ = X.shape
        return self

    @property
    def coef_(self):
        """The weights of the decision functions in feature space, kernel
        "linear" only (scikit-learn's property): shape (1, n_features) for
        two classes (f > 0 predicts ``classes_[1]``), else one row per pair
        (positive for its first class); sparse after a sparse fit."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = (self.dual_coef_ if self.classes_.size == 2 else self._pair_coef.T.toarray())
        if sp.issparse(self.support_vectors_):
            return sp.csr_matrix(sp.csr_matrix(coef) @ self.support_vectors_)
        return coef @ self.support_vectors_

    def _set_support(self, X, y_index, precomputed, pairs):
        """support_, support_vectors_, n_support_, dual_coef_, intercept_ in
        LIBSVM's layout from the pairs' (support, coef, b, n_iter): the
        support vectors grouped by class, and the coefficient of a class-c
        vector in pair (i, j) in row j - 1 if c = i, row i if c = j (signed
        so that it votes for i when positive)."""
        n_classes = self.classes_.size
        # every pair's support vectors and coefficients in one array each,
        # so that the layout is built by whole-array operations, not per pair
        samples = np.concatenate([support for support, _, _, _ in pairs])
        coefs = np.concatenate([coef for _, coef, _, _ in pairs])
        pair_of = np.repeat(np.arange(len(pairs)), [support.size for support, _, _, _ in pairs])
        is_support = np.zeros(y_index.size, dtype=bool)
        is_support[samples] = True
        order = np.lexsort((np.arange(y_index.size), y_index))
        self.support_ = order[is_support[order]].astype(np.int32)
        self.n_support_ = np.bincount(y_index[self.support_],
                                      minlength=n_classes).astype(np.int32)
        position = np.full(y_index.size, -1)
        position[self.support_] = np.arange(self.support_.size)
        # each entry's pair (i, j); a sample's entries of different pairs are
        # in different rows
        pair_classes = np.array(class_pairs(n_classes), dtype=np.intp)[pair_of]
        first, second = pair_classes[:, 0], pair_classes[:, 1]
        dual = np.zeros((n_classes - 1, self.support_.size))
        dual[np.where(y_index[samples] == first, second - 1, first), position[samples]] = coefs
        # the same coefficients by pair, (n_SV, n_pairs): prediction computes
        # K(x, sv) once per support vector, not once per pair it serves in
        self._pair_coef = sp.csr_matrix((coefs, (position[samples], pair_of)),
                                        shape=(self.support_.size, len(pairs)))
        self._pair_intercept = np.array([b for _, _, b, _ in pairs])
        self.n_iter_ = np.array([n_iter for _, _, _, n_iter in pairs], dtype=np.int32)
        self.dual_coef_, self.intercept_ = dual, self._pair_intercept.copy()
        if n_classes == 2:
            # one pair: scikit-learn reports it with f > 0 for classes_[1]
            self.dual_coef_, self.intercept_ = -dual, -self.intercept_
        self.support_vectors_ = (np.empty((0, 0)) if precomputed else X[self.support_])
        if sp.issparse(self.support_vectors_):
            self.support_vectors_ = sp.csr_matrix(self.support_vectors_)

    def _pair_values(self, X):
        """(n, n_pairs) decision values, positive for the pair's first class."""
        X = _check_X(self, X)
        precomputed = self.kernel == "precomputed"
        X = check_precomputed(X, "X", n_train=self.n_features_in_) if precomputed \
            else check_X(X, "X")
        dec = np.tile(self._pair_intercept, (X.shape[0], 1))
        B = self.support_ if precomputed else self.support_vectors_
        for start, stop, K in self._kernel_blocks(X, B):
            dec[start:stop] += (self._pair_coef.T @ K.T).T
        return dec

    def decision_function(self, X):
        """For two classes, f(x) (> 0 predicts ``classes_[1]``); otherwise
        one column per pair ("ovo") or per class ("ovr")."""
        dec = self._pair_values(X)
        if self.classes_.size == 2:
            return -dec[:, 0]
        if self.decision_function_shape == "ovr":
            return ovr_decision_function(dec, self.classes_.size)
        return dec

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is available when probability=True")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order): the pairs'
        sigmoids, clipped to [1e-7, 1 - 1e-7] and coupled (LIBSVM's
        ``svm_predict_probability``)."""
        check_is_fitted(self)
        if self.probA_.size == 0:
            # probability=True set after the fit: scikit-learn's SVC says so
            # with a NotFittedError (an AttributeError and a ValueError)
            raise NotFittedError("predict_proba needs a fit with probability=True; this "
                                 "SVC was fitted with probability=False")
        if not (np.all(np.isfinite(self.probA_)) and np.all(np.isfinite(self.probB_))):
            # set by hand: a nan gave nan probabilities for two classes, and
            # for more an error about the coupling's r, which the user never set
            raise ValueError("probA_ and probB_ must be finite (the pairs' sigmoids)")
        dec = check_decisions_finite(self._pair_values(X))
        r = np.clip(sigmoid_predict(dec, self.probA_, self.probB_), MIN_PROB, 1 - MIN_PROB)
        n_classes = self.classes_.size
        if n_classes == 2:
            return np.column_stack([r[:, 0], 1 - r[:, 0]])
        return pairwise_coupling(r, n_classes)

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def predict(self, X):
        dec = check_decisions_finite(self._pair_values(X))
        n_classes = self.classes_.size
        break_ties = check_flag(self.break_ties, "break_ties")
        if break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if break_ties and n_classes > 2:
            return self.classes_[np.argmax(ovr_decision_function(dec, n_classes), axis=1)]
        # argmax takes the first maximum: ties go to the lower class in sorted
        # order, as scikit-learn (LIBSVM: the class seen first in the data)
        return self.classes_[np.argmax(pair_votes(dec, n_classes), axis=1)]


class _BinaryModelClassifier(_Estimator):
    """What ``SVCPathCV`` and ``RampSVC`` share: a fitted ``model_``
    (BinaryModel, or an SVC fitted on the class indices) that predicts."""

    def decision_function(self, X):
        """f(x), f > 0 predicting ``classes_[1]``; for more classes
        (``SVCPathCV``), the refit ``SVC``'s (its decision_function_shape)."""
        X = _check_X(self, X)
        return self.model_.decision_function(X)

    def predict(self, X):
        X = _check_X(self, X)
        # model_ was trained on the class indices 0 and 1
        return self.classes_[self.model_.predict(X).astype(np.intp)]

    def _binary_fit_data(self, X, y, sample_weight=None):
        """Validated X, the class indices (0, 1) that svmscreen's functions
        train on (any label type), and class_weight as their dict (checked
        with ``sample_weight``: two classes must weigh something)."""
        X, y, self.classes_, y_index = _check_X_y(self, X, y, self.kernel)
        _binary_only(self, self.classes_)
        return X, y_index, self._index_class_weight(y, sample_weight)

    def _index_class_weight(self, y, sample_weight=None):
        """class_weight (dict, "balanced" or None) as {class index: weight},
        checked (``_class_weights``)."""
        weights, _ = _class_weights(self.class_weight, self.classes_, y, sample_weight)
        return {k: float(w) for k, w in enumerate(weights)}


class SVCPathCV(_BinaryModelClassifier):
    """C-SVC with C (and gamma) chosen by cross-validation along
    regularization paths (warm starts, one kernel cache, safe screening),
    refit on all data at the best C.

    Two classes: ``svmscreen.train_path`` with ``cv``.  More: one-vs-one, as
    ``SVC``; in each fold a screened path per pair of classes, the held-out
    samples classified by the pairs' votes at each C; the refit is an
    ``SVC``.

    Parameters
    ----------
    Cs : int or array-like, default=50
        The number of log-spaced C in ``C_range``, or the grid itself
        (strictly increasing).
    C_range : (float, float), default=(1e-2, 1e3)
    cv : int, cross-validation generator or iterable, default=5
        As scikit-learn's (``check_cv``): an integer gives the same
        stratified folds as ``GridSearchCV(cv=k)``.
    kernel, degree, coef0, shrinking, tol, cache_size, class_weight :
        As ``SVC`` (class_weight: a dict, "balanced" or None).
    gamma : float, "scale", "auto" or a list of them, default="scale"
        A list runs one path per value; the best (gamma, C) pair wins.
    screening : {"dvi", "it", "bt2", "essnsv", "ssnsv"} or None, default="dvi"
    n_jobs : int or None
        Folds (with several gamma values, the gammas) in parallel through
        joblib.
    verbose : bool or int, default=False
        Progress on stderr: ``train_path``'s bars (a tqdm bar if tqdm is
        installed) for the path and each fold when they run one after the
        other, joblib's messages when they run in parallel.

    Attributes
    ----------
    C_ : float
        The C of the best mean CV accuracy (the smallest such C on ties).
    gamma_ : float
        Its gamma (the first of the list that reaches that accuracy at C_),
        as GridSearchCV picks.
    Cs_ : ndarray
        The grid.
    cv_accuracy_ : ndarray of shape (n_splits, n_C)
        At gamma_; weighted by the held-out samples' sample_weight if given,
        as GridSearchCV scores.
    path_ : PathResult or None
        The path on all data at gamma_, with its screening statistics (two
        classes; None otherwise).
    paths_ : list of PathResult or None
        One per gamma (two classes).
    model_ : BinaryModel or SVC
        The refit at C_ (and gamma_): an ``SVC`` trained on the class
        indices for more than two classes.
    classes_, n_features_in_
    """

    def __init__(self, Cs=50, C_range=(1e-2, 1e3), cv=5, kernel="rbf", degree=3,
                 gamma="scale", coef0=0.0, shrinking=True, tol=1e-3, cache_size=200,
                 class_weight=None, screening="dvi", n_jobs=None, verbose=False):
        self.Cs = Cs
        self.C_range = C_range
        self.cv = cv
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.screening = screening
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_keeps_state_on_failure
    def fit(self, X, y, sample_weight=None, groups=None):
        """Choose C (and gamma) by CV along the paths, then refit on all data.
        ``groups``: the samples' group labels, for a group splitter such as
        ``cv=GroupKFold()`` (as ``GridSearchCV.fit``).  ``sample_weight``
        multiplies C as in ``SVC.fit`` and weighs the held-out accuracy.
        Each fold's training part must give every class a positive weight
        (``train_path``'s ``cv``), and each held-out part a positive total
        weight: a class of weight 0, which ``SVC`` fits beside two others
        and so ``GridSearchCV(SVC())`` scores, is an error here."""
        X, y, self.classes_, y_index = _check_X_y(self, X, y, self.kernel)
        verbose = _check_verbose(self.verbose)
        splits = list(check_cv(self.cv, y_index, classifier=True).split(X, y_index, groups))
        gammas = list(self.gamma) if isinstance(self.gamma, (list, tuple, np.ndarray)) \
            else [self.gamma]
        if not gammas:
            raise ValueError("gamma is an empty list")
        if self.classes_.size > 2:
            return self._fit_one_vs_one(X, y_index, sample_weight, splits, gammas, verbose)
        # X and y are checked above; two classes here.  "balanced" goes to
        # train_path as such: each fold weighs its own training labels.
        class_weight = self._index_class_weight(y, sample_weight)
        if is_balanced(self.class_weight):
            class_weight = "balanced"
        self.paths_ = train_path(
            X, y_index, C=self._grid(), kernel=self.kernel,
            degree=self.degree, gamma=gammas, coef0=self.coef0,
            shrinking=self.shrinking, tol=self.tol, cache_size=self.cache_size,
            class_weight=class_weight, sample_weight=sample_weight,
            screening=self.screening, cv=splits, n_jobs=self.n_jobs, verbose=verbose)
        best, _ = _best_gamma_and_C([path.cv_mean for path in self.paths_],
                                    self.paths_[0].cv_accuracy.shape[0])
        self.path_ = self.paths_[best]
        self.gamma_ = float(self.path_.gamma)
        self.Cs_ = self.path_.C
        self.cv_accuracy_ = self.path_.cv_accuracy
        self.C_ = float(self.path_.best_C)
        self.model_ = self.path_.best_model
        return self

    def _grid(self):
        """The grid of C: ``Cs`` values log-spaced over C_range, or Cs itself
        (errors name Cs, not train_path's n_C and C)."""
        if np.ndim(self.Cs) == 0:
            if isinstance(self.Cs, bool) or not isinstance(self.Cs, numbers.Integral) \
                    or self.Cs < 1:
                raise ValueError(f"Cs must be a positive integer or a grid of C, "
                                 f"got {self.Cs!r}")
            return log_grid(self.C_range, int(self.Cs))
        try:
            return check_C_grid(self.Cs)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"Cs: {exc}") from None

    def _fit_one_vs_one(self, X, y_index, sample_weight, splits, gammas, verbose):
        self.Cs_ = self._grid()
        weighted = sample_weight is not None
        class_weight, sample_weight = _class_weights(self.class_weight, self.classes_,
                                                     self.classes_[y_index], sample_weight)
        weight = class_weight[y_index] * sample_weight
        check_box_overflow(self.Cs_[-1], weight)
        held_weight = sample_weight if weighted else None
        masks = cv_splits(splits, y_index, weight=weight, held_weight=held_weight)
        # "balanced": each fold weighs its own training labels, as GridSearchCV
        fold_weights = fold_bounds(y_index, np.arange(self.classes_.size), self.class_weight,
                                   sample_weight, weight, masks)
        # what train_path checks for the binary case
        check_n_jobs(self.n_jobs)
        _, kernel, degree, coef0, tol, cache_size, _ = check_parameters(
            C=1.0, kernel=self.kernel, degree=self.degree, coef0=self.coef0, tol=self.tol,
            cache_size=self.cache_size, max_iter=None)
        if self.screening is not None and self.screening not in SCREENING_RULES:
            raise ValueError(f"screening must be one of {SCREENING_RULES} or None, "
                             f"got {self.screening!r}")
        path_options = dict(screening=self.screening, tol=tol,
                            shrinking=check_flag(self.shrinking, "shrinking"), max_iter=None)
        accuracies, resolved = [], []
        # a bar per fold when the folds run here, joblib's lines otherwise
        show_folds = verbose and _sequential(self.n_jobs)
        for gamma in gammas:
            params = dict(kernel=kernel, gamma=resolve_gamma(gamma, X, kernel),
                          coef0=coef0, degree=degree, cache_size=cache_size,
                          fit_intercept=True)
            tasks = fold_tasks(fold_accuracy, X, y_index, fold_weights, masks, self.Cs_, params,
                               gamma, path_options, show_folds, held_weight)
            accuracies.append(np.array(_parallel(self.n_jobs, tasks, verbose=verbose)))
            resolved.append(params["gamma"])
        g, t = _best_gamma_and_C([accuracy.mean(axis=0) for accuracy in accuracies],
                                 accuracies[0].shape[0])
        self.gamma_, self.cv_accuracy_ = resolved[g], accuracies[g]
        self.C_ = float(self.Cs_[t])
        self.path_ = self.paths_ = None
        self.model_ = SVC(C=self.C_, kernel=self.kernel, degree=self.degree, gamma=self.gamma_,
                          coef0=self.coef0, shrinking=self.shrinking, tol=self.tol,
                          cache_size=self.cache_size).fit(X, y_index, sample_weight=weight)
        return self


def _best_gamma_and_C(cv_means, n_folds):
    """(gamma index, C index) of the best mean CV accuracy, ``cv_means`` one
    row per gamma, over ``n_folds`` folds: the smallest C on ties, then the
    first gamma, as GridSearchCV over {"C": ..., "gamma": [...]} picks (C
    varies slowest in its grid, and it keeps the first best); ties within
    the means' round-off, as ``PathResult.best_index`` (``first_best``)."""
    means = np.asarray(cv_means, dtype=float)
    t = first_best(means.max(axis=0), n_folds)
    return first_best(means[:, t], n_folds), t


class RampSVC(_BinaryModelClassifier):
    """Binary ramp-loss SVM (robust to mislabelled training points),
    trained by CCCP with safe screening (``svmscreen.train_ramp``).

    Parameters
    ----------
    C : float, default=1.0
    s : float <= 0, default=0.0
        Where the ramp flattens: a sample with margin below s stops pulling
        on the model.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, class_weight :
        As ``SVC`` (class_weight: a dict, "balanced" or None; ``fit`` takes
        sample_weight, C_i = C * class_weight[y_i] * sample_weight_i).
    screening : {"safe"} or None, default="safe"
    max_outer : int, default=50
        Cap on CCCP steps.
    verbose : bool or int, default=False
        A line per CCCP step on stderr (``train_ramp``'s).

    Attributes
    ----------
    result_ : RampResult
        The CCCP trace (objectives, outliers, screening counts).
    model_ : BinaryModel
    n_iter_ : int
        CCCP steps.
    classes_, n_features_in_
    """

    _multi_class = False

    def __init__(self, C=1.0, s=0.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-3, cache_size=200, class_weight=None,
                 screening="safe", max_outer=50, verbose=False):
        self.C = C
        self.s = s
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.screening = screening
        self.max_outer = max_outer
        self.verbose = verbose

    @_keeps_state_on_failure
    def fit(self, X, y, sample_weight=None):
        """Fit the ramp-loss SVM by CCCP (``svmscreen.train_ramp``).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            For kernel="precomputed", the (n_samples, n_samples) kernel matrix.
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,) or None
            C_i = C * class_weight[y_i] * sample_weight_i, as ``SVC.fit``'s:
            sample i's hinge and its ramp cap are scaled by C_i.  Each weight
            finite and >= 0 (a negative, NaN or infinite one is a
            ValueError); a weight 0 leaves the sample without influence.

        Returns
        -------
        self
        """
        X, y_index, class_weight = self._binary_fit_data(X, y, sample_weight)
        # train_ramp, whose convergence warnings (max_outer, a cycle, a rise
        # of J, an inner solve's cap) scikit-learn's filters also catch, as SVC's
        self.result_ = _train_ramp(
            X, y_index, C=self.C, s=self.s, kernel=self.kernel, degree=self.degree,
            gamma=self.gamma, coef0=self.coef0, shrinking=self.shrinking, tol=self.tol,
            cache_size=self.cache_size, class_weight=class_weight,
            sample_weight=sample_weight, screening=self.screening, max_iter=None,
            max_outer=self.max_outer,
            verbose=_check_verbose(self.verbose), warning=EstimatorConvergenceWarning)
        self.model_ = self.result_.model
        self.n_iter_ = self.result_.n_outer
        return self
