"""LIBSVM's multi-class C-SVC and nu-SVC, one-class, epsilon-SVR and
nu-SVR, probability estimates and cross-validation, on svmscreen's kernels
and its one solver.

What this reproduces from ``svm.cpp`` (LIBSVM 3.37):

* ``svm_group_classes``: labels cast with ``(int)``, ordered by first
  occurrence, except that a two-class {-1, +1} set seen -1 first is swapped
  so that +1 is the positive class; samples regrouped by class, stably.
* ``svm_train``: one-vs-one over the k(k-1)/2 pairs (i < j), class i as +1
  with C_i = C * weight_i, class j as -1 with C_j; SVs kept grouped by class,
  ``sv_coef`` in the (k-1) x l layout (classifier (i, j): the coefficients of
  class i's SVs in row j-1, those of class j's SVs in row i).
* ``svm_predict_values``: f_ij(x) = sum coef K(sv, x) - rho_ij, one vote to
  i if f_ij > 0 else to j, the first class with most votes wins.
* ``svm_binary_svc_probability`` (internal 5-fold CV, shuffled with C
  ``rand()``, sub-SVMs with C = 1 and weights Cp, Cn), ``sigmoid_train``
  (Platt with Lin, Lin & Weng's targets and Newton with backtracking),
  ``sigmoid_predict``, ``multiclass_probability`` (Wu, Lin & Weng, method 2),
  ``svm_predict_probability`` (pairwise estimates clipped to [1e-7, 1-1e-7],
  the label of the largest probability).
* ``svm_cross_validation``: stratified folds for classification.

Also ``solve_nu_svc`` and ``solve_nu_svr`` (the solver's ``nu`` mode,
svm.cpp's Solver_NU), ``solve_epsilon_svr`` (SVR_Q over the doubled rows)
and ``solve_one_class``, with their -b 1 models (``svm_svr_probability``,
``svm_one_class_probability``).  The random shuffles draw from
``_rand.default_generator`` (glibc's ``rand()`` after ``srand(1)``), so
fold assignments and probability models match LIBSVM's.

Trusts its caller (``svmutil``, ``commands``): the problem comes from
``svm.svm_problem`` and the parameters passed ``svm.check_parameter``.
"""
import operator
import sys

import numpy as np
import scipy.sparse as sp

from svmscreen._kernels import Kernel, compute_layout, cross_kernel
from svmscreen._one_vs_one import combine_pairs, merge_rows, vote
from svmscreen._probability import couple_matrices, couple_pairs, sigmoid_from_exp
from svmscreen._solver import QMatrix, solve
from svmscreen._validation import INT_MAX
from svmscreen.libsvm._rand import default_generator
from svmscreen.libsvm.svm import (C_SVC, EPSILON_SVR, KERNEL_CODE_NAMES, NU_SVC, NU_SVR,
                                  ONE_CLASS, PRECOMPUTED, c_number, print_null, print_stdout,
                                  svm_model)

__all__ = ["train", "cross_validation", "group_classes", "decision_values", "predict",
           "predict_probability", "sigmoid_train", "sigmoid_predict",
           "multiclass_probability", "pairwise_coupling", "resolve_parameters"]

MIN_PROB = 1e-7              # pairwise probabilities are clipped to [MIN_PROB, 1 - MIN_PROB]
PROBABILITY_FOLDS = 5        # svm_binary_svc_probability's internal CV
DENSE_SV_BYTES = 256 << 20   # densify the SVs for prediction below this size ...
DENSE_SV_DENSITY = 1 / 16    # ... and at least this dense
BLOCK_VALUES = 1 << 22       # kernel values per prediction block
LAYOUT_ENTRIES = 1 << 20     # pairs' coefficients placed in sv_coef at once (train)


# ------------------------------------------------------------ parameters
def resolve_parameters(prob, param):
    """The checks and defaults every LIBSVM front end applies before
    training: precomputed rows must start with a valid ``0:serial``, and
    gamma = 0 means 1/n.  Returns a copy of param; raises ValueError."""
    if prob.l == 0:
        raise ValueError("the training set is empty")
    if prob.isKernel and param.kernel_type != PRECOMPUTED:
        raise ValueError("the problem holds a precomputed kernel (svm_problem(..., "
                         "isKernel=True)); train it with -t 4")
    if param.kernel_type == PRECOMPUTED:
        X = prob.X
        has_entries = np.diff(X.indptr) > 0
        first_is_zero = np.zeros(prob.l, dtype=bool)
        first_is_zero[has_entries] = X.indices[X.indptr[:-1][has_entries]] == 0
        if not (prob.isKernel and np.all(first_is_zero)):
            raise ValueError("Wrong input format: first column must be 0:sample_serial_number")
        serial = np.trunc(X.data[X.indptr[:-1]]) if prob.l else np.zeros(0)
        if np.any(serial <= 0) or np.any(serial > prob.n) or np.any(serial >= X.shape[1]):
            raise ValueError("Wrong input format: sample_serial_number out of range")
    param = param.copy()
    if param.gamma == 0 and prob.n > 0:
        param.gamma = 1.0 / prob.n
    return param


# ----------------------------------------------------------------- groups
def int_labels(y, source=None):
    """LIBSVM's ``(int)prob->y[i]``: truncation toward zero.  ``source``
    names the file whose line i holds sample i, for the error; None: the
    labels came as y, and y[i] is named."""
    values = np.asarray(y, dtype=np.float64)
    labels = np.trunc(values)
    # the truncated label must fit: -2147483648 (INT_MIN) and 2147483647.5
    # are C ints after the cast, where |y| <= INT_MAX had refused them
    outside = ~((labels >= -INT_MAX - 1) & (labels <= INT_MAX))
    if np.any(outside):
        first = int(np.argmax(outside))
        where = (f"y[{first}]" if source is None
                 else f"sample {first + 1} (line {first + 1} of {source})")
        raise ValueError(f"class label {float(values[first])!r} of {where} does not fit "
                         "in a C int")
    return labels.astype(np.int64)


def group_classes(y):
    """``svm_group_classes``: (label, start, count, perm).

    label[c] is class c's label (first-occurrence order, with the {-1, +1}
    swap), start/count its block in the regrouped order, and perm[k] the
    original index of the k-th regrouped sample (stable within a class).
    """
    labels = int_labels(y)
    if labels.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty.astype(np.intp)
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(by_first.size)
    data_label = rank[inverse.ravel()]
    label = uniq[by_first]
    if label.size == 2 and label[0] == -1 and label[1] == 1:
        label = label[::-1].copy()
        data_label = 1 - data_label
    count = np.bincount(data_label, minlength=label.size)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    perm = np.argsort(data_label, kind="stable")
    return label, start, count, perm


def class_pairs(nr_class):
    """The classifiers (i, j), i < j, in LIBSVM's order."""
    return [(i, j) for i in range(nr_class) for j in range(i + 1, nr_class)]


# --------------------------------------------------------- training rows
class TrainingRows:
    """The rows of one training problem, in a given order, in the form the
    kernels want: dense or CSR (``compute_layout``), or for a precomputed
    kernel the rows of K with the serial numbers that index its columns."""

    def __init__(self, X, param):
        self.kernel = KERNEL_CODE_NAMES[param.kernel_type]
        self.gamma = float(param.gamma)
        self.coef0 = float(param.coef0)
        self.degree = int(param.degree)
        if param.kernel_type == PRECOMPUTED:
            self.values = X.toarray()
            self.serial = np.trunc(self.values[:, 0]).astype(np.intp)
        else:
            data = compute_layout(X)
            if sp.issparse(data):
                data = sp.csr_matrix((data.data, data.indices.astype(np.int32),
                                      data.indptr.astype(np.int32)), shape=data.shape)
            self.values = data

    def take(self, rows):
        """Training data for a Kernel over ``rows``."""
        if self.kernel == "precomputed":
            return np.ascontiguousarray(self.values[np.ix_(rows, self.serial[rows])])
        data = self.values[rows]
        if sp.issparse(data):
            data = sp.csr_matrix((data.data, data.indices.astype(np.int32),
                                  data.indptr.astype(np.int32)), shape=data.shape)
        return data

    def cross(self, rows, cols):
        """The block K(x_rows, x_cols)."""
        if self.kernel == "precomputed":
            return self.values[np.ix_(rows, self.serial[cols])]
        out = np.empty((len(rows), len(cols)))
        for start, stop, block in cross_kernel(self.values[rows], self.values[cols],
                                               self.kernel, self.gamma, self.coef0,
                                               self.degree, rbf_by_differences=True):
            out[start:stop] = block
        return out


def _libsvm_solve(rows, idx, sign, p, alpha0, hi, param, info, nu=False, kernel_row=None):
    """``Solver::Solve`` on the rows ``rows[idx]`` with Q_ij = sign_i sign_j
    K_ij, linear term p, start alpha0 and upper bounds hi, in LIBSVM's
    arithmetic (dot products summed in index order, Q rounded to float as
    its cache does, svm.cpp's pair step), so that a script gets LIBSVM's
    iterations and model, not one within eps of it.  ``nu``: Solver_NU
    (nu-SVC, nu-SVR).  ``kernel_row``: the row of ``rows[idx]`` each
    variable reads, where variables share rows (``_solve_svr_dual``); None:
    one variable per row.  Prints the solver's marks; returns the
    ``SolveResult``."""
    kernel = Kernel(rows.take(idx), rows.kernel, rows.gamma, rows.coef0, rows.degree,
                    in_order=True)
    Q = QMatrix(kernel, sign, float(param.cache_size), round_float32=True, rows=kernel_row)
    # svm.cpp's marks, in its order and as the solve goes: '.' per min(l,
    # 1000) iterations, '*' per gradient rebuild, and its warning when few
    # variables are free (at the end only, a 30 s solve showed nothing for 30 s)
    show = None if not _prints(info) else (
        lambda marks: info(marks.replace("W", "\nWARNING: using -h 0 may be faster\n")))
    result = solve(Q, p, np.zeros(sign.shape[0]), hi, alpha0, y=sign, tol=float(param.eps),
                   shrinking=bool(param.shrinking), nu=nu, libsvm_rho=True, progress=show)
    if result.status == "max_iter":
        sys.stderr.write("\nWARNING: reaching max number of iterations\n")
    if _prints(info):
        info(f"\noptimization finished, #iter = {result.n_iter}\n")
    return result


def _prints(info):
    """Whether the output hook ``info`` shows anything.  Under ``-q`` the
    per-solve messages are not formatted: at 100 classes of 5 samples, the
    4950 pairs' lines had cost a third of the time of their solves."""
    return info is not None and info is not _silent and info is not print_null


def _nu_line(total, size):
    """svm.cpp's "nu = %f" line of total / size, in C's double arithmetic:
    nan or inf at size 0 (a weight of 0, an empty CV fold), printed as C."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return "nu = %s\n" % c_number("%f", np.float64(total) / np.float64(size))


def _report(info, objective, rho, first_line, coef, at_bound):
    """``svm_train_one``'s lines after the solver's (``first_line``: the
    solve_* function's own, if it prints one)."""
    if not _prints(info):
        return
    if first_line is not None:
        info(first_line)
    info("obj = %s, rho = %s\n" % (c_number("%f", objective), c_number("%f", rho)))
    # svm.cpp counts fabs(alpha) > 0: a nan coefficient (r = 0) is none
    is_sv = np.abs(coef) > 0
    info("nSV = %d, nBSV = %d\n" % (np.count_nonzero(is_sv),
                                    np.count_nonzero(is_sv & at_bound)))


def solve_pair(rows, idx, sign, Cp, Cn, param, info):
    """``svm_train_one`` for C-SVC: the binary problem on ``rows[idx]`` with
    labels ``sign`` (+1/-1), bounds Cp/Cn; for nu-SVC, ``solve_nu_svc``
    (which has no Cp, Cn).  Returns (y_i alpha_i, rho) and prints LIBSVM's
    messages."""
    if param.svm_type == NU_SVC:
        return solve_nu_svc(rows, idx, sign, param, info)
    n = idx.shape[0]
    hi = np.where(sign > 0, Cp, Cn)
    # p = -1 filled in place (-np.ones(n) took 0.8 us of a pair's 25 at 100
    # classes of 5 samples)
    p = np.empty(n)
    p.fill(-1.0)
    result = _libsvm_solve(rows, idx, sign, p, np.zeros(n), hi, param, info)
    alpha = result.alpha
    if _prints(info):
        _report(info, result.objective, result.rho,
                _nu_line(alpha.sum(), Cp * n) if Cp == Cn else None, alpha, alpha >= hi)
    return alpha * sign, float(result.rho)


def solve_nu_svc(rows, idx, sign, param, info):
    """``solve_nu_svc`` and ``svm_train_one``: min 1/2 a'Qa, 0 <= a <= 1,
    sum a = nu l / 2 over each class, from LIBSVM's start (each class's
    first samples at 1 until nu l / 2 is spent); then scaled by 1/r, so
    that it is the C-SVC solution at C = 1/r.  Returns (y_i alpha_i, rho)."""
    n = idx.shape[0]
    alpha0 = np.zeros(n)
    remaining = {1.0: param.nu * n / 2, -1.0: param.nu * n / 2}
    for i in range(n):
        alpha0[i] = min(1.0, remaining[sign[i]])
        remaining[sign[i]] -= alpha0[i]
    result = _libsvm_solve(rows, idx, sign, np.zeros(n), alpha0, np.ones(n), param, info,
                           nu=True)
    # r = 0 happens (a duplicate point with both labels): svm.cpp's double
    # divisions then give inf and nan, which it prints and saves; so do these
    r = np.float64(result.r)
    with np.errstate(divide="ignore", invalid="ignore"):
        info("C = %f\n" % (1 / r))
        # svm.cpp's operations, in its order: alpha_i *= y_i / r, rho /= r,
        # obj /= r^2, and the bound 1/r of nBSV
        coef = result.alpha * (sign / r)
        rho = result.rho / r
        _report(info, result.objective / (r * r), rho, None, coef, np.abs(coef) >= 1 / r)
    return coef, float(rho)


def _solve_svr_dual(rows, l, p, alpha0, C, param, info, nu=False):
    """SVR_Q's 2l-variable problem: a (s = +1) then a* (s = -1), both on
    the l samples' kernel rows (each row's values computed once a column),
    so Q = s s' K over the rows doubled; linear term p, start alpha0, box
    [0, C].  Returns (the ``SolveResult``, a - a*)."""
    sign = np.concatenate([np.ones(l), -np.ones(l)])
    result = _libsvm_solve(rows, np.arange(l), sign, p, alpha0, np.full(2 * l, C), param,
                           info, nu=nu, kernel_row=np.concatenate([np.arange(l), np.arange(l)]))
    return result, result.alpha[:l] - result.alpha[l:]


def solve_epsilon_svr(rows, y, param, info):
    """``solve_epsilon_svr`` and ``svm_train_one``: the 2l-variable dual
    (``_solve_svr_dual``) min 1/2 (a - a*)'K(a - a*) + sum (p - y_i) a_i +
    (p + y_i) a*_i, sum (a - a*) = 0, 0 <= a, a* <= C.  Returns
    (a - a*, rho)."""
    l = y.shape[0]
    C = float(param.C)
    result, coef = _solve_svr_dual(rows, l, np.concatenate([param.p - y, param.p + y]),
                                   np.zeros(2 * l), C, param, info)
    _report(info, result.objective, result.rho, _nu_line(np.abs(coef).sum(), C * l), coef,
            np.abs(coef) >= C)
    return coef, float(result.rho)


def solve_nu_svr(rows, y, param, info):
    """``solve_nu_svr`` and ``svm_train_one``: epsilon-SVR's 2l-variable
    dual (``solve_epsilon_svr``) with the tube width a variable: linear
    term -y, y, and sum (a + a*) = C nu l by Solver_NU, from LIBSVM's
    start (a_i = a*_i = C until C nu l / 2 is spent).  Prints the tube
    width -r as epsilon.  Returns (a - a*, rho)."""
    l = y.shape[0]
    C = float(param.C)
    start = np.zeros(l)
    remaining = C * param.nu * l / 2
    for i in range(l):
        start[i] = min(remaining, C)
        remaining -= start[i]
    result, coef = _solve_svr_dual(rows, l, np.concatenate([-y, y]),
                                   np.concatenate([start, start]), C, param, info, nu=True)
    info("epsilon = %f\n" % -result.r)
    _report(info, result.objective, result.rho, None, coef, np.abs(coef) >= C)
    return coef, float(result.rho)


def solve_one_class(rows, l, param, info):
    """``solve_one_class`` and ``svm_train_one``: min 1/2 a'Ka,
    sum a = nu l, 0 <= a <= 1, from LIBSVM's start (the first floor(nu l)
    at 1, the next at the remainder).  Returns (a, rho)."""
    alpha0 = np.zeros(l)
    n = int(param.nu * l)
    alpha0[:n] = 1.0
    if n < l:
        alpha0[n] = param.nu * l - n
    result = _libsvm_solve(rows, np.arange(l), np.ones(l), np.zeros(l), alpha0, np.ones(l),
                           param, info)
    _report(info, result.objective, result.rho, None, result.alpha, result.alpha >= 1.0)
    return result.alpha, float(result.rho)


# ---------------------------------------------------------------- training
def train(prob, param, info=print_stdout, rng=None):
    """``svm_train``: an ``svm_model`` from an ``svm_problem``.

    Parameters
    ----------
    prob : svm_problem
    param : svm_parameter
        Checked and resolved (``resolve_parameters``).
    info : callable or None
        LIBSVM's output hook (``None`` prints nothing).
    rng : GlibcRandom, optional
        For ``-b 1``; default the shared ``rand()`` state.
    """
    if info is None:
        info = _silent
    rng = default_generator if rng is None else rng
    if param.svm_type in (EPSILON_SVR, NU_SVR, ONE_CLASS):
        return _train_single(prob, param, info, rng)
    label, start, count, perm = group_classes(prob.y)
    k = label.size
    if k == 1:
        info("WARNING: training data in only one class. See README for details.\n")
    X_grouped = prob.X[perm]
    rows = TrainingRows(X_grouped, param)

    weighted_C = np.full(k, float(param.C))
    for weight_label, weight in zip(param.weight_label, param.weight):
        match = np.flatnonzero(label == weight_label)
        if match.size == 0:
            sys.stderr.write("WARNING: class label %d specified in weight is not found\n"
                             % weight_label)
        else:
            weighted_C[match[0]] *= weight

    pairs = class_pairs(k)
    grouped = np.arange(prob.l)
    idxs, coefs = [], []
    rho = np.zeros(len(pairs))
    probA = np.zeros(len(pairs)) if param.probability else None
    probB = np.zeros(len(pairs)) if param.probability else None
    for p, (i, j) in enumerate(pairs):
        # class i's block then class j's (i < j: the merge keeps that order),
        # signed +1 and -1
        idx, sign = merge_rows(grouped[start[i]:start[i] + count[i]],
                               grouped[start[j]:start[j] + count[j]])
        if param.probability:
            probA[p], probB[p] = binary_svc_probability(rows, idx, sign, weighted_C[i],
                                                        weighted_C[j], param, info, rng)
        coef, rho[p] = solve_pair(rows, idx, sign, weighted_C[i], weighted_C[j], param, info)
        idxs.append(idx)
        coefs.append(coef)

    nonzero = np.zeros(prob.l, dtype=bool)
    for idx, coef in _pair_blocks(idxs, coefs):
        nonzero[idx[np.abs(coef) > 0]] = True        # svm.cpp's fabs(alpha) > 0
    nSV = np.array([np.count_nonzero(nonzero[start[c]:start[c] + count[c]])
                    for c in range(k)], dtype=np.int64)
    total_sv = int(nSV.sum())
    info("Total nSV = %d\n" % total_sv)
    sv_pos = np.flatnonzero(nonzero)
    sv_coef = _sv_coef_layout(k, pairs, idxs, coefs, count, nonzero)

    model = svm_model()
    model.param = param.copy()
    model.nr_class = int(k)
    model.l = total_sv
    model.SV = X_grouped[sv_pos]
    model.sv_coef = sv_coef
    model.rho = rho
    model.probA = probA
    model.probB = probB
    model.sv_indices = (perm[sv_pos] + 1).astype(np.int64)
    model.label = label.astype(np.int64)
    model.nSV = nSV
    return model


def _pair_blocks(idxs, coefs, pairs=None):
    """The pairs' (idx, coef) concatenated over blocks of consecutive pairs
    of about LAYOUT_ENTRIES entries (at least one pair each), and with
    ``pairs``, each entry's pair (i, j) as two arrays: ``train``'s layout
    works on whole arrays, not pair by pair (about 5 us a pair at 100
    classes), within a bounded memory (the pairs hold (k - 1) l entries)."""
    ends = np.cumsum([0] + [idx.size for idx in idxs])
    first = 0
    while first < len(idxs):
        last = max(first + 1, int(np.searchsorted(ends, ends[first] + LAYOUT_ENTRIES,
                                                  side="right")) - 1)
        block = (np.concatenate(idxs[first:last]), np.concatenate(coefs[first:last]))
        if pairs is not None:
            pair_of = np.repeat(np.arange(first, last), np.diff(ends[first:last + 1]))
            ij = np.array(pairs, dtype=np.intp).reshape(-1, 2)[pair_of]
            block += (ij[:, 0], ij[:, 1])
        yield block
        first = last


def _sv_coef_layout(k, pairs, idxs, coefs, count, nonzero):
    """svm_train's (k - 1) x nSV sv_coef: classifier (i, j) puts the
    coefficients of class i's SVs in row j - 1, those of class j's in row
    i, each SV in its column (the SVs are the grouped samples with
    ``nonzero``, in grouped order).  Every coefficient of an SV is written,
    0 (or -0) of a pair where it is none included, as svm.cpp does; a
    sample's entries of different pairs lie in different rows."""
    sv_coef = np.zeros((max(k - 1, 0), int(np.count_nonzero(nonzero))))
    column = np.cumsum(nonzero) - 1
    class_of = np.repeat(np.arange(k), count)
    for idx, coef, i, j in _pair_blocks(idxs, coefs, pairs):
        keep = nonzero[idx]
        idx, coef, i, j = idx[keep], coef[keep], i[keep], j[keep]
        sv_coef[np.where(class_of[idx] == i, j - 1, i), column[idx]] = coef
    return sv_coef


def _train_single(prob, param, info, rng):
    """``svm_train``'s branch for one decision function (epsilon-SVR,
    nu-SVR, one-class): SVs in sample order, ``sv_coef`` of shape (1, l); with -b 1,
    the Laplace scale of the SVR's residuals (``svr_probability``) or
    one-class's density marks (``one_class_probability_marks``), each after
    the model's own solve, in svm.cpp's order of messages."""
    model = svm_model()          # label, nSV and the probability fields start as None
    model.param = param.copy()
    model.nr_class = 2
    rows = TrainingRows(prob.X, param)
    if param.svm_type in (EPSILON_SVR, NU_SVR):
        solver = solve_epsilon_svr if param.svm_type == EPSILON_SVR else solve_nu_svr
        coef, rho = solver(rows, np.asarray(prob.y, dtype=np.float64), param, info)
        if param.probability:
            model.probA = np.array([svr_probability(prob, param, info, rng)])
    else:
        coef, rho = solve_one_class(rows, prob.l, param, info)
    sv = np.flatnonzero(np.abs(coef) > 0)
    model.rho = np.array([rho])
    model.l = int(sv.size)
    model.SV = prob.X[sv]
    model.sv_coef = coef[sv][None, :]
    model.sv_indices = (sv + 1).astype(np.int64)
    if param.probability and param.svm_type == ONE_CLASS:
        model.prob_density_marks = one_class_probability_marks(model, prob.X)
    return model


def _sum_in_order(values):
    """sum_i values[i] added in index order, as a C loop (0 if empty)."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


def svr_probability(prob, param, info, rng):
    """``svm_svr_probability``: sigma of the Laplace model of the residuals
    y - f(x) of a 5-fold CV, the mean |residual| over those within
    5 sqrt(2) times the first mean."""
    fitted = param.copy()
    fitted.probability = 0
    residual = np.asarray(prob.y, dtype=np.float64) - cross_validation(
        prob, fitted, PROBABILITY_FOLDS, info, rng)
    size = np.abs(residual)
    # svm.cpp's loops: sums in index order (cumsum), the samples not beyond
    # 5 std kept (a nan residual too), and a division by 0 samples giving nan
    # (an outer CV fold can leave none to train on)
    with np.errstate(invalid="ignore", divide="ignore"):
        mae = _sum_in_order(size) / np.float64(size.size)
        std = np.sqrt(2.0 * mae * mae)
        kept = size[~(size > 5.0 * std)]
        mae = _sum_in_order(kept) / np.float64(kept.size)
    info("Prob. model for test data: target value = predicted value + z,\nz: Laplace "
         "distribution e^(-|z|/sigma)/(2sigma),sigma= %s\n" % c_number("%g", mae))
    return mae


def one_class_probability_marks(model, X, nr_marks=10):
    """``svm_one_class_probability``: the midpoints of nr_marks + 1 marks
    taken from the sorted training decision values, half among the
    negative ones and half among the rest (0 between); None, with LIBSVM's
    warning, if either side has fewer than nr_marks / 2 values."""
    dec = np.sort(decision_values(model, X)[:, 0])
    l = dec.size
    neg = int(np.searchsorted(dec, 0.0, side="left"))
    neg = neg if neg < l else 0       # svm.cpp's counter stays 0 when no value is >= 0
    pos = l - neg
    mid = nr_marks // 2
    if neg < mid or pos < mid:
        sys.stderr.write("WARNING: number of positive or negative decision values <%d; too "
                         "few to do a probability estimation.\n" % mid)
        return None
    marks = np.empty(nr_marks + 1)
    for i in range(mid):
        marks[i] = dec[i * neg // mid]
    marks[mid] = 0.0
    for i in range(mid + 1, nr_marks + 1):
        marks[i] = dec[neg - 1 + (i - mid) * pos // mid]
    return (marks[:-1] + marks[1:]) / 2.0


def _silent(s):
    return None


# ------------------------------------------------------------ probability
def binary_svc_probability(rows, idx, sign, Cp, Cn, param, info, rng):
    """``svm_binary_svc_probability``: (A, B) of the sigmoid fitted to
    decision values from a 5-fold CV of the pair's problem."""
    n = idx.shape[0]
    perm = np.array(rng.shuffle_indices(list(range(n))), dtype=np.intp)
    dec = np.zeros(n)
    for fold in range(PROBABILITY_FOLDS):
        begin = fold * n // PROBABILITY_FOLDS
        end = (fold + 1) * n // PROBABILITY_FOLDS
        train_pos = np.concatenate([perm[:begin], perm[end:]])
        test_pos = perm[begin:end]
        positive = sign[train_pos] > 0
        n_pos = int(np.count_nonzero(positive))
        n_neg = train_pos.shape[0] - n_pos
        if n_pos == 0 and n_neg == 0:
            dec[test_pos] = 0.0
        elif n_neg == 0:
            dec[test_pos] = 1.0
        elif n_pos == 0:
            dec[test_pos] = -1.0
        else:
            # svm_train on the fold (C = 1, weights Cp for +1 and Cn for -1):
            # it regroups the samples with +1 first, as svm_group_classes.
            order = np.concatenate([train_pos[positive], train_pos[~positive]])
            coef, rho = solve_pair(rows, idx[order], sign[order], Cp, Cn, param, info)
            sv = np.abs(coef) > 0
            info("Total nSV = %d\n" % np.count_nonzero(sv))
            if test_pos.size:
                K = rows.cross(idx[test_pos], idx[order][sv])
                with np.errstate(invalid="ignore", over="ignore"):
                    # nan coefficients (nu-SVC at r = 0), as LIBSVM's
                    dec[test_pos] = K @ coef[sv] - rho
    return sigmoid_train(dec, sign, info)


def _sigmoid_objective(dec, target, A, B):
    """Platt's negative log-likelihood, in LIBSVM's stable form."""
    fApB = dec * A + B
    pos = fApB >= 0
    out = np.empty_like(fApB)
    out[pos] = target[pos] * fApB[pos] + np.log(1 + np.exp(-fApB[pos]))
    neg = ~pos
    out[neg] = (target[neg] - 1) * fApB[neg] + np.log(1 + np.exp(fApB[neg]))
    return float(out.sum())


# C's arithmetic is silent: a pair with rho = +-inf (-wi 0) has infinite
# decision values, and A = 0 times those is nan, as in svm.cpp
@np.errstate(over="ignore", invalid="ignore")
def sigmoid_train(dec, labels, info=None):
    """``sigmoid_train``: Platt scaling with Lin, Lin & Weng's improvements.

    Minimises  sum_i t_i (A f_i + B) + log(1 + exp(-(A f_i + B)))  (in a
    form stable for either sign), with targets t_i = (N+ + 1)/(N+ + 2) for
    labels > 0 and 1/(N- + 2) otherwise, by Newton's method on (A, B) with
    H + 1e-12 I, backtracking (sufficient decrease 1e-4, steps down to
    1e-10), until both gradient entries are below 1e-5 or 100 iterations.

    Returns
    -------
    (A, B) : floats, with P(y = +1 | f) = 1 / (1 + exp(A f + B)).
    """
    dec = np.asarray(dec, dtype=np.float64)
    positive = np.asarray(labels) > 0
    prior1 = float(np.count_nonzero(positive))
    prior0 = float(dec.shape[0]) - prior1
    max_iter, min_step, sigma, eps = 100, 1e-10, 1e-12, 1e-5
    hi_target = (prior1 + 1.0) / (prior1 + 2.0)
    lo_target = 1.0 / (prior0 + 2.0)
    target = np.where(positive, hi_target, lo_target)
    A = 0.0
    B = float(np.log((prior0 + 1.0) / (prior1 + 1.0)))
    fval = _sigmoid_objective(dec, target, A, B)
    it = 0
    while it < max_iter:
        fApB = dec * A + B
        p, q = _sigmoid_pq(fApB)
        d2 = p * q
        h11 = sigma + float(np.dot(dec * dec, d2))
        h22 = sigma + float(d2.sum())
        h21 = float(np.dot(dec, d2))
        d1 = target - p
        g1 = float(np.dot(dec, d1))
        g2 = float(d1.sum())
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            newA = A + step * dA
            newB = B + step * dB
            newf = _sigmoid_objective(dec, target, newA, newB)
            if newf < fval + 0.0001 * step * gd:
                A, B, fval = newA, newB, newf
                break
            step /= 2.0
        if step < min_step:
            if info is not None:
                info("Line search fails in two-class probability estimates\n")
            break
        it += 1
    if it >= max_iter and info is not None:
        info("Reaching maximal iterations in two-class probability estimates\n")
    return A, B


def _sigmoid_pq(fApB, with_q=True):
    """p = 1/(1 + exp(fApB)) and q = 1 - p (None unless ``with_q``),
    computed without cancellation, as float64 arrays of fApB's shape."""
    # svm.cpp's two branches share e = exp(-|fApB|): numpy's exp over all
    # values, in place, then the selects and divisions in one pass in C
    # (``sigmoid_from_exp``), p written over e: numpy's where, divisions
    # and temporaries had cost 6 times the exp on a predict's n x k(k-1)/2
    # values
    fApB = np.asarray(fApB, dtype=np.float64)
    p = np.empty(fApB.shape)
    np.abs(fApB, out=p)
    np.negative(p, out=p)
    np.exp(p, out=p)
    q = np.empty(fApB.shape) if with_q else None
    sigmoid_from_exp(np.ascontiguousarray(fApB).reshape(-1), p.reshape(-1),
                     q.reshape(-1) if with_q else None)
    return p, q


@np.errstate(over="ignore", invalid="ignore")     # as sigmoid_train
def sigmoid_predict(dec, A, B):
    """``sigmoid_predict``: P(+1 | f) = 1/(1 + exp(A f + B)), elementwise
    (A, B broadcast against dec)."""
    fApB = np.asarray(dec, dtype=np.float64) * A + B
    p, _ = _sigmoid_pq(fApB, with_q=False)
    return p if p.ndim else p[()]


def multiclass_probability(R, info=None):
    """``multiclass_probability``: Wu, Lin & Weng's method 2, row by row.

    Parameters
    ----------
    R : array_like (n, k, k), k >= 1, finite
        R[:, i, j] = r_ij, the pairwise estimate P(i | i or j); the diagonal
        is ignored.
    info : callable or None
        LIBSVM's output hook, for its "Exceeds max_iter in multiclass_prob"
        message, once per row that ends there (``None`` prints nothing).

    Returns
    -------
    P : ndarray (n, k), the class probabilities.

    For each row it solves  min_p p'Qp  s.t.  sum p = 1, with
    Q_tt = sum_{j != t} r_jt^2 and Q_tj = -r_jt r_tj, by LIBSVM's fixed-point
    coordinate updates until max_t |(Qp)_t - p'Qp| < 0.005/k or
    max(100, k) sweeps (``svmscreen._probability``: svm.cpp's loops, so
    LIBSVM's probabilities bit for bit).
    """
    R = np.ascontiguousarray(R, dtype=np.float64)
    if R.ndim != 3 or R.shape[1] != R.shape[2] or R.shape[1] < 1:
        raise ValueError(f"R must have shape (n, k, k) with k >= 1, got {R.shape}")
    # svm.cpp's loop turns a nan or inf estimate into nan probabilities (its
    # stopping test skips nan errors); LIBSVM's own are clipped and finite
    if not np.isfinite(R[:, ~np.eye(R.shape[1], dtype=bool)]).all():
        raise ValueError("R must be finite off its diagonal: it holds nan or inf")
    P = np.empty(R.shape[:2])
    _exceeded(couple_matrices(R, P), info)
    return P


def pairwise_coupling(r, nr_class, info=None):
    """``multiclass_probability`` of the pairs' estimates, as
    ``svm_predict_probability`` calls it.

    Parameters
    ----------
    r : array_like (n, k(k-1)/2), finite
        r[:, m] = r_ij = P(i | i or j) of the m-th pair (i, j) of
        ``class_pairs(k)``; r_ji = 1 - r_ij.
    nr_class : int
        k >= 1.
    info : callable or None
        As for ``multiclass_probability``.

    Returns
    -------
    P : ndarray (n, k), equal to ``multiclass_probability`` of the k x k
        matrices, without forming them.
    """
    k = operator.index(nr_class)
    r = np.ascontiguousarray(r, dtype=np.float64)
    if k < 1 or r.ndim != 2 or r.shape[1] != k * (k - 1) // 2:
        raise ValueError(f"r must have shape (n, k(k-1)/2) with k = nr_class >= 1, got "
                         f"nr_class = {nr_class} and r of shape {r.shape}")
    if not np.isfinite(r).all():
        raise ValueError("r must be finite: it holds nan or inf")
    P = np.empty((r.shape[0], k))
    _exceeded(couple_pairs(r, P), info)
    return P


def _exceeded(count, info):
    # svm.cpp prints the message from each call, i.e. for each row
    if info is not None:
        for _ in range(count):
            info("Exceeds max_iter in multiclass_prob\n")


# -------------------------------------------------------------- prediction
def _with_width(X, width):
    if X.shape[1] == width:
        return X
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


def _sv_layout(model, width):
    """The SVs as prediction wants them (dense when small and not too
    sparse), cached while ``model.SV`` is the same matrix holding the same
    values."""
    # keyed on the matrix, not only the width: after ``model.SV = ...`` (or
    # a copy.copy of the model given new SVs) the old SVs' layout predicted
    source = model.SV
    arrays = (source, source.data, source.indices, source.indptr)
    cache = model._predict_cache
    if (cache is not None and len(cache) == 4 and cache[0] == width
            and all(a is b for a, b in zip(cache[1], arrays))
            and (cache[3] is None
                 or all(np.array_equal(a, b) for a, b in zip(cache[3], arrays[1:])))):
        return cache[2]
    SV = _with_width(source, width)
    snapshot = None
    # Dense SVs pay while a row has at least width/16 nonzeros (a9a's 123
    # features, 14 per row: a third of the RBF time); sparser, their cost
    # grows with the width, not the nonzeros, and the copy the model keeps
    # dwarfs the SVs (10000 features, 20 per row: 150 MB kept for 0.5 MB
    # of SVs, and RBF prediction 37 times slower)
    if (model.l * width * 8 <= DENSE_SV_BYTES
            and source.nnz >= DENSE_SV_DENSITY * model.l * width):
        SV = np.ascontiguousarray(SV.toarray())
    # The sparse layout shares model.SV's arrays, unless _with_width's CSR
    # converted them (int64 indices become int32); the dense one is a
    # copy.  A copy was left stale by an in-place edit (model.SV.data *= 2),
    # and prediction silently used the old SVs.  Comparing a copy of the
    # arrays costs 9 us at a9a's 1315 SVs, against 360 us for svm_predict
    # of one row.
    if not (sp.issparse(SV) and all(np.may_share_memory(a, b) for a, b in
                                    zip((SV.data, SV.indices, SV.indptr), arrays[1:]))):
        snapshot = tuple(a.copy() for a in arrays[1:])
    model._predict_cache = (width, arrays, SV, snapshot)
    return SV


def kernel_blocks(model, X):
    """Yield (start, stop, K) with K[r, s] = K(x_{start + r}, SV_s)."""
    n = X.shape[0]
    if model.param.kernel_type == PRECOMPUTED:
        SV = model.SV
        serial = np.trunc(SV[:, [0]].toarray().ravel()).astype(np.intp) if model.l else \
            np.zeros(0, dtype=np.intp)
        width = max(X.shape[1], int(serial.max()) + 1 if serial.size else 0)
        columns = _with_width(X, width).tocsc()[:, serial].tocsr()
        step = max(1, BLOCK_VALUES // max(model.l, 1))
        for start in range(0, n, step):
            stop = min(n, start + step)
            yield start, stop, columns[start:stop].toarray()
        return
    width = max(X.shape[1], model.SV.shape[1])
    SV = _sv_layout(model, width)
    A = compute_layout(_with_width(X, width))
    p = model.param
    # svm.cpp predicts with k_function, whose RBF sums (x_k - sv_k)^2: from
    # norms and dot products it cancels on data far from the origin
    yield from cross_kernel(A, SV, KERNEL_CODE_NAMES[p.kernel_type], float(p.gamma),
                            float(p.coef0), int(p.degree), max_block=BLOCK_VALUES,
                            rbf_by_differences=True)


# C's arithmetic is silent on inf and nan (the infinite coefficients of a
# nu-SVC pair with r = 0); so are these sums
@np.errstate(over="ignore", invalid="ignore")
def decision_values(model, X):
    """``svm_predict_values`` for every row of X (index-space CSR).

    Returns
    -------
    dec : ndarray (n, k(k-1)/2) for classification (pair order of
        ``class_pairs``), (n, 1) for regression and one-class.
    """
    n = X.shape[0]
    svm_type = model.param.svm_type
    if svm_type not in (C_SVC, NU_SVC):
        dec = np.full((n, 1), -float(model.rho[0]))
        if model.l:
            for start, stop, K in kernel_blocks(model, X):
                dec[start:stop, 0] += K @ model.sv_coef[0]
        return dec
    k = model.nr_class
    n_pairs = k * (k - 1) // 2
    neg_rho = -np.asarray(model.rho, dtype=np.float64)
    if neg_rho.shape != (n_pairs,):
        # combine_pairs reads one rho per pair unchecked (numpy's broadcast
        # had refused a wrong count with its own message)
        raise ValueError(f"model.rho must hold nr_class (nr_class - 1) / 2 = {n_pairs} "
                         f"values, got shape {neg_rho.shape}")
    dec = np.empty((n, n_pairs))
    if n_pairs == 0 or n == 0:
        return dec
    coef = np.asarray(model.sv_coef)
    if k == 2:
        dec[:] = neg_rho[None, :]
        for start, stop, K in kernel_blocks(model, X):
            dec[start:stop, 0] += K @ coef[0]
        return dec
    # each class's SVs are a slice of nSV[c] columns: counts that do not
    # add up to l shifted the slices (decision values of other SVs' sums,
    # silently), and a coefficient row too many failed in np.matmul
    nSV = np.asarray(model.nSV)
    if nSV.shape != (k,) or np.any(nSV < 0) or nSV.sum() != model.l:
        raise ValueError(f"model.nSV must hold nr_class = {k} counts >= 0 adding up to "
                         f"model.l = {model.l}, got {nSV.tolist()}")
    if coef.shape != (k - 1, model.l):
        raise ValueError(f"model.sv_coef must have shape (nr_class - 1, l) = "
                         f"({k - 1}, {model.l}), got {coef.shape}")
    sv_start = np.concatenate([[0], np.cumsum(nSV)])
    parts = None
    for start, stop, K in kernel_blocks(model, X):
        # parts[c, :, m] = sum over class c's SVs of K * sv_coef[m], one
        # product per class; each into a contiguous slab, as the products
        # were before, so BLAS sums alike and the values stay bit for bit
        if parts is None or parts.shape[1] != stop - start:
            parts = np.empty((k, stop - start, k - 1))
        for c in range(k):
            np.matmul(K[:, sv_start[c]:sv_start[c + 1]], coef[:, sv_start[c]:sv_start[c + 1]].T,
                      out=parts[c])
        combine_pairs(parts, neg_rho, dec[start:stop])
    return dec


def labels_from_values(model, dec):
    """``svm_predict``'s label for each row of decision values."""
    svm_type = model.param.svm_type
    if svm_type in (EPSILON_SVR, NU_SVR):
        return dec[:, 0].copy()
    if svm_type == ONE_CLASS:
        return np.where(dec[:, 0] > 0, 1.0, -1.0)
    k = model.nr_class
    label = _class_labels(model)
    if k < 2:
        return np.full(dec.shape[0], label[0] if k == 1 else 0.0)
    dec = np.ascontiguousarray(dec, dtype=np.float64)
    if dec.ndim != 2 or dec.shape[1] != k * (k - 1) // 2:
        raise ValueError(f"dec must have shape (n, {k * (k - 1) // 2}) for {k} classes, "
                         f"got {dec.shape}")
    winner = np.empty(dec.shape[0], dtype=np.intp)
    vote(dec, k, winner)
    return label[winner]


def _class_labels(model):
    """model.label as float64, checked to name nr_class labels (a
    hand-edited model's short list was numpy's IndexError, naming
    nothing; extra labels are ignored, as LIBSVM does)."""
    label = np.asarray(model.label, dtype=np.float64)
    if label.ndim != 1 or label.shape[0] < model.nr_class:
        raise ValueError(f"model.label must hold nr_class = {model.nr_class} labels, got "
                         f"shape {label.shape}")
    return label


def predict(model, X):
    """(labels, decision values) for every row of X."""
    dec = decision_values(model, X)
    return labels_from_values(model, dec), dec


def one_class_probability(model, dec):
    """``predict_one_class_probability``: 0.001 below the first density
    mark, 0.999 above the last, else i/10 for the first mark i >= 1 with
    f < mark_i (and 0 when f equals the last mark, as LIBSVM's loop)."""
    marks = np.asarray(model.prob_density_marks, dtype=np.float64)
    n_marks = marks.shape[0]
    first_above = 1 + np.searchsorted(marks[1:], dec, side="right")
    prob = np.where(first_above < n_marks, first_above / n_marks, 0.0)
    prob[dec < marks[0]] = 0.001
    prob[dec > marks[-1]] = 0.999
    return prob


def predict_probability(model, X, info=None):
    """``svm_predict_probability`` for every row of X.

    Returns
    -------
    labels : ndarray (n,)
    prob : ndarray (n, nr_class), or None for regression models (their
        probability model is a scale, not per-instance values)
    """
    dec = decision_values(model, X)
    svm_type = model.param.svm_type
    if svm_type in (C_SVC, NU_SVC) and model.probA is not None and model.probB is not None:
        k = model.nr_class
        label = _class_labels(model)
        if k < 2:
            # svm.cpp returns label[0]: of an empty training set (a CV fold)
            # it has none, and the label is then 0, as ``labels_from_values``
            return (np.full(dec.shape[0], label[0] if k == 1 else 0.0),
                    np.ones((dec.shape[0], max(k, 1))))
        r = sigmoid_predict(dec, np.asarray(model.probA), np.asarray(model.probB))
        # svm.cpp's min(max(r, min_prob), 1 - min_prob) with its macros
        # (x > y ? x : y): a nan r (a nan decision value) becomes min_prob,
        # as fmax makes it; no nan is left for minimum
        np.fmax(r, MIN_PROB, out=r)
        np.minimum(r, 1 - MIN_PROB, out=r)
        if k == 2:
            prob = np.column_stack([r[:, 0], 1 - r[:, 0]])
        else:
            prob = pairwise_coupling(r, k, info)
        return label[np.argmax(prob, axis=1)], prob
    if svm_type == ONE_CLASS and model.prob_density_marks is not None:
        p_normal = one_class_probability(model, dec[:, 0])
        return labels_from_values(model, dec), np.column_stack([p_normal, 1 - p_normal])
    return labels_from_values(model, dec), None


# ------------------------------------------------------- cross-validation
def cross_validation(prob, param, nr_fold, info=print_stdout, rng=None):
    """``svm_cross_validation``: the label (or value) predicted for each
    sample by the model trained on the other folds.

    Classification folds are stratified: each class is shuffled with
    ``rand()`` and cut into nr_fold slices, fold i taking slice i of every
    class.  With more folds than samples: leave-one-out (with a warning).
    """
    if info is None:
        info = _silent
    rng = default_generator if rng is None else rng
    l = prob.l
    if l == 0:
        # nothing to predict (-b 1 regression inside a CV fold that left no
        # training sample: svm.cpp divides by 0 folds here and dies of SIGFPE)
        return np.zeros(0)
    if nr_fold > l:
        sys.stderr.write("WARNING: # folds (%d) > # data (%d). Will use # folds = # data "
                         "instead (i.e., leave-one-out cross validation)\n" % (nr_fold, l))
        nr_fold = l
    if param.svm_type in (C_SVC, NU_SVC) and nr_fold < l:
        label, start, count, perm = group_classes(prob.y)
        index = perm.tolist()
        for c in range(label.size):
            rng.shuffle_indices(index, int(start[c]), int(start[c] + count[c]))
        folds = [[] for _ in range(nr_fold)]
        for c in range(label.size):
            for i in range(nr_fold):
                begin = int(start[c]) + i * int(count[c]) // nr_fold
                end = int(start[c]) + (i + 1) * int(count[c]) // nr_fold
                folds[i].extend(index[begin:end])
        perm = np.array([v for fold in folds for v in fold], dtype=np.intp)
        fold_start = np.concatenate([[0], np.cumsum([len(f) for f in folds])])
    else:
        perm = np.array(rng.shuffle_indices(list(range(l))), dtype=np.intp)
        fold_start = np.array([i * l // nr_fold for i in range(nr_fold + 1)])
    target = np.zeros(l)
    for i in range(nr_fold):
        begin, end = int(fold_start[i]), int(fold_start[i + 1])
        sub = prob.subset(np.concatenate([perm[:begin], perm[end:]]))
        submodel = train(sub, param, info, rng)
        test = perm[begin:end]
        if not test.size:
            continue
        X_test = prob.X[test]
        if param.probability and param.svm_type in (C_SVC, NU_SVC):
            target[test] = predict_probability(submodel, X_test, info)[0]
        else:
            target[test] = predict(submodel, X_test)[0]
    return target
