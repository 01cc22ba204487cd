"""Validation at the boundary: bad input raises ValueError/TypeError naming
the problem, never a segfault or a silently wrong model; the precomputed
kernel path; the package imports cleanly."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import load_dataset, refusals_in_a_child, subprocess_env
import svmscreen
from svmscreen import fit_binary


def small_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 3))
    y = np.array([1.0, -1.0] * 4)
    return X, y


def with_value(array, index, value):
    out = np.array(array, dtype=np.float64)
    out[index] = value
    return out


def csr_raw(data, indices, indptr, shape):
    """A CSR matrix exactly as given (scipy does not sort or check values)."""
    return sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, np.int32),
                          np.asarray(indptr, np.int32)), shape=shape)


X0, Y0 = small_problem()
UNSORTED = csr_raw([1.0, 2.0, 3.0, 4.0], [2, 0, 1, 2], [0, 2, 4], (2, 3))
DUPLICATE = csr_raw([1.0, 2.0, 3.0, 4.0], [0, 2, 1, 1], [0, 2, 4], (2, 3))
OUT_OF_RANGE = csr_raw([1.0, 2.0], [0, 5], [0, 1, 2], (2, 3))
GOOD_CSR_2 = csr_raw([1.0, 2.0, 3.0], [0, 1, 2], [0, 2, 3], (2, 3))
# arrays shortened after construction, which scipy checks only then (its
# conversions read past their ends)
SHORT_INDPTR = csr_raw([1.0, 2.0, 3.0], [0, 1, 2], [0, 2, 3], (2, 3))
SHORT_INDPTR.indptr = SHORT_INDPTR.indptr[:-1]
SHORT_DATA = csr_raw([1.0, 2.0, 3.0], [0, 1, 2], [0, 2, 3], (2, 3))
SHORT_DATA.data = SHORT_DATA.data[:2]
Y2 = np.array([1.0, -1.0])
K0 = X0 @ X0.T

# (id, X, y, kwargs, exception, message regex)
ERRORS = [
    # non-finite data
    ("X-nan", with_value(X0, (2, 1), np.nan), Y0, {}, ValueError, "X contains NaN or inf"),
    ("X-inf", with_value(X0, (0, 0), np.inf), Y0, {}, ValueError, "X contains NaN or inf"),
    ("X-neg-inf", with_value(X0, (7, 2), -np.inf), Y0, {}, ValueError, "X contains NaN or inf"),
    ("X-csr-nan", sp.csr_matrix(with_value(X0, (3, 1), np.nan)), Y0, {}, ValueError,
     "X contains NaN or inf"),
    ("X-csr-inf", sp.csr_matrix(with_value(X0, (3, 1), np.inf)), Y0, {}, ValueError,
     "X contains NaN or inf"),
    ("y-nan", X0, with_value(Y0, 3, np.nan), {}, ValueError, "y contains NaN or inf"),
    ("y-inf", X0, with_value(Y0, 0, np.inf), {}, ValueError, "y contains NaN or inf"),
    # shapes
    ("X-1d", X0[:, 0], Y0, {}, ValueError, r"X must be 2-D.*\(8,\)"),
    ("X-3d", X0[:, :, None], Y0, {}, ValueError, "X must be 2-D"),
    ("y-short", X0, Y0[:7], {}, ValueError, "y has 7 labels but X has 8 samples"),
    ("y-long", X0, np.r_[Y0, 1.0], {}, ValueError, "y has 9 labels but X has 8 samples"),
    ("y-2d", X0, np.c_[Y0, Y0], {}, ValueError, "y must be 1-D"),
    ("X-none", None, Y0, {}, TypeError, "X must be an array"),
    # ragged lists, which numpy refuses to make an array of
    ("X-ragged", [[1.0, 2.0], [3.0]] * 4, Y0, {}, TypeError, "X cannot be converted to an array"),
    ("y-ragged", X0, [[1.0], [-1.0, 1.0]] * 4, {}, TypeError,
     "y cannot be converted to an array"),
    ("X-strings", np.array([["a", "b"]] * 8), Y0, {}, TypeError, "X must hold real numbers"),
    ("X-complex", X0 + 1j, Y0, {}, TypeError, "X must hold real numbers"),
    ("y-strings", X0, np.array(["a", "b"] * 4), {}, TypeError, "y must hold numbers"),
    # classes
    ("one-class", X0, np.ones(8), {}, ValueError, "exactly two classes, got 1"),
    ("three-classes", X0, np.r_[Y0[:6], 2.0, 2.0], {}, ValueError, "exactly two classes, got 3"),
    # empty input
    ("empty-rows", np.empty((0, 3)), np.empty(0), {}, ValueError, r"X is empty: shape \(0, 3\)"),
    ("empty-cols", np.empty((8, 0)), Y0, {}, ValueError, r"X is empty: shape \(8, 0\)"),
    ("empty-csr", sp.csr_matrix((0, 3)), np.empty(0), {}, ValueError, "X is empty"),
    ("empty-list", [], [], {}, ValueError, "X must be 2-D"),
    # parameters
    ("C-zero", X0, Y0, {"C": 0.0}, ValueError, "C must be finite and > 0, got 0.0"),
    ("C-negative", X0, Y0, {"C": -1.0}, ValueError, "C must be finite and > 0, got -1.0"),
    ("C-nan", X0, Y0, {"C": float("nan")}, ValueError, "C must be finite"),
    ("C-inf", X0, Y0, {"C": float("inf")}, ValueError, "C must be finite"),
    ("C-string", X0, Y0, {"C": "1"}, TypeError, "C must be a real number"),
    ("gamma-negative", X0, Y0, {"gamma": -0.5}, ValueError, "gamma must be finite and >= 0"),
    ("gamma-nan", X0, Y0, {"gamma": float("nan")}, ValueError, "gamma must be finite"),
    ("gamma-negative-poly", X0, Y0, {"gamma": -0.5, "kernel": "poly"}, ValueError, "gamma"),
    ("gamma-word", X0, Y0, {"gamma": "big"}, ValueError, "gamma must be a number >= 0"),
    ("cache-negative", X0, Y0, {"cache_size": -1.0}, ValueError, "cache_size must be"),
    ("cache-zero", X0, Y0, {"cache_size": 0}, ValueError, "cache_size must be"),
    ("kernel-unknown", X0, Y0, {"kernel": "gaussian"}, ValueError,
     "kernel must be one of .*'gaussian'"),
    ("kernel-none", X0, Y0, {"kernel": None}, ValueError, "kernel must be one of"),
    ("kernel-uppercase", X0, Y0, {"kernel": "RBF"}, ValueError, "kernel must be one of"),
    ("tol-zero", X0, Y0, {"tol": 0.0}, ValueError, "tol must be"),
    ("tol-negative", X0, Y0, {"tol": -1e-3}, ValueError, "tol must be"),
    ("degree-negative", X0, Y0, {"kernel": "poly", "degree": -1}, ValueError, "degree"),
    ("degree-float", X0, Y0, {"kernel": "poly", "degree": 2.5}, ValueError, "degree"),
    ("max-iter-zero", X0, Y0, {"max_iter": 0}, ValueError, "max_iter"),
    ("max-iter-huge", X0, Y0, {"max_iter": 2 ** 63}, ValueError, "max_iter"),
    ("degree-huge", X0, Y0, {"kernel": "poly", "degree": 2 ** 31}, ValueError, "degree"),
    # (a NaN is a float of the wrong value: TypeError until helper X's report)
    ("coef0-nan", X0, Y0, {"kernel": "poly", "coef0": float("nan")}, ValueError,
     "coef0 must be finite, got nan"),
    ("coef0-str", X0, Y0, {"kernel": "poly", "coef0": "1"}, TypeError,
     "coef0 must be a real number"),
    ("class-weight-list", X0, Y0, {"class_weight": [1.0, 2.0]}, TypeError, "class_weight"),
    ("class-weight-label", X0, Y0, {"class_weight": {3.0: 2.0}}, ValueError,
     "class_weight names label 3.0"),
    ("class-weight-negative", X0, Y0, {"class_weight": {1.0: -2.0}}, ValueError,
     "class_weight"),
    ("sample-weight-shape", X0, Y0, {"sample_weight": np.ones(5)}, ValueError,
     "sample_weight must be a finite array of shape"),
    ("sample-weight-negative", X0, Y0, {"sample_weight": with_value(np.ones(8), 2, -1.0)},
     ValueError, "sample_weight must be finite and >= 0"),
    ("sample-weight-nan", X0, Y0, {"sample_weight": with_value(np.ones(8), 2, np.nan)},
     ValueError, "sample_weight must be a finite array"),
    # precomputed kernels
    ("precomputed-non-square", X0 @ X0[:5].T, Y0, {"kernel": "precomputed"}, ValueError,
     r"must be square, got shape \(8, 5\)"),
    ("precomputed-nan", with_value(K0, (1, 2), np.nan), Y0, {"kernel": "precomputed"},
     ValueError, "NaN or inf"),
    ("precomputed-inf", with_value(K0, (4, 4), np.inf), Y0, {"kernel": "precomputed"},
     ValueError, "NaN or inf"),
    ("precomputed-sparse", sp.csr_matrix(K0), Y0, {"kernel": "precomputed"}, TypeError,
     "dense array"),
    ("precomputed-1d", K0[0], Y0, {"kernel": "precomputed"}, ValueError, "2-D"),
    # CSR structure
    ("csr-out-of-range", OUT_OF_RANGE, Y2, {}, ValueError, "column index out of range"),
    ("csr-short-indptr", SHORT_INDPTR, Y2, {}, ValueError,
     "malformed CSR matrix: indptr has 2 entries, its 2 rows need 3"),
    ("csr-short-data", SHORT_DATA, Y2, {}, ValueError,
     "malformed CSR matrix: fewer stored values than indptr counts"),
    # warm start
    ("alpha0-shape", X0, Y0, {"alpha0": np.zeros(7)}, ValueError,
     r"alpha0 must be a finite array of shape \(8,\)"),
    ("alpha0-2d", X0, Y0, {"alpha0": np.zeros((8, 1))}, ValueError, "alpha0 must be"),
    ("alpha0-nan", X0, Y0, {"alpha0": with_value(np.zeros(8), 0, np.nan)}, ValueError,
     "alpha0 must be a finite array"),
    ("alpha0-negative", X0, Y0, {"alpha0": with_value(np.zeros(8), 0, -0.1)}, ValueError,
     "0 <= alpha0_i <= C_i"),
    ("alpha0-above-C", X0, Y0, {"alpha0": np.full(8, 2.0)}, ValueError, "0 <= alpha0_i <= C_i"),
    ("alpha0-above-weighted-C", X0, Y0,
     {"alpha0": np.full(8, 0.8), "sample_weight": np.full(8, 0.5)}, ValueError,
     "0 <= alpha0_i <= C_i"),
    ("alpha0-equality", X0, Y0, {"alpha0": with_value(np.zeros(8), 0, 0.5)}, ValueError,
     "sum_i y_i alpha0_i = 0"),
    # non-numeric arrays name the argument, like every other error
    ("alpha0-strings", X0, Y0, {"alpha0": ["a"] * 8}, (ValueError, TypeError), "alpha0"),
    ("alpha0-complex", X0, Y0, {"alpha0": np.full(8, 0.0 + 0.5j)}, (ValueError, TypeError),
     "alpha0"),
    ("sample-weight-strings", X0, Y0, {"sample_weight": ["a"] * 8}, (ValueError, TypeError),
     "sample_weight"),
    # settings that a truth value would silently flip, products that overflow
    ("fit-intercept-string", X0, Y0, {"fit_intercept": "no"}, TypeError, "fit_intercept"),
    ("shrinking-string", X0, Y0, {"shrinking": "no"}, TypeError, "shrinking"),
    ("gamma-array", X0, Y0, {"gamma": np.array([0.1, 0.2])}, TypeError, "gamma"),
    # also where gamma plays no part: numpy's "truth value ... ambiguous" before
    ("gamma-array-precomputed", np.eye(8), Y0,
     {"gamma": np.array([0.1, 0.2]), "kernel": "precomputed"}, TypeError, "gamma"),
    ("gamma-array-linear", X0, Y0, {"gamma": np.array([0.1, 0.2]), "kernel": "linear"},
     TypeError, "gamma"),
    ("weighted-C-overflow", X0, Y0, {"C": 1e308, "class_weight": {1.0: 10.0}}, ValueError,
     "overflows"),
    ("weighted-C-underflow", X0, Y0, {"C": 1e-300, "sample_weight": np.full(8, 1e-300)},
     ValueError, "is zero for every sample"),
    ("labels-beyond-2**53", X0, np.array([2 ** 53, 2 ** 53 + 1] * 3 + [5, 5], dtype=np.int64),
     {}, ValueError, "2\\*\\*53"),
    ("sparse-1d", sp.coo_array(np.array([1.0, 0.0, 2.0])), [1.0], {}, ValueError, "2-D"),
    ("poly-overflow-off-diagonal", np.array([[1.0], [-1.0]]), np.array([1.0, -1.0]),
     {"kernel": "poly", "gamma": 1e102, "coef0": -5e102, "degree": 3}, ValueError,
     "kernel values overflow"),
]


@pytest.mark.parametrize("X, y, kwargs, error, message",
                         [case[1:] for case in ERRORS], ids=[case[0] for case in ERRORS])
def test_bad_input_raises(X, y, kwargs, error, message):
    with pytest.raises(error, match=message):
        fit_binary(X, y, **kwargs)


@pytest.mark.parametrize("seed", range(40))
def test_csr_index_order_matches_brute_force(seed):
    """Random CSR structures (empty rows, one-entry rows, rows ending and
    starting with the same column, unsorted or repeated columns): read as
    the matrix scipy means, in canonical order, the input untouched."""
    rng = np.random.default_rng(seed)
    n_rows, n_cols = rng.integers(1, 7), rng.integers(1, 6)
    lengths = rng.integers(0, 4, size=n_rows)
    indptr = np.r_[0, np.cumsum(lengths)]
    rows = []
    for length in lengths:
        row = np.sort(rng.choice(n_cols, size=min(length, n_cols), replace=False))
        if length > n_cols or (length >= 2 and rng.random() < 0.3):
            row = rng.integers(0, n_cols, size=length)       # maybe unsorted or repeated
        rows.append(np.resize(row, length))
    indices = np.concatenate(rows) if rows else np.zeros(0)
    X = csr_raw(rng.normal(size=indptr[-1]), indices, indptr, (n_rows, n_cols))
    y = np.resize([1.0, -1.0], n_rows)
    from svmscreen._validation import check_X
    snapshot = X.indices.copy(), X.data.copy()
    out = check_X(X)
    # the matrix scipy means (duplicates summed), in canonical order; the
    # caller's arrays as they were
    np.testing.assert_allclose(out.toarray(), X.toarray(), rtol=1e-15)
    for start, stop in zip(out.indptr[:-1], out.indptr[1:]):
        assert np.all(np.diff(out.indices[start:stop]) > 0)
    np.testing.assert_array_equal(X.indices, snapshot[0])
    np.testing.assert_array_equal(X.data, snapshot[1])
    if n_rows >= 2:
        fit_binary(X, y, kernel="linear")


def test_ordinary_inputs_are_accepted():
    """The near misses of the error table are fine: (n, 1) labels, 0/1 and
    string-free integer labels, int data, COO/CSC input, float32, lists,
    int64 CSR indices, linear kernel with gamma given, the degenerate C_i = 0."""
    X, y = small_problem()
    reference = fit_binary(X, y, kernel="linear", tol=1e-10).decision_function(X)
    variants = [
        (X, y[:, None], {}),
        (X, (y > 0).astype(int), {}),
        (X.astype(np.float32).astype(np.float64), y, {}),
        (X.tolist(), y.tolist(), {}),
        (sp.coo_matrix(X), y, {}),
        (sp.csc_matrix(X), y, {}),
        (sp.csr_matrix((sp.csr_matrix(X).data, sp.csr_matrix(X).indices.astype(np.int64),
                        sp.csr_matrix(X).indptr.astype(np.int64)), shape=X.shape), y, {}),
        (np.asfortranarray(X), y, {}),
        (X, y, {"gamma": 0.3}),
    ]
    for Xv, yv, kw in variants:
        model = fit_binary(Xv, yv, kernel="linear", tol=1e-10, **kw)
        np.testing.assert_allclose(model.decision_function(X), reference, atol=1e-6)
    # integer features
    Xi = np.array([[0, 1], [1, 0], [2, 2], [3, 1]])
    fit_binary(Xi, [0, 0, 1, 1], kernel="rbf")
    # a sample with C_i = 0 is simply held at 0
    sw = np.ones(8)
    sw[0] = 0.0
    model = fit_binary(X, y, kernel="rbf", sample_weight=sw)
    assert model.alpha_[0] == 0.0


def test_csr_on_strided_arrays_is_accepted():
    """A CSR matrix whose data, indices and indptr are strided views of
    larger arrays is one scipy builds and reads: the typed loops (the
    one-vs-one path's row gather, the linear kernel's products) had
    refused it with "ndarray is not C-contiguous"."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    X[rng.random(X.shape) < 0.5] = 0.0
    A = sp.csr_matrix(X)

    def strided(a):
        larger = np.zeros(2 * a.size, dtype=a.dtype)
        larger[::2] = a
        return larger[::2]

    B = sp.csr_matrix((strided(A.data), strided(A.indices), strided(A.indptr)), shape=A.shape)
    assert not B.indices.flags.c_contiguous
    y = np.repeat([0.0, 1.0, 2.0], 10)
    for kernel in ("linear", "rbf"):
        expected = svmscreen.train_path(A, y, n_C=2, kernel=kernel, cv=2)
        path = svmscreen.train_path(B, y, n_C=2, kernel=kernel, cv=2)
        np.testing.assert_array_equal(path.cv_accuracy, expected.cv_accuracy)
        np.testing.assert_array_equal(path.model(1).decision_function(X),
                                      expected.model(1).decision_function(X))
        np.testing.assert_array_equal(
            fit_binary(B, y > 0, kernel=kernel).decision_function(X),
            fit_binary(A, y > 0, kernel=kernel).decision_function(X))

def test_prediction_input_is_checked():
    X, y = small_problem()
    model = fit_binary(X, y, kernel="rbf")
    with pytest.raises(ValueError, match="X has 2 features, but the model was trained with 3"):
        model.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="NaN or inf"):
        model.predict(with_value(X, (0, 0), np.nan))
    unsorted_row = csr_raw([1.0, 2.0], [2, 0], [0, 2], (1, 3))
    np.testing.assert_array_equal(model.decision_function(unsorted_row),
                                  model.decision_function(unsorted_row.toarray()))
    K = X @ X.T
    pre = fit_binary(K, y, kernel="precomputed")
    with pytest.raises(ValueError, match="needs 8 columns"):
        pre.decision_function(K[:, :5])
    with pytest.raises(ValueError, match="NaN or inf"):
        pre.decision_function(with_value(K, (0, 0), np.nan))


@pytest.mark.parametrize("X", [UNSORTED, DUPLICATE])
def test_csr_out_of_order_is_read_as_scipy_reads_it(X):
    """Unsorted or repeated column indices in a row: the model of the
    matrix scipy means (duplicates summed), and the caller's CSR keeps its
    order and its values (a canonical copy is sorted, not the input)."""
    X = X.copy()
    data, indices = X.data.copy(), X.indices.copy()
    model = fit_binary(X, Y2, kernel="linear", tol=1e-12)
    expected = fit_binary(X.toarray(), Y2, kernel="linear", tol=1e-12)
    np.testing.assert_allclose(model.decision_function(X.toarray()),
                               expected.decision_function(X.toarray()), rtol=1e-12)
    np.testing.assert_array_equal(X.data, data)
    np.testing.assert_array_equal(X.indices, indices)


def _malformed_indptr(X, how):
    """X (CSR) with an indptr scipy's constructors let through (they check
    lengths only): two pointers swapped, or one past the stored entries."""
    indptr = X.indptr.copy()
    if how == "decreasing":
        indptr[2], indptr[3] = indptr[3], indptr[2]
    else:
        indptr[1] = 10 ** 7
    X = X.copy()
    X.indptr = indptr
    return X


def test_csr_with_a_malformed_indptr_is_refused(tmp_path):
    """A decreasing indptr trained a model on overlapping rows (fit_binary,
    train_path) or ended in scipy's C++ 'RuntimeError:
    vector::_M_default_append' (predict, SVC, ScreeningData); one past the
    stored entries was a segfault in scipy's sort_indices (run in a child
    process here).  Now a ValueError naming X."""
    from svmscreen.estimators import SVC
    from svmscreen.screening import ScreeningData
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0],
                                [0.0, 1.0, 3.0], [1.0, 2.0, 1.0], [3.0, 0.0, 1.0]]))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    bad = _malformed_indptr(X, "decreasing")
    model = fit_binary(X, y)
    for call in (lambda: fit_binary(bad, y), lambda: svmscreen.train_path(bad, y, n_C=2),
                 lambda: svmscreen.train_ramp(bad, y), lambda: model.predict(bad),
                 lambda: SVC().fit(bad, y), lambda: SVC().fit(X, y).predict(bad),
                 lambda: ScreeningData(bad, y)):
        with pytest.raises(ValueError, match="X: malformed CSR matrix"):
            call()
    setup = ("import numpy as np, scipy.sparse as sp; import svmscreen\n"
             "X = sp.csr_matrix(np.eye(6)); ip = X.indptr.copy(); ip[1] = 10 ** 7\n"
             "X.indptr = ip")
    assert "X: malformed CSR matrix" in refusals_in_a_child(
        setup, ["svmscreen.fit_binary(X, [1, -1] * 3)"], tmp_path)


@pytest.mark.parametrize("entry", ["fit_binary", "SVC"])
@pytest.mark.parametrize("flaw, message", [("indptr", "X: malformed CSC matrix"),
                                           ("index", "X: CSC row index out of range"),
                                           ("data", "X: malformed CSC matrix: fewer stored")])
def test_csc_with_malformed_index_arrays_is_refused(entry, flaw, message, tmp_path):
    """A CSC matrix whose indptr runs past its entries, or a row index past
    its rows: scipy's CSC to CSR conversion (check_X's, or scikit-learn's
    validate_data in the estimators) segfaulted; with fewer values than
    entries it read past them, and fit_binary trained on what it found
    there.  Run in a child process."""
    setup = ("import numpy as np, scipy.sparse as sp, svmscreen\n"
             "from svmscreen.estimators import SVC\n"
             "X = sp.csc_matrix(np.eye(6) + 1)\n"
             + {"indptr": "ip = X.indptr.copy(); ip[2] = 10 ** 7; X.indptr = ip",
                "index": "ix = X.indices.copy(); ix[4] = 50; X.indices = ix",
                "data": "X.data = np.ones(3)"}[flaw])
    call = ("svmscreen.fit_binary(X, [1, -1] * 3)" if entry == "fit_binary"
            else "SVC().fit(X, [1, -1] * 3)")
    assert message in refusals_in_a_child(setup, [call], tmp_path)


@pytest.mark.parametrize("call, message", [
    ("svmscreen.fit_binary(bsr, [1, -1] * 2)", "X: BSR block column index out of range"),
    ("SVC().fit(bsr, [1, -1] * 2)", "X: BSR block column index out of range"),
    ("svmscreen.dump_svmlight_file(csr, [1, 2], io.BytesIO())",
     "X: malformed CSR matrix"),
])
def test_malformed_bsr_and_dumped_csr_are_refused(call, message, tmp_path):
    """A BSR matrix with a block column past its width: scipy's conversion
    to CSR wrote out of bounds ("corrupted size vs. prev_size", an abort);
    a CSR with an indptr past its entries given to dump_svmlight_file: a
    double free in scipy's sum_duplicates.  Run in a child process."""
    setup = ("import io, numpy as np, scipy.sparse as sp, svmscreen\n"
             "from svmscreen.estimators import SVC\n"
             "bsr = sp.bsr_matrix((np.ones((2, 2, 2)), np.array([0, 5]), np.array([0, 1, 2])),"
             " shape=(4, 4))\n"
             "csr = sp.csr_matrix(np.eye(2)); csr.indptr = np.array([0, 5, 2])")
    assert message in refusals_in_a_child(setup, [call], tmp_path)


@pytest.mark.parametrize("matrix, call, message", [
    ("sp.csr_matrix(A)", "commonutil.csr_find_scale_param(X)",
     "x: malformed CSR matrix: indptr has 18 entries, its 20 rows need 21"),
    ("sp.csc_matrix(A)", "svmscreen.fit_binary(X, y)",
     "X: malformed CSC matrix: indptr has 2 entries, its 4 columns need 5"),
    ("sp.bsr_matrix(A, blocksize=(2, 2))", "svmscreen.dump_svmlight_file(X, y, io.BytesIO())",
     "X: malformed BSR matrix: indptr has 8 entries, its 10 block rows need 11"),
], ids=["csr-scale", "csc-fit", "bsr-dump"])
def test_an_indptr_of_the_wrong_length_is_refused(matrix, call, message, tmp_path):
    """scipy checks the length of indptr when it builds a matrix, not when
    indptr is replaced: a shorter one made csr_find_scale_param and the
    CSC and BSR conversions read past its end (a segfault, or heap
    corruption and an abort).  Run in a child process."""
    setup = ("import io, numpy as np, scipy.sparse as sp, svmscreen\n"
             "from svmscreen.libsvm import commonutil\n"
             "A = np.abs(np.random.default_rng(0).normal(size=(20, 4)))\n"
             "y = [1, -1] * 10\n"
             f"X = {matrix}\n"
             "X.indptr = X.indptr[:-3].copy()")
    assert message in refusals_in_a_child(setup, [call], tmp_path)


# ----------------------------------------------------------- precomputed
def rbf_gram(A, B, gamma):
    diff = A[:, None, :] - B[None, :, :]
    return np.exp(-gamma * np.einsum("ijk,ijk->ij", diff, diff))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_precomputed_fit_equals_rbf_fit(fit_intercept):
    X, y = load_dataset("heart_scale")
    X = X.toarray()
    train, test = np.arange(200), np.arange(200, 270)
    gamma, C = 1.0 / 13, 2.0
    rbf = fit_binary(X[train], y[train], C=C, kernel="rbf", gamma=gamma, tol=1e-8,
                     fit_intercept=fit_intercept)
    K = rbf_gram(X[train], X[train], gamma)
    pre = fit_binary(K, y[train], C=C, kernel="precomputed", tol=1e-8,
                     fit_intercept=fit_intercept)
    np.testing.assert_allclose(pre.objective_, rbf.objective_, rtol=1e-9)
    np.testing.assert_allclose(pre.intercept_, rbf.intercept_, atol=1e-6)
    np.testing.assert_allclose(pre.alpha_, rbf.alpha_, atol=1e-6)
    np.testing.assert_allclose(pre.decision_function(rbf_gram(X[test], X[train], gamma)),
                               rbf.decision_function(X[test]), atol=1e-6)
    np.testing.assert_allclose(pre.decision_function(K), rbf.decision_function(X[train]),
                               atol=1e-6)
    assert pre.support_vectors_.size == 0


# -------------------------------------------------------------- import
def test_import_svmscreen(tmp_path):
    # A fresh interpreter, away from the source tree (whose svmscreen/ has
    # no compiled extensions): the installed package and its entry points.
    code = ("import svmscreen; from svmscreen._solver import solve, QMatrix; "
            "print(svmscreen.__version__, svmscreen.fit_binary.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=subprocess_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()
    assert out.stderr == ""


def test_gamma_scale_and_auto_resolve_alike_for_dense_and_csr():
    """gamma='scale' is scikit-learn's 1/(d * X.var()) (over every entry,
    zeros included), 'auto' and None LIBSVM's 1/d, for both layouts."""
    X, y = load_dataset("mushrooms", 300)
    dense = X.toarray()
    for gamma, expected in (("scale", 1.0 / (dense.shape[1] * dense.var())),
                            ("auto", 1.0 / dense.shape[1]), (None, 1.0 / dense.shape[1])):
        for Xl in (dense, X):
            model = fit_binary(Xl, y, kernel="rbf", gamma=gamma)
            assert model.gamma == pytest.approx(expected, rel=1e-12)
    # values sharing a large offset: the sparse variance is summed centred
    offset = 1e6 + np.random.default_rng(0).normal(size=(40, 3))
    labels = np.r_[np.ones(20), -np.ones(20)]
    expected = 1.0 / (3 * offset.var())
    for Xl in (offset, sp.csr_matrix(offset)):
        assert fit_binary(Xl, labels, gamma="scale").gamma == pytest.approx(expected, rel=1e-9)
    # a numpy string names the kernel as a str does
    assert fit_binary(X, y, kernel=np.str_("linear")).n_support_ > 0


@pytest.mark.parametrize("layout", [np.asarray, sp.csr_matrix])
def test_gamma_scale_of_a_subnormal_variance_names_gamma(layout):
    """X.var() below 1 / 1.8e308 (features near 1e-155): 1 / (d var) is
    infinite, and an infinite gamma made K(x, x) NaN, refused as a kernel
    overflow with the advice to scale X down; the error names gamma."""
    X, y = small_problem()
    X = layout(X * 1e-155)
    for fit in (lambda: fit_binary(X, y, gamma="scale"),
                lambda: svmscreen.train_path(X, y, C=[1.0, 2.0], gamma="scale"),
                lambda: svmscreen.train_ramp(X, y, gamma="scale")):
        with pytest.raises(ValueError, match="gamma='scale'.*X.var"):
            fit()


@pytest.mark.parametrize("kernel, scale, params", [
    ("linear", 1e200, {}),
    ("rbf", 1e200, {"gamma": 0.5}),
    ("poly", 1e120, {"gamma": 1.0, "degree": 3}),
])
def test_kernel_overflow_is_not_a_silent_model(kernel, scale, params):
    """Finite data whose kernel values overflow (u'v beyond 1.8e308) must not
    come back as an "optimal" model with a NaN objective: either a
    ValueError naming the problem, or a finite, usable model."""
    X, y = small_problem()
    try:
        model = fit_binary(X * scale, y, kernel=kernel, **params)
    except ValueError as exc:
        assert any(word in str(exc) for word in ("X", "kernel", "overflow", "finite"))
        return
    assert np.isfinite(model.objective_), (model.status_, model.objective_)
    assert np.isfinite(model.intercept_)
    assert np.all(np.isfinite(model.decision_function(X * scale)))


def test_predict_refuses_overflowing_decision_values():
    model = fit_binary(np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]), [1, -1, 1, -1],
                       kernel="poly", degree=3, C=10)
    with pytest.raises(ValueError, match="overflow"):
        model.predict([[1e120, 1e120]])


@pytest.mark.parametrize("args, error, match", [
    ((np.full(5, 2.0), -np.ones(5), -1.0, 0.0, 1.0, np.ones(5)), ValueError, "feasible"),
    ((np.zeros(5), np.full(5, np.nan), -1.0, 0.0, 1.0, np.ones(5)), ValueError, "grad"),
    ((np.zeros(5), None, -1.0, 0.0, 1.0, np.ones(5)), TypeError, "grad"),
    ((np.zeros(5), -np.ones(4), -1.0, 0.0, 1.0, np.ones(5)), ValueError, "grad"),
    ((0.0, -1.0, -1.0, 0.0, 1.0, 1.0), ValueError, "alpha must be 1-D"),
    ((np.array([np.nan, 0.0]), -np.ones(2), -1.0, 0.0, 1.0, None), ValueError,
     r"alpha must be a finite array \(1-D\): it contains NaN"),
    ((np.zeros(5), -np.ones(5), -1.0, 0.0, 1.0, np.ones(5) > 0), TypeError, "y"),
    ((np.zeros(5), -np.ones(5), -1.0, 0.0, 1.0, np.full(5, 2.0)), ValueError, "signs"),
    ((np.zeros(5), -np.ones(5), -1.0, 1.0, 0.0, np.ones(5)), ValueError, "lo must be <= hi"),
    ((np.zeros(5), -np.ones(5), -1.0, 0.0, np.inf, np.ones(5)), ValueError, "hi"),
    # finite, but the products overflow: nan (then inf) was returned as the
    # primal and dual values
    ((np.full(2, 1e308), np.array([1e308, -1e308]), -1.0, 0.0, 1e308, np.array([1.0, -1.0])),
     ValueError, "overflows float64"),
    ((np.full(2, 1e200), np.array([1e200, -1e200]), -1e200, 0.0, 1e200, np.array([1.0, -1.0])),
     ValueError, "overflows float64"),
    ((np.zeros(2), np.array([1e200, -1e200]), -1.0, 0.0, 1e200, None), ValueError,
     "overflows float64"),
])
def test_duality_gap_checks_its_point(args, error, match):
    # a gap of an infeasible or non-finite point would read as a certificate
    with pytest.raises(error, match=match):
        svmscreen.duality_gap(*args)


def test_model_pickles_and_keeps_its_gap():
    import pickle
    X, y = load_dataset("heart_scale")
    model = fit_binary(X, y, tol=1e-6)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.decision_function(X), model.decision_function(X))
    assert clone.duality_gap_ == model.duality_gap_ >= 0.0


def test_csr_wider_than_a_c_int_is_a_clear_error():
    """scipy keeps int64 indices for a matrix over 2**31 - 1 columns, and
    the kernels' int buffers refused it with Cython's 'Buffer dtype
    mismatch'.  Now a ValueError that names X and the limit, at every
    entry point that validates X."""
    from svmscreen.estimators import SVC
    rng = np.random.default_rng(0)
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    X = sp.csr_matrix((rng.normal(size=40), (np.repeat(np.arange(20), 2), np.tile([5, 6], 20))),
                      shape=(20, 2 ** 31 + 10))
    for train in (lambda: fit_binary(X, y), lambda: svmscreen.train_path(X, y, n_C=2),
                  lambda: svmscreen.train_ramp(X, y), lambda: SVC().fit(X, y)):
        with pytest.raises(ValueError, match="X has 2147483658 columns.*C ints"):
            train()


def test_duality_gap_feasibility_is_relative_to_the_box():
    """duality_gap checks lo <= alpha <= hi to 1e-12 of the box, as its
    docstring says: an absolute 1e-12 had taken alpha = 5e-13 in a box of
    1e-20 and returned gap 0 for a point far from the optimum."""
    from svmscreen import duality_gap
    Q = np.array([[1.0, 0.5], [0.5, 1.0]])
    alpha = np.array([5e-13, 5e-13])
    with pytest.raises(ValueError, match="alpha must be feasible"):
        duality_gap(alpha, Q @ alpha - 1, -1.0, 0.0, 1e-20)
    alpha = np.array([1e-20 * (1 + 1e-13), 0.0])                 # round-off passes
    assert duality_gap(alpha, Q @ alpha - 1, -1.0, 0.0, 1e-20).gap >= 0.0
