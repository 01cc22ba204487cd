"""More than two classes along the path: one-vs-one, as LIBSVM and
scikit-learn's SVC classify (a binary C-SVC per pair of classes i < j, the
prediction by the pairs' votes, the first class on ties).  The classes are
in sorted order, as scikit-learn's: a vote tie goes to the smallest label.
LIBSVM orders them by first appearance in the training data, so on data
whose labels do not come sorted its tie-breaks can differ (the
``svmscreen.libsvm`` layer keeps LIBSVM's order).

``train_path`` sends data with more than two classes here: a warm-started,
screened path per pair, the pairs' statistics combined per C
(``OneVsOnePath``), cross-validation by the votes at each C
(``fold_accuracy``, which ``estimators.SVCPathCV`` shares), and the model at
any C (``OneVsOneModel``).
"""
import numpy as np
import scipy.sparse as sp

from svmscreen._kernels import cross_kernel
from svmscreen._one_vs_one import merge_rows
from svmscreen.datasets import _format_label
from svmscreen.libsvm.model import class_pairs
from svmscreen.model import check_decisions_finite, check_prediction_rows
from svmscreen.path import (PathResult, RowSubsets, _parallel, _sequential, fold_tasks,
                            held_accuracy, kernel_blocks, path_coefficients, subset_path)


# Memory of the held-out decision values a CV fold holds at once
DECISION_BLOCK_BYTES = 1 << 26


def pair_votes(dec, n_classes, ties_to_first=False):
    """Votes of one-vs-one decision values: column ``pair`` is the pair
    (i, j) of ``class_pairs`` (i < j, LIBSVM's order); dec > 0 votes for i,
    dec = 0 for j as in LIBSVM's predict (for i with ``ties_to_first``, as
    scikit-learn's ovr decision function)."""
    votes = np.zeros((dec.shape[0], n_classes), dtype=np.intp)
    for pair, (i, j) in enumerate(class_pairs(n_classes)):
        value = dec[:, pair]
        if ties_to_first:
            votes[:, i] += value >= 0
            votes[:, j] += ~(value >= 0)
        else:
            votes[:, i] += value > 0
            votes[:, j] += value <= 0
    return votes


class OneVsOneModel:
    """A trained one-vs-one C-SVC.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    pairs : list of (i, j)
        Indices into ``classes_``, i < j, in LIBSVM's order.
    models : list of BinaryModel
        One per pair; its f > 0 votes for ``classes_[i]`` (its own
        ``classes_`` is ``(classes_[j], classes_[i])``), and its ``support_``
        indexes that pair's rows.
    rows : list of ndarray of int
        The training rows of each pair.
    support_ : ndarray of int
        The training rows that are a support vector of some pair.
    support_vectors_ : ndarray or CSR matrix
        Their rows (for a precomputed kernel, empty: only indices are kept).
    n_train : int
        The number of training samples.
    n_support_ : int
        len(support_) (a property; LIBSVM's total nSV).
    """

    def __init__(self, classes, pairs, models, rows, n_train):
        self.classes_ = classes
        self.pairs = pairs
        self.models = models
        self.rows = rows
        self.n_train = n_train
        pair_support = [r[m.support_] for r, m in zip(rows, models)]
        self.support_, first = np.unique(np.concatenate(pair_support), return_index=True)
        if models[0].kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            # a sample's row from the first pair that has it as a support vector
            blocks = [m.support_vectors_ for m in models]
            stacked = (sp.vstack(blocks, format="csr") if sp.issparse(blocks[0])
                       else np.vstack(blocks))
            self.support_vectors_ = stacked[first]
        # each pair's support vectors as columns of K(x, support_vectors_)
        self._columns = [np.searchsorted(self.support_, s) for s in pair_support]

    @property
    def n_support_(self):
        """The number of distinct support vectors (LIBSVM's total nSV)."""
        return self.support_.size

    def decision_function(self, X):
        """Decision values, shape (n_samples, n_pairs), column k for
        ``pairs[k]`` (> 0: a vote for its first class).  For a precomputed
        kernel, X holds the kernel values against every training sample.
        Each kernel value between a row of X and a support vector is
        computed once for all pairs."""
        first = self.models[0]
        precomputed = first.kernel == "precomputed"
        X = check_prediction_rows(X, first.kernel,
                                  self.n_train if precomputed else first.n_features_in_)
        B = self.support_ if precomputed else self.support_vectors_
        dec = np.tile([m.intercept_ for m in self.models], (X.shape[0], 1))
        if self.support_.size:
            for start, stop, K in cross_kernel(X, B, first.kernel, first.gamma, first.coef0,
                                               first.degree):
                for k, model in enumerate(self.models):
                    dec[start:stop, k] += K[:, self._columns[k]] @ model.dual_coef_
        return dec

    def predict(self, X):
        """The class with the most votes (the smallest such label on ties,
        as scikit-learn's SVC; see the module docstring for LIBSVM's)."""
        dec = check_decisions_finite(self.decision_function(X))
        return self.classes_[np.argmax(pair_votes(dec, self.classes_.size), axis=1)]

    def __repr__(self):
        return (f"OneVsOneModel(classes={self.classes_.size}, pairs={len(self.pairs)}, "
                f"C={self.models[0].C!r}, n_support={self.n_support_})")


class OneVsOnePath(PathResult):
    """The path of a one-vs-one C-SVC: a ``PathResult`` per pair of classes,
    and per C the pairs' statistics combined, so that ``summary``, ``plot``,
    ``cv_accuracy`` and ``best_C`` read as for two classes.

    Attributes (arrays of length n_C, unless said)
    ----------------------------------------------
    objective, duality_gap, n_zero, n_bound, screened_zero, screened_bound,
    put_back, n_iter, rule_seconds, solve_seconds
        Sums over the pairs (the pairs' problems are separate, so the summed
        objective's gap is the summed gap).
    n_sv : the training samples that are a support vector of some pair
        (LIBSVM's total nSV).
    status : "optimal", or the status of the first pair whose solver
        stopped short of tol ("max_iter" or "round_off").
    intercept : ndarray of shape (n_C, n_pairs)
    n_variables : the pairs' sizes summed; ``screening_rate`` is per dual
        variable of all pairs.
    pairs : list of (i, j), indices into ``classes_``, LIBSVM's order.
    pair_paths : list of PathResult, one per pair, each over its own rows
        (f > 0 for ``classes_[i]``); they hold the solutions (``alphas``)
        with ``keep="all"``.  They have no CV of their own (their
        ``best_C`` is an error): the path's CV is by the pairs' votes, its
        ``best_C`` the one to use.
    pair_rows : list of ndarray of int, the rows of each pair.
    alphas : None (see ``pair_paths``).
    cv_accuracy : ndarray of shape (n_folds, n_C) or None
        Of the one-vs-one vote.
    C, classes_, gamma : the grid, the class labels, the kernel's gamma.
    """

    SUMMED = ("objective", "duality_gap", "n_zero", "n_bound", "screened_zero",
              "screened_bound", "put_back", "n_iter", "rule_seconds", "solve_seconds")

    def __init__(self, pair_paths, pairs, pair_rows, n_sv, classes, X):
        self.C = pair_paths[0].C
        for name in self.SUMMED:
            setattr(self, name, np.sum([getattr(path, name) for path in pair_paths], axis=0))
        self.intercept = np.column_stack([path.intercept for path in pair_paths])
        # per C, the first pair's status other than "optimal", if any
        self.status = np.array(pair_paths[0].status)
        for path in pair_paths[1:]:
            self.status = np.where(self.status == "optimal", path.status, self.status)
        self.n_sv = n_sv
        self.n_variables = sum(rows.size for rows in pair_rows)
        self.alphas = None
        self.cv_accuracy = None
        self.classes_ = classes
        self.pairs = pairs
        self.pair_paths = pair_paths
        self.pair_rows = pair_rows
        self._n_train = X.shape[0]

    def model(self, index):
        """The OneVsOneModel at path position ``index`` (needs keep="all")."""
        if self.pair_paths[0].alphas is None:
            raise ValueError("the path kept summaries only (keep='summary'); refit that C "
                             "with svmscreen.train_path(X, y, C=[C])")
        return OneVsOneModel(self.classes_, self.pairs,
                             [path.model(index) for path in self.pair_paths],
                             self.pair_rows, self._n_train)


def class_rows(y_index, n_classes):
    """The rows of each class, ascending, found once: a pair's rows are
    merged from its two classes' (``pair_rows``), where a mask over all n
    rows per pair cost O(n) passes (26 classes: 325 pairs)."""
    order = np.argsort(y_index, kind="stable")
    ends = np.searchsorted(y_index[order], np.arange(1, n_classes))
    return np.split(order, ends)


def pair_rows(rows_of, i, j):
    """(the rows of classes i and j, ascending, from ``class_rows``'s
    ``rows_of`` (or subsets of its lists, ascending too); their signs: +1
    for class i)."""
    return merge_rows(rows_of[i], rows_of[j])


def _pair_path(subsets, rows_of, hi_unit, pair, grid, params, path_options, label,
               show_progress):
    """One pair's path on all its rows: (path rows, alphas, the pair's rows,
    their signs).  The caller builds the PathResult: a task in another
    process returns only these."""
    i, j = pair
    rows, signs = pair_rows(rows_of, i, j)
    path_rows, alphas = subset_path(subsets, rows, signs, hi_unit[rows], grid, params,
                                    path_options, label, show_progress)
    return path_rows, alphas, rows, signs


def _pair_result(subsets, X_copy, pair, classes, params, keep, path_rows, alphas, rows,
                 signs):
    """The PathResult of ``_pair_path``'s pair: with keep="all" its models
    take their support vectors from ``X_copy``, the one-vs-one path's own
    copy of X (one for all pairs; a precomputed pair keeps its block)."""
    i, j = pair
    X_rows = None
    if keep != "all":
        # keep="summary" keeps neither the solutions nor the rows (a
        # PathResult reads them only to build a model from a solution)
        alphas = X_model = None
    elif params["kernel"] == "precomputed":
        X_model = subsets.train_part(rows)
    else:
        X_model, X_rows = X_copy, rows
    result = PathResult(path_rows, alphas, params, X_model, signs, classes[[j, i]],
                        X_is_private=True, X_rows=X_rows)
    result.gamma = params["gamma"]
    return result


def label_text(value):
    """A class label as LIBSVM's files write it (1, -1, 0.5)."""
    return _format_label(float(value)).decode("ascii")


def train_path_one_vs_one(X, y, classes, hi_unit, grid, params, path_options, splits, *,
                          n_jobs, keep, verbose, gamma_spec=None, fold_units=None,
                          held_weight=None):
    """``train_path`` for more than two classes, on inputs it has checked:
    a path per pair (in parallel with ``n_jobs``), cross-validated by the
    votes on ``splits`` (boolean (train, held) masks) if given, each fold
    with its box units ``fold_units[k]`` (``path.fold_bounds``; hi_unit if
    None), its accuracy weighted by ``held_weight`` if given."""
    y_index = np.searchsorted(classes, y)
    rows_of = class_rows(y_index, classes.size)
    pairs = class_pairs(classes.size)
    show = verbose and _sequential(n_jobs)
    of_gamma = ("" if params["kernel"] in ("linear", "precomputed")
                else f" (gamma = {params['gamma']:.3g})")
    subsets = RowSubsets(X, params["kernel"])
    solved = _parallel(n_jobs, [
        (_pair_path, (subsets, rows_of, hi_unit, pair, grid, params, path_options,
                      f"pair {k + 1}/{len(pairs)} (classes {label_text(classes[pair[0]])} and "
                      f"{label_text(classes[pair[1]])}){of_gamma}", show), {})
        for k, pair in enumerate(pairs)], verbose=verbose)
    # the models' rows: copied, so that they do not follow changes to the
    # caller's X (which check_X shares when it needs no conversion)
    X_copy = X.copy() if keep == "all" and params["kernel"] != "precomputed" else None
    is_sv = np.zeros((len(grid), y.size), dtype=bool)
    for _, alphas, rows, _ in solved:
        is_sv[:, rows] |= np.array(alphas) > 0
    result = OneVsOnePath([_pair_result(subsets, X_copy, pair, classes, params, keep, *out)
                           for pair, out in zip(pairs, solved)],
                          pairs, [out[2] for out in solved], is_sv.sum(axis=1), classes, X)
    result.gamma = params["gamma"]
    if splits is not None:
        units = [hi_unit] * len(splits) if fold_units is None else fold_units
        tasks = fold_tasks(fold_accuracy, X, y_index, units, splits, result.C, params,
                           gamma_spec, path_options, show, held_weight)
        result.cv_accuracy = np.array(_parallel(n_jobs, tasks, verbose=verbose))
    return result


def fold_accuracy(X, y_index, hi_unit, train, held, grid, params, path_options,
                  label, show_progress=False, held_weight=None):
    """Accuracy at each C of the one-vs-one vote on the ``held`` rows
    (weighted by ``held_weight`` if given: ``path.held_accuracy``), from
    a path per pair of classes on the ``train`` rows (``path_coefficients``).
    The pairs' paths are solved first, so that each kernel value between a
    held row and a support vector is computed once for all pairs and all C
    (a sample is in n_classes - 1 pairs).  Each pair's path is named
    "``label``, pair k/n" in its warnings and, with
    ``show_progress``, its progress bar."""
    n_classes = int(y_index.max()) + 1
    pairs = class_pairs(n_classes)
    subsets = RowSubsets(X, params["kernel"])
    train_rows_of = [rows[train[rows]] for rows in class_rows(y_index, n_classes)]
    paths = []
    for k, (i, j) in enumerate(pairs):
        rows, signs = pair_rows(train_rows_of, i, j)
        paths.append(path_coefficients(subsets, rows, signs, hi_unit[rows], grid, params,
                                       path_options, f"{label}, pair {k + 1}/{len(pairs)}",
                                       show_progress))
    support = np.unique(np.concatenate([path[0] for path in paths]))
    held_rows = np.flatnonzero(held)
    intercepts = np.array([path[2] for path in paths])           # (pairs, C)
    columns = [np.searchsorted(support, path[0]) for path in paths]
    votes = np.empty((held_rows.size, len(grid)), dtype=np.intp)
    # The decision values of a block of held rows at a time: all of them at
    # once took held x pairs x C doubles (1 GB at 40 classes, 800 held
    # rows and 200 C)
    step = max(1, DECISION_BLOCK_BYTES // (8 * len(pairs) * len(grid)))
    for first in range(0, held_rows.size, step):
        rows = held_rows[first:first + step]
        dec = np.empty((rows.size, len(pairs), len(grid)))
        dec[:] = intercepts
        if support.size:
            for start, stop, K in kernel_blocks(X, rows, support, params):
                for pair, (_, coef, _) in enumerate(paths):
                    dec[start:stop, pair] += K[:, columns[pair]] @ coef
        for t in range(len(grid)):
            votes[first:first + rows.size, t] = np.argmax(pair_votes(dec[:, :, t], n_classes),
                                                          axis=1)
    return held_accuracy(votes == y_index[held][:, None], held, held_weight)
