"""The binary SVM model and the low-level entry point that fits one.

``fit_binary`` is the documented low-level entry point: one binary C-SVC,
with LIBSVM's intercept or bias-free, for any kernel, dense or CSR input.
Everything it builds (kernel, cached Q, bounds) goes through the single
solver in ``_solver``.
"""
import numpy as np
import scipy.sparse as sp

from svmscreen._kernels import Kernel, compute_layout, cross_kernel
from svmscreen._solver import QMatrix, solve
from svmscreen._validation import (ConvergenceWarning, binary_signs, check_labels,
                                   check_flag, check_parameters, check_precomputed, check_vector,
                                   check_X, class_bounds, resolve_gamma,
                                   warn_if_not_converged)
from svmscreen.objective import gap_of

__all__ = ["BinaryModel", "fit_binary", "ConvergenceWarning"]


def check_prediction_rows(X, kernel, n_features):
    """The rows of a decision_function, checked: ``n_features`` columns, or
    for a precomputed kernel, one kernel value per training sample."""
    if kernel == "precomputed":
        return check_precomputed(X, "X", n_train=n_features)
    X = check_X(X, "X")
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model was "
                         f"trained with {n_features}")
    return X


def check_decisions_finite(dec):
    """Decision values to predict from, refused where a kernel value
    overflowed: a NaN or infinite value votes by no sign."""
    if not np.all(np.isfinite(dec)):
        raise ValueError("decision values overflow (not finite) for some rows of X; "
                         "scale X down as the training data was")
    return dec


class BinaryModel:
    """A trained binary SVM: f(x) = sum_j dual_coef_j K(sv_j, x) + intercept.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels; f(x) > 0 predicts ``classes_[1]``.
    support_ : ndarray of int
        Indices of the support vectors in the training data.
    support_vectors_ : ndarray or CSR matrix
        Their rows (for a precomputed kernel, empty: only indices are kept).
    dual_coef_ : ndarray
        y_j alpha_j for each support vector (y_j = +1 for classes_[1]).
    intercept_ : float
        b = -rho, or 0 for a bias-free model.
    alpha_ : ndarray
        The full dual solution, one value per training sample; for a
        ramp-loss model, the signed coefficients y_j (beta_j - mu_j) of
        every sample (``dual_coef_`` is then ``alpha_[support_]``).
    objective_ : float
        The dual objective in LIBSVM's (minimisation) form, 1/2 a'Qa - sum a;
        for a ramp-loss model (``train_ramp``), the ramp objective J(w, b)
        of its CCCP step.
    duality_gap_ : float
        Primal-dual gap of the returned solution (computed when first read);
        nan for a ramp-loss model (a non-convex problem).
    n_iter_ : int
    status_ : {"optimal", "max_iter", "round_off"}
        ``_solver.SolveResult.status``; the fit warns when it is not
        "optimal".
    n_features_in_ : int
    n_support_ : int
        Number of support vectors (a property).
    kernel, gamma, coef0, degree, C, fit_intercept
        The parameters of the fit.
    """

    def __init__(self, *, classes, kernel, gamma, coef0, degree, C, fit_intercept,
                 support, support_vectors, dual_coef, intercept, alpha, objective,
                 duality_gap, n_iter, status, n_features):
        self.classes_ = classes
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.C = C
        self.fit_intercept = fit_intercept
        self.support_ = support
        self.support_vectors_ = support_vectors
        self.dual_coef_ = dual_coef
        self.intercept_ = intercept
        self.alpha_ = alpha
        self.objective_ = objective
        # a float, or (grad, hi, y) to compute it from when first read
        self._duality_gap = duality_gap
        self.n_iter_ = n_iter
        self.status_ = status
        self.n_features_in_ = n_features

    @property
    def duality_gap_(self):
        if isinstance(self._duality_gap, tuple):
            grad, hi, y = self._duality_gap
            n = grad.shape[0]
            self._duality_gap = gap_of(self.alpha_, grad, -np.ones(n), np.zeros(n), hi,
                                            y).gap
        return self._duality_gap

    @property
    def n_support_(self):
        """Number of support vectors."""
        return self.support_.size

    def decision_function(self, X):
        """f(x) for each row of X (dense or CSR; for a precomputed kernel,
        the kernel values against every training sample)."""
        X = check_prediction_rows(X, self.kernel, self.n_features_in_)
        B = self.support_ if self.kernel == "precomputed" else self.support_vectors_
        out = np.full(X.shape[0], self.intercept_, dtype=np.float64)
        if self.support_.size == 0:
            return out
        for start, stop, K in cross_kernel(X, B, self.kernel, self.gamma, self.coef0,
                                           self.degree):
            out[start:stop] += K @ self.dual_coef_
        return out

    def predict(self, X):
        """classes_[1] where f(x) >= 0, else classes_[0]: a tie f(x) = 0 goes
        to classes_[1], as in scikit-learn's SVC (LIBSVM gives its first
        label only for f > 0, and scikit-learn's first label is classes_[0],
        whose side is f < 0)."""
        f = check_decisions_finite(self.decision_function(X))
        return self.classes_[(f >= 0).astype(np.intp)]

    def __repr__(self):
        return (f"BinaryModel(kernel={self.kernel!r}, C={self.C!r}, gamma={self.gamma!r}, "
                f"n_support={self.n_support_}, intercept={self.intercept_!r})")


def fit_binary(X, y, *, C=1.0, kernel="rbf", gamma=None, coef0=0.0, degree=3,
               fit_intercept=True, class_weight=None, sample_weight=None, tol=1e-3,
               shrinking=True, cache_size=100.0, max_iter=None, alpha0=None,
               q_rounding=None):
    """Fit one binary C-SVC exactly (LIBSVM's SMO with WSS2 and shrinking).

    Solves  min_a 1/2 a'Qa - sum_i a_i,  0 <= a_i <= C_i,  and y'a = 0 when
    ``fit_intercept`` (LIBSVM's model); without it the bias-free SVM of the
    screening papers (no equality constraint, one-variable steps).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or sparse matrix
        Training data; for ``kernel="precomputed"``, the (n, n) Gram matrix.
    y : array-like of shape (n_samples,)
        Exactly two distinct labels.
    C : float, default=1.0
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, default="rbf"
    gamma : float, "scale", "auto" or None, default=None
        None and "auto" mean 1/n_features, as LIBSVM's default.
    coef0 : float, default=0.0
    degree : int, default=3
    fit_intercept : bool, default=True
    class_weight : dict, "balanced" or None
        C of class ``label`` becomes ``weight * C`` (LIBSVM's ``-wi``;
        each weight finite and >= 0);
        "balanced": weight n / (n_classes * count of the class), as
        scikit-learn's.
    sample_weight : array-like or None
        Per-sample multipliers of C.
    tol : float, default=1e-3
        Stopping tolerance (LIBSVM's ``-e``).
    shrinking : bool, default=True
    cache_size : float, default=100
        Kernel cache in MB (LIBSVM's ``-m``).
    max_iter : int or None
        Default max(1e7, 100 n) as LIBSVM; reaching it warns.
    alpha0 : array-like or None
        A feasible warm start (0 <= alpha0_i <= C_i, and sum_i s_i alpha0_i = 0
        with an intercept, s_i = +1 for classes_[1]).
    q_rounding : {None, "float32"}, default=None
        "float32" is LIBSVM's arithmetic: each entry of Q = s s' * K rounded
        to float32 as LIBSVM's kernel cache stores it, dot products summed in
        index order and svm.cpp's pair step, so that the solver takes
        LIBSVM's iterations and returns LIBSVM's solution (not only one
        within ``tol`` of it), also where round-off decides the outcome,
        e.g. a solve that ends at ``max_iter`` (docs/madelon_linear.md).
        The problem solved is then Q's rounding, off by up to 6e-8 relative
        per entry.

    Returns
    -------
    BinaryModel
    """
    C, kernel, degree, coef0, tol, cache_size, max_iter = check_parameters(
        C=C, kernel=kernel, degree=degree, coef0=coef0, tol=tol,
        cache_size=cache_size, max_iter=max_iter)
    fit_intercept = check_flag(fit_intercept, "fit_intercept")
    shrinking = check_flag(shrinking, "shrinking")
    if q_rounding not in (None, "float32"):
        raise ValueError(f"q_rounding must be None or 'float32', got {q_rounding!r}")
    X = check_precomputed(X) if kernel == "precomputed" else check_X(X)
    y = check_labels(y, X.shape[0])
    classes, signs = binary_signs(y)
    gamma = resolve_gamma(gamma, X, kernel)
    hi = class_bounds(y, classes, C, class_weight, sample_weight)
    n = X.shape[0]
    lo = np.zeros(n)
    if alpha0 is None:
        alpha0 = np.zeros(n)
    else:
        alpha0 = check_vector(alpha0, n, "alpha0")
        if np.any(alpha0 < lo) or np.any(alpha0 > hi):
            raise ValueError("alpha0 must satisfy 0 <= alpha0_i <= C_i")
        if fit_intercept and abs(np.dot(signs, alpha0)) > 1e-10 * max(1.0, hi.sum()):
            raise ValueError("alpha0 must satisfy sum_i y_i alpha0_i = 0 when fit_intercept=True")

    result = solve_dual(X, signs, hi, kernel=kernel, gamma=gamma, coef0=coef0, degree=degree,
                        cache_size=cache_size, tol=tol, shrinking=shrinking,
                        max_iter=max_iter, fit_intercept=fit_intercept, alpha0=alpha0,
                        q_rounding=q_rounding, libsvm_first=libsvm_first_sign(classes, signs))
    warn_if_not_converged(result.status, result.max_iter)
    equality = signs if fit_intercept else None
    alpha = result.alpha
    support = np.flatnonzero(alpha > 0)
    if kernel == "precomputed":
        support_vectors = np.empty((0, 0))
    else:
        support_vectors = X[support]
        if sp.issparse(support_vectors):
            support_vectors = sp.csr_matrix(support_vectors)
    grad = result.grad
    return BinaryModel(
        classes=classes, kernel=kernel, gamma=gamma, coef0=coef0, degree=degree, C=C,
        fit_intercept=fit_intercept, support=support, support_vectors=support_vectors,
        dual_coef=signs[support] * alpha[support],
        intercept=-result.rho if fit_intercept else 0.0, alpha=alpha,
        objective=result.objective, duality_gap=(grad, hi, equality), n_iter=result.n_iter,
        status=result.status, n_features=X.shape[1])


def libsvm_first_sign(classes, signs):
    """The sign of the class LIBSVM takes as +1 (svm_group_classes): the
    first sample's class, except that labels -1 and +1 keep +1 positive."""
    if classes.size == 2 and classes[0] == -1.0 and classes[1] == 1.0:
        return 1.0
    return float(signs[0])


def solve_dual(X, signs, hi, *, kernel, gamma, coef0, degree, cache_size, tol, shrinking,
               max_iter, fit_intercept=True, alpha0=None, q_rounding=None, libsvm_first=None):
    """The C-SVC dual of ``fit_binary`` on inputs it has already checked
    (X as ``check_X`` / ``check_precomputed`` return it, signs +-1, the
    bounds hi = C_i, gamma resolved): min 1/2 a'Qa - sum a, 0 <= a <= hi,
    and s'a = 0 with the intercept.  Returns ``_solver.solve``'s result
    (b = -rho; its status says whether it stopped at max_iter, and the
    caller warns).  ``estimators.SVC`` calls it once per pair of classes.
    ``libsvm_first``: with q_rounding="float32", the sign LIBSVM makes +1
    (``libsvm_first_sign``; None: the first sample's)."""
    n = signs.shape[0]
    libsvm_arithmetic = q_rounding == "float32"
    order = None
    if libsvm_arithmetic and fit_intercept and n:
        # LIBSVM's own problem (svm_group_classes): the first sample's class
        # is +1 and its samples come first, each class in input order.  Its
        # Q, bounds and equality are ours, permuted, but the working-set
        # selection reads the order and the signs: taken as given, 21 of
        # 400 interleaved problems ended at another point within tol.
        first = signs[0] if libsvm_first is None else libsvm_first
        order = np.concatenate([np.flatnonzero(signs == first), np.flatnonzero(signs != first)])
        X = X[np.ix_(order, order)] if kernel == "precomputed" else X[order]
        signs, hi = first * signs[order], hi[order]
        alpha0 = None if alpha0 is None else alpha0[order]
    kernel_obj = Kernel(compute_layout(X), kernel, gamma, coef0, degree,
                        in_order=libsvm_arithmetic)
    Q = QMatrix(kernel_obj, signs, cache_size, round_float32=libsvm_arithmetic)
    # p = -1 filled in place (-np.ones(n) took 0.8 us of a one-vs-one pair's
    # 20); solve copies its inputs, so lo and alpha0 can share the zeros
    p = np.empty(n)
    p.fill(-1.0)
    zeros = np.zeros(n)
    result = solve(Q, p, zeros, hi, zeros if alpha0 is None else alpha0,
                   y=signs if fit_intercept else None, tol=tol, shrinking=shrinking,
                   max_iter=max_iter)
    if order is not None:
        back = np.empty(n, dtype=np.intp)
        back[order] = np.arange(n)
        result.alpha, result.grad = result.alpha[back], result.grad[back]
        result.frozen = result.frozen[back]
        result.rho = first * result.rho          # f = first f' with Q unchanged
    return result
