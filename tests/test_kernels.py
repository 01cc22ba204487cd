"""Kernels and the kernel cache against direct numpy formulas.

Reference: LIBSVM's definitions (svm.cpp, Kernel::k_function),

    linear   u'v
    poly     (gamma u'v + coef0)^degree
    rbf      exp(-gamma ||u - v||^2)
    sigmoid  tanh(gamma u'v + coef0)

evaluated here in plain numpy (RBF from the explicit difference u - v, not
from cached norms), on dense and CSR input, including CSR with scrambled row
order, explicit zeros and empty rows.
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import load_dataset
from svmscreen import fit_binary
from svmscreen._kernels import Kernel, cross_kernel
from svmscreen._solver import QMatrix, solve
from svmscreen._validation import check_X

KERNELS = ["linear", "poly", "rbf", "sigmoid"]
PARAMS = {  # (gamma, coef0, degree)
    "linear": (0.0, 0.0, 3),
    "poly": (0.3, 0.7, 3),
    "rbf": (0.4, 0.0, 3),
    "sigmoid": (0.2, -0.3, 3),
}


def reference_kernel(A, B, kernel, gamma, coef0, degree):
    """K(a_i, b_j) by LIBSVM's formulas, in numpy on dense copies."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    B = B.toarray() if sp.issparse(B) else np.asarray(B, dtype=np.float64)
    dots = A @ B.T
    if kernel == "linear":
        return dots
    if kernel == "poly":
        return (gamma * dots + coef0) ** degree
    if kernel == "rbf":
        diff = A[:, None, :] - B[None, :, :]
        return np.exp(-gamma * np.einsum("ijk,ijk->ij", diff, diff))
    if kernel == "sigmoid":
        return np.tanh(gamma * dots + coef0)
    raise ValueError(kernel)


def random_data(n, d, density, seed):
    """Dense data with exact zeros (so the CSR copy is really sparse), a few
    all-zero rows, and values of mixed scale."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 3.0], size=d)
    X[rng.random((n, d)) > density] = 0.0
    X[rng.choice(n, size=max(1, n // 10), replace=False)] = 0.0
    return X


def layouts(X, seed=0):
    """(name, matrix, row order) for dense, CSR and CSR with its rows
    scrambled: the kernel of the scrambled matrix is K[perm][:, perm]."""
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    ident = np.arange(X.shape[0])
    csr = sp.csr_matrix(X)
    return [("dense", check_X(X), ident),
            ("csr", check_X(csr), ident),
            ("csr-scrambled", check_X(csr[perm]), perm)]


def assert_kernel_close(actual, expected):
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12 * scale)


# --------------------------------------------------------------- formulas
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("d", [1, 3, 4, 5, 9])
def test_kernel_matches_formula_dense_and_csr(kernel, d):
    gamma, coef0, degree = PARAMS[kernel]
    X = random_data(23, d, density=0.6, seed=d)
    expected = reference_kernel(X, X, kernel, gamma, coef0, degree)
    for name, Xl, order in layouts(X, seed=d):
        K = Kernel(Xl, kernel, gamma, coef0, degree)
        n = Xl.shape[0]
        assert (K.n_samples, K.n_features) == (n, d)
        assert K.sparse == (name != "dense")
        assert_kernel_close(K.rows(np.arange(n)), expected[np.ix_(order, order)])
        assert_kernel_close(K.diagonal(), np.diag(expected)[order])


@pytest.mark.parametrize("degree", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("coef0", [0.0, 1.0, -0.5])
def test_polynomial_degrees_and_coef0(degree, coef0):
    X = random_data(15, 4, density=0.7, seed=degree)
    expected = reference_kernel(X, X, "poly", 0.5, coef0, degree)
    for _, Xl, order in layouts(X):
        K = Kernel(Xl, "poly", 0.5, coef0, degree)
        assert_kernel_close(K.rows(np.arange(15)), expected[np.ix_(order, order)])


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_on_real_data(kernel):
    """heart_scale: 13 features, CSR as shipped (a few zeros per row)."""
    X, _ = load_dataset("heart_scale")
    gamma, coef0, degree = (1.0 / 13, 0.5, 3) if kernel != "linear" else PARAMS["linear"]
    expected = reference_kernel(X, X, kernel, gamma, coef0, degree)
    for _, Xl, order in layouts(X.toarray(), seed=1):
        K = Kernel(Xl, kernel, gamma, coef0, degree)
        assert_kernel_close(K.rows(np.arange(X.shape[0])), expected[np.ix_(order, order)])


@pytest.mark.parametrize("kernel", KERNELS)
def test_csr_explicit_zeros_and_empty_rows(kernel):
    """Stored zeros and rows with no entries change nothing."""
    gamma, coef0, degree = PARAMS[kernel]
    X = random_data(12, 6, density=0.5, seed=3)
    X[4] = 0.0
    X[11] = 0.0
    dense_csr = sp.csr_matrix(X)
    # Store every entry, zeros included (indices stay sorted and unique).
    full = np.ones_like(X)
    stored = sp.csr_matrix(full)
    stored.data = X[full != 0].ravel().copy()
    assert stored.nnz == X.size and dense_csr.nnz < X.size
    expected = reference_kernel(X, X, kernel, gamma, coef0, degree)
    for Xl in (check_X(stored), check_X(dense_csr)):
        K = Kernel(Xl, kernel, gamma, coef0, degree)
        assert_kernel_close(K.rows(np.arange(12)), expected)
        assert_kernel_close(K.diagonal(), np.diag(expected))


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid"])
def test_dense_data_with_no_features(kernel):
    """Dense X of 0 columns: every sample is the zero vector, so K is the
    kernel of two zero vectors everywhere (0, coef0^d, 1, tanh(coef0)), and
    a solve on it ends at its optimum.  The rows' addresses are taken
    without reading them; the debug build (SVMSCREEN_DEBUG=1) raised
    IndexError there."""
    gamma, coef0, degree = PARAMS[kernel]
    X = np.zeros((5, 0))
    expected = reference_kernel(np.zeros((5, 1)), np.zeros((5, 1)), kernel, gamma, coef0,
                                degree)
    K = Kernel(X, kernel, gamma, coef0, degree)
    assert_kernel_close(K.rows(np.arange(5)), expected)
    assert_kernel_close(K.diagonal(), np.diag(expected))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    result = solve(QMatrix(K, y, 1.0), -np.ones(5), np.zeros(5), np.ones(5), np.zeros(5), y=y)
    assert result.status == "optimal"
    assert np.all((result.alpha >= 0.0) & (result.alpha <= 1.0))
    assert result.alpha @ y == pytest.approx(0.0, abs=1e-12)


def test_feature_permutation_leaves_kernel_unchanged():
    """Permuting features (columns) is invisible to every kernel, for CSR
    whose index order must then be re-sorted."""
    X = random_data(17, 8, density=0.5, seed=5)
    cols = np.random.default_rng(5).permutation(8)
    Xp = sp.csr_matrix(X[:, cols])
    for kernel in KERNELS:
        gamma, coef0, degree = PARAMS[kernel]
        a = Kernel(check_X(sp.csr_matrix(X)), kernel, gamma, coef0, degree).rows(np.arange(17))
        b = Kernel(check_X(Xp), kernel, gamma, coef0, degree).rows(np.arange(17))
        assert_kernel_close(b, a)


def test_precomputed_kernel_reads_the_matrix():
    X = random_data(9, 3, density=1.0, seed=7)
    G = reference_kernel(X, X, "rbf", 0.3, 0.0, 3)
    K = Kernel(check_X(G), "precomputed", 0.0, 0.0, 0)
    np.testing.assert_array_equal(K.rows(np.arange(9)), G)
    np.testing.assert_array_equal(K.diagonal(), np.diag(G))
    np.testing.assert_array_equal(K.rows([2, 0], [8, 1, 1]), G[np.ix_([2, 0], [8, 1, 1])])


# ------------------------------------------------------------ row subsets
@pytest.mark.parametrize("kernel", KERNELS)
def test_rows_over_index_subsets(kernel):
    gamma, coef0, degree = PARAMS[kernel]
    X = random_data(30, 5, density=0.6, seed=11)
    expected = reference_kernel(X, X, kernel, gamma, coef0, degree)
    rng = np.random.default_rng(11)
    rows = np.array([29, 0, 7, 7, 13])               # unsorted, repeated
    cols = rng.choice(30, size=12, replace=False)     # a scrambled subset
    for name, Xl, order in layouts(X, seed=11):
        K = Kernel(Xl, kernel, gamma, coef0, degree)
        full = expected[np.ix_(order, order)]
        assert_kernel_close(K.rows(rows, cols), full[np.ix_(rows, cols)])
        assert_kernel_close(K.rows(rows), full[rows])
        assert_kernel_close(K.rows(rows, [cols[3]]), full[np.ix_(rows, [cols[3]])])
        assert K.rows([], cols).shape == (0, 12)
        assert K.rows(rows, []).shape == (5, 0)
        # Python lists and int32 arrays are accepted as index arrays.
        assert_kernel_close(K.rows(list(rows), cols.astype(np.int32)), full[np.ix_(rows, cols)])


@pytest.mark.parametrize("rows, cols", [([30], None), ([-1], None), ([0], [30]), ([0], [-2])])
def test_rows_out_of_range_raise(rows, cols):
    K = Kernel(check_X(random_data(30, 3, 1.0, 0)), "rbf", 0.5, 0.0, 3)
    with pytest.raises(IndexError, match="out of range"):
        K.rows(rows, cols)


# ----------------------------------------------------------- cross kernel
def concat_cross(A, B, kernel, gamma, coef0, degree, max_block=1 << 22):
    blocks = list(cross_kernel(A, B, kernel, gamma, coef0, degree, max_block))
    starts = [b[0] for b in blocks]
    stops = [b[1] for b in blocks]
    assert starts[0] == 0 and stops[-1] == A.shape[0]
    assert starts[1:] == stops[:-1]
    return np.vstack([b[2] for b in blocks])


@pytest.mark.parametrize("kernel", KERNELS)
def test_cross_kernel_matches_formula_and_training_kernel(kernel):
    gamma, coef0, degree = PARAMS[kernel]
    X = random_data(26, 7, density=0.5, seed=13)
    T = random_data(19, 7, density=0.5, seed=14)
    expected = reference_kernel(T, X, kernel, gamma, coef0, degree)
    for A in (check_X(T), check_X(sp.csr_matrix(T))):
        for B in (check_X(X), check_X(sp.csr_matrix(X))):
            for max_block in (1 << 22, 26 * 4, 1):   # one block, blocks of 4 rows, 1 row
                got = concat_cross(A, B, kernel, gamma, coef0, degree, max_block)
                assert got.shape == (19, 26)
                assert_kernel_close(got, expected)
    # cross_kernel(X, X) is the training kernel, for both layouts.
    for Xl in (check_X(X), check_X(sp.csr_matrix(X))):
        train = Kernel(Xl, kernel, gamma, coef0, degree).rows(np.arange(26))
        assert_kernel_close(concat_cross(Xl, Xl, kernel, gamma, coef0, degree), train)


@pytest.mark.parametrize("kernel", KERNELS)
def test_cross_kernel_on_very_wide_csr(kernel):
    """Feature indices far beyond the nonzeros (hashed features): the
    blocks keep only the columns the support vectors use, and equal the
    kernel of the same data with those columns packed, including A's
    columns that B lacks (they count in ||a||^2 for RBF)."""
    gamma, coef0, degree = PARAMS[kernel]
    X = random_data(12, 6, density=0.6, seed=3)
    T = random_data(9, 7, density=0.6, seed=4)     # a seventh column only in T
    spread = np.array([0, 5, 70_000, 2_000_000, 9_999_990, 12, 40_000_000])
    wide_X = sp.csr_matrix((X[np.nonzero(X)], (np.nonzero(X)[0], spread[np.nonzero(X)[1]])),
                           shape=(12, 50_000_000))
    wide_T = sp.csr_matrix((T[np.nonzero(T)], (np.nonzero(T)[0], spread[np.nonzero(T)[1]])),
                           shape=(9, 50_000_000))
    X7 = np.hstack([X, np.zeros((12, 1))])
    expected = reference_kernel(T, X7, kernel, gamma, coef0, degree)
    for max_block in (1 << 22, 12 * 4):
        assert_kernel_close(concat_cross(wide_T, wide_X, kernel, gamma, coef0, degree,
                                         max_block), expected)


def test_cross_kernel_precomputed_selects_columns():
    G = np.arange(20.0).reshape(4, 5)
    got = concat_cross(G, np.array([4, 0, 2]), "precomputed", 0.0, 0.0, 0, max_block=3)
    np.testing.assert_array_equal(got, G[:, [4, 0, 2]])


@pytest.mark.parametrize("scale, gamma", [(1e8, 1.0), (1.0, 1e300), (1e-8, 1e20)])
def test_cross_kernel_rbf_of_a_row_with_itself_is_one(scale, gamma):
    """K(x, x) = 1 at prediction as in training, in every layout: the
    expansion ||a||^2 + ||b||^2 - 2a'b cancels to round-off for a = b, which
    gamma magnified (a training point's decision value -3e-4, LIBSVM's -1,
    at features near 1e8 and gamma = 1), and near a = b it is summed from
    a - b, as LIBSVM's prediction does."""
    X = random_data(12, 5, density=0.6, seed=7) * scale
    near = X[3] + 1e-9 * scale          # 1e-9 from row 3: K = exp(-gamma 5e-18 scale^2)
    T = np.vstack([X[[0, 5, 11]], near])
    expected = reference_kernel(T, X, "rbf", gamma, 0.0, 3)
    np.testing.assert_array_equal(expected[[0, 1, 2], [0, 5, 11]], 1.0)
    for A in (check_X(T), check_X(sp.csr_matrix(T))):
        for B in (check_X(X), check_X(sp.csr_matrix(X))):
            got = concat_cross(A, B, "rbf", gamma, 0.0, 3)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
    y = np.where(np.arange(12) % 2, 1.0, -1.0)
    model = fit_binary(X, y, C=10.0, kernel="rbf", gamma=gamma)
    assert np.all(model.predict(X) == y)


def test_rbf_values_where_exp_underflows_are_exps():
    """RBF values skip exp where it is 0.0 anyway (arguments below -746):
    across the underflow, from normal numbers through the subnormals to
    zero, each value is the C library's exp of -gamma d (math.exp), to the
    bit, in training columns and at prediction."""
    d = np.concatenate([np.linspace(700.0, 750.0, 2001), [745.13, 745.14, 746.0, 1e4, 1e300]])
    Z = np.zeros((d.size + 1, 1))
    Z[1:, 0] = np.sqrt(d)
    exact = np.array([math.exp(-(z * z)) for z in Z[:, 0]])
    assert np.any((exact > 0) & (exact < 2.3e-308)) and np.any(exact == 0)
    got = Kernel(check_X(Z), "rbf", 1.0, 0.0, 3).rows([0])[0]
    np.testing.assert_array_equal(got.view(np.int64), exact.view(np.int64))
    predicted = concat_cross(check_X(Z[:1]), check_X(Z), "rbf", 1.0, 0.0, 3)[0]
    np.testing.assert_array_equal(predicted.view(np.int64), exact.view(np.int64))


@pytest.mark.parametrize("kernel", KERNELS)
def test_decision_function_same_for_dense_and_csr(kernel):
    """A model trained on either layout predicts the same on either layout,
    and its decision function is sum_j dual_coef_j K(sv_j, x) + b by the
    numpy formula."""
    gamma, coef0, degree = PARAMS[kernel]
    X = random_data(40, 6, density=0.3, seed=17)
    y = np.where(X.sum(axis=1) + np.random.default_rng(17).normal(size=40) > 0, 1.0, -1.0)
    T = random_data(25, 6, density=0.3, seed=18)
    kw = dict(C=2.0, kernel=kernel, gamma=gamma if kernel != "linear" else None,
              coef0=coef0, degree=degree, tol=1e-8)
    models = [fit_binary(X, y, **kw), fit_binary(sp.csr_matrix(X), y, **kw)]
    for model in models:
        expected = (reference_kernel(T, X[model.support_], kernel, gamma, coef0, degree)
                    @ model.dual_coef_ + model.intercept_)
        for Tl in (T, sp.csr_matrix(T)):
            np.testing.assert_allclose(model.decision_function(Tl), expected,
                                       rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(models[0].decision_function(T), models[1].decision_function(T),
                               rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------- cache
def _solve_with_cache(kernel_obj, signs, cache_size, hi, equality, tol, shrinking):
    n = signs.shape[0]
    Q = QMatrix(kernel_obj, signs, cache_size)
    return solve(Q, -np.ones(n), np.zeros(n), hi, np.zeros(n), y=equality, tol=tol,
                 shrinking=shrinking)


@pytest.mark.parametrize("name, rows, kernel, fit_intercept", [
    ("german.numer_scale", None, "rbf", True),
    ("australian_scale", None, "poly", True),
    ("mushrooms", 600, "linear", True),     # sparse: the CSR column path
    ("diabetes_scale", None, "rbf", False),
    ("splice", 500, "sigmoid", True),
])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_tiny_cache_gives_the_same_solve(name, rows, kernel, fit_intercept, layout):
    """A 0.001 MB budget holds two columns: every step evicts, and shrinking
    swaps positions inside partially cached columns (swap_index).  Kernel
    values do not depend on whether they were cached, so the iterates are
    bit-for-bit those of a cache that holds everything."""
    X, y = load_dataset(name, rows)
    X = check_X(X.toarray() if layout == "dense" else X)
    signs = np.where(y == y.max(), 1.0, -1.0)
    gamma = 1.0 / X.shape[1] if kernel != "sigmoid" else 0.1 / X.shape[1]
    coef0 = 1.0 if kernel == "poly" else 0.0
    kernel_obj = Kernel(X, kernel, gamma, coef0, 3)
    hi = np.where(signs > 0, 2.0, 1.5)
    equality = signs if fit_intercept else None
    for tol in (1e-3, 1e-6):
        big = _solve_with_cache(kernel_obj, signs, 200.0, hi, equality, tol, True)
        tiny = _solve_with_cache(kernel_obj, signs, 0.001, hi, equality, tol, True)
        assert big.status == tiny.status == "optimal"
        assert tiny.n_iter == big.n_iter
        np.testing.assert_array_equal(tiny.alpha, big.alpha)
        np.testing.assert_array_equal(tiny.grad, big.grad)
        assert tiny.objective == big.objective
        assert tiny.rho == big.rho


def test_tiny_cache_through_fit_binary():
    X, y = load_dataset("heart_scale")
    for shrinking in (True, False):
        kw = dict(C=3.0, kernel="rbf", gamma=0.2, tol=1e-5, shrinking=shrinking)
        big = fit_binary(X, y, cache_size=100.0, **kw)
        tiny = fit_binary(X, y, cache_size=0.001, **kw)
        np.testing.assert_array_equal(tiny.alpha_, big.alpha_)
        assert tiny.intercept_ == big.intercept_
        assert tiny.n_iter_ == big.n_iter_


def test_compute_layout_densifies_only_dense_enough_csr():
    """fit_binary computes kernel columns on a dense copy of a CSR matrix
    that is at least 75% full; sparser CSR stays as it is.  Either way the
    kernel is the same."""
    from svmscreen._kernels import compute_layout
    X = random_data(20, 8, density=1.0, seed=21)
    X[0, :] = 0.0                                   # 95% full
    full = check_X(sp.csr_matrix(X))
    sparse = check_X(sp.csr_matrix(random_data(20, 8, density=0.3, seed=22)))
    out = compute_layout(full)
    assert isinstance(out, np.ndarray) and out.flags.c_contiguous
    np.testing.assert_array_equal(out, X)
    assert compute_layout(sparse) is sparse
    dense = check_X(X)
    assert compute_layout(dense) is dense
    for kernel in KERNELS:
        gamma, coef0, degree = PARAMS[kernel]
        assert_kernel_close(Kernel(out, kernel, gamma, coef0, degree).rows(np.arange(20)),
                            Kernel(full, kernel, gamma, coef0, degree).rows(np.arange(20)))


def test_kernel_and_qmatrix_refuse_pickling_and_copying(tmp_path):
    """A Kernel, a QMatrix and the public ScreeningData that holds them
    raise a TypeError on pickle.dumps, copy.copy and copy.deepcopy, for
    dense, CSR and precomputed data.  Cython's automatic pickling read
    their unset typed views and crashed the interpreter; the calls run in
    a child Python so that a crash fails this test, not the session."""
    import subprocess
    import sys

    from conftest import subprocess_env
    code = (
        "import copy, pickle\n"
        "import numpy as np, scipy.sparse as sp\n"
        "from svmscreen._kernels import Kernel\n"
        "from svmscreen._solver import QMatrix\n"
        "from svmscreen.screening import ScreeningData\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.standard_normal((20, 4))\n"
        "y = np.where(np.arange(20) % 2, 1.0, -1.0)\n"
        "objects = [Kernel(X, 'rbf', 0.5, 0.0, 3),\n"
        "           Kernel(sp.csr_matrix(X * (X > 0)), 'rbf', 0.5, 0.0, 3),\n"
        "           Kernel(X @ X.T, 'precomputed', 0.0, 0.0, 3),\n"
        "           QMatrix(Kernel(X, 'linear', 0.0, 0.0, 3), y, 1.0),\n"
        "           ScreeningData(X, y, gamma=0.5)]\n"
        "for obj in objects:\n"
        "    calls = [pickle.dumps, copy.deepcopy]\n"
        "    if not isinstance(obj, ScreeningData):\n"
        "        calls.append(copy.copy)\n"
        "    for call in calls:\n"
        "        try:\n"
        "            call(obj)\n"
        "        except TypeError as exc:\n"
        "            assert 'cannot be pickled or copied' in str(exc), exc\n"
        "        else:\n"
        "            raise AssertionError(f'{call.__name__} of {type(obj).__name__}')\n"
        "print('refused')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=subprocess_env(OMP_NUM_THREADS="1"), cwd=tmp_path, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "refused"


def test_take_rows_is_scipy_row_indexing():
    """take_rows (the rows of a one-vs-one pair or a CV fold) builds the
    matrix X[rows] builds: same class, arrays and index types, for CSR with
    empty rows and for a dense array; no rows gives a 0-row matrix."""
    from svmscreen._kernels import take_rows
    X = random_data(30, 7, density=0.4, seed=23)
    X[[3, 17], :] = 0.0
    for data in (check_X(sp.csr_matrix(X)), check_X(X)):
        for rows in (np.array([0, 3, 4, 17, 29]), np.arange(30), np.array([], dtype=np.intp)):
            ours, theirs = take_rows(data, rows), data[rows]
            assert type(ours) is type(theirs) and ours.shape == theirs.shape
            if sp.issparse(data):
                for name in ("data", "indices", "indptr"):
                    assert getattr(ours, name).dtype == getattr(theirs, name).dtype
                    np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name))
            else:
                np.testing.assert_array_equal(ours, theirs)
