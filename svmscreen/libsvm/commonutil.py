"""libsvm's ``commonutil``: reading problems, evaluations, CSR scaling.

``svm_read_problem`` uses svmscreen's Cython parser (``datasets``), so a
malformed line raises ``ValueError`` naming the file and the line, and
``.gz``/``.bz2``/``.xz`` files are opened transparently.  One quirk of
libsvm's version is not copied: with ``return_scipy=True`` it switches to
0-based columns at the first ``0:`` it meets, leaving earlier rows shifted;
here a file with any index 0 (a precomputed kernel) keeps file index j in
column j for every row.
"""
import io
import sys

import numpy as np
import scipy.sparse as sp

from svmscreen._validation import check_csr_structure, check_real_dtype
from svmscreen.datasets import load_svmlight_file

__all__ = ["svm_read_problem", "evaluations", "evaluations_scipy", "csr_find_scale_param",
           "csr_scale"]


def _read(data_source):
    """(X, y, base): X in index space (column c is file index c + base)."""
    source = data_source
    if hasattr(data_source, "read"):
        probe = data_source.read()
        if isinstance(probe, str):
            probe = probe.encode("utf-8")
        source = io.BytesIO(probe)
        source.name = getattr(data_source, "name", "<file object>")
    X, y = load_svmlight_file(source, precomputed=True)
    if X.shape[1] and X.nnz and np.any(X.indices == 0):
        return X, y, 0
    width = max(X.shape[1] - 1, 0)
    X = sp.csr_matrix((X.data, np.maximum(X.indices - 1, 0), X.indptr), shape=(X.shape[0], width))
    X.has_sorted_indices = True
    return X, y, 1


def svm_read_problem(data_source, return_scipy=False):
    """Read LIBSVM-format data.

    Parameters
    ----------
    data_source : str, path or file object
    return_scipy : bool, default False

    Returns
    -------
    (y, x)
        ``return_scipy=False``: y a list of floats, x a list of dicts
        ``{index: value}`` (values as written, zeros included).
        ``return_scipy=True``: y an ndarray, x a ``csr_matrix`` whose column
        j is feature index j + 1 (j for a precomputed kernel file), zeros
        dropped, as libsvm's.

    Raises
    ------
    ValueError
        On a malformed line (the message names the file and the line).
    """
    X, y, base = _read(data_source)
    if return_scipy:
        X = X.copy()
        X.eliminate_zeros()
        width = int(X.indices.max()) + 1 if X.nnz else 0
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
        return y, X
    indices = (X.indices.astype(np.int64) + base).tolist()
    values = X.data.tolist()
    indptr = X.indptr.tolist()
    x = [dict(zip(indices[indptr[r]:indptr[r + 1]], values[indptr[r]:indptr[r + 1]]))
         for r in range(X.shape[0])]
    return y.tolist(), x


def evaluations_scipy(ty, pv):
    """(ACC, MSE, SCC) of ndarrays ty (true) and pv (predicted)."""
    if not (isinstance(ty, np.ndarray) and isinstance(pv, np.ndarray)):
        raise TypeError("type of ty and pv must be ndarray")
    if len(ty) != len(pv):
        raise ValueError("len(ty) must be equal to len(pv)")
    ACC = 100.0 * (ty == pv).mean()
    MSE = ((ty - pv) ** 2).mean()
    l = len(ty)
    sumv, sumy = pv.sum(), ty.sum()
    sumvy, sumvv, sumyy = (pv * ty).sum(), (pv * pv).sum(), (ty * ty).sum()
    with np.errstate(all="raise"):
        try:
            SCC = (((l * sumvy - sumv * sumy) * (l * sumvy - sumv * sumy))
                   / ((l * sumvv - sumv * sumv) * (l * sumyy - sumy * sumy)))
        except (FloatingPointError, ZeroDivisionError):
            SCC = float("nan")
    return float(ACC), float(MSE), float(SCC)


def evaluations(ty, pv, useScipy=True):
    """Accuracy (%), mean squared error and squared correlation coefficient
    of the predictions pv against the true values ty.

    Returns
    -------
    (ACC, MSE, SCC) : floats (SCC is nan when undefined)
    """
    if useScipy:
        # as libsvm's: the arrays as they are (a float64 copy made the
        # labels 2**62 and 2**62 + 1 equal, and took strings)
        return evaluations_scipy(np.asarray(ty), np.asarray(pv))
    if len(ty) != len(pv):
        raise ValueError("len(ty) must be equal to len(pv)")
    total_correct = total_error = 0
    sumv = sumy = sumvv = sumyy = sumvy = 0
    for v, y in zip(pv, ty):
        if y == v:
            total_correct += 1
        total_error += (v - y) * (v - y)
        sumv += v
        sumy += y
        sumvv += v * v
        sumyy += y * y
        sumvy += v * y
    l = len(ty)
    ACC = 100.0 * total_correct / l
    MSE = total_error / l
    try:
        SCC = (((l * sumvy - sumv * sumy) * (l * sumvy - sumv * sumy))
               / ((l * sumvv - sumv * sumv) * (l * sumyy - sumy * sumy)))
    except ZeroDivisionError:
        SCC = float("nan")
    return float(ACC), float(MSE), float(SCC)


def _check_csr(x):
    """Refuse x unless it is a real CSR matrix: a complex one was scaled to
    complex values, by parameters whose imaginary parts csr_scale dropped
    with numpy's ComplexWarning only."""
    if not isinstance(x, (sp.csr_matrix, sp.csr_array)):
        raise TypeError("x must be a scipy csr_matrix")
    check_real_dtype(x.dtype, "x")
    # scipy's min/max and products read a column index past the width: a
    # wrong scale (csr_find_scale_param) or a segfault (csr_scale)
    check_csr_structure(x, "x")


def csr_find_scale_param(x, lower=-1, upper=1):
    """Per-feature scaling of a CSR matrix to [lower, upper] (as svm-scale,
    implicit zeros included): ``{'coef': ..., 'offset': ...}`` with
    scaled = x * diag(coef) + offset."""
    _check_csr(x)
    if not lower < upper:
        raise ValueError(f"lower ({lower}) must be < upper ({upper})")
    l, n = x.shape
    feat_min = np.asarray(x.min(axis=0).toarray()).ravel()
    feat_max = np.asarray(x.max(axis=0).toarray()).ravel()
    coef = (feat_max - feat_min) / (upper - lower)
    nonzero = coef != 0
    coef[nonzero] = 1.0 / coef[nonzero]
    offset = -feat_min * coef + lower
    offset[coef == 0] = 0
    if np.count_nonzero(offset) * l > 3 * x.nnz:
        print("WARNING: The #nonzeros of the scaled data is at least 2 times larger than the "
              "original one.\nIf feature values are non-negative and sparse, set lower=0 "
              "rather than the default lower=-1.", file=sys.stderr)
    return {"coef": coef, "offset": offset}


def csr_scale(x, scale_param):
    """Apply ``csr_find_scale_param``'s result to a CSR matrix (a new one).
    Parameters of another width are padded with zeros or cut, with a
    warning (libsvm's version fails there)."""
    _check_csr(x)
    coef = np.asarray(scale_param["coef"], dtype=np.float64)
    offset = np.asarray(scale_param["offset"], dtype=np.float64)
    if coef.shape != offset.shape:
        raise ValueError("scale_param: coef and offset differ in length")
    l, n = x.shape
    if n != coef.shape[0]:
        print("WARNING: The dimension of scaling parameters and feature number do not match.",
              file=sys.stderr)
        coef = np.resize(np.concatenate([coef, np.zeros(max(n - coef.size, 0))]), n)
        offset = np.resize(np.concatenate([offset, np.zeros(max(n - offset.size, 0))]), n)
    scaled = sp.csr_matrix(x @ sp.diags(coef, 0, shape=(n, n)))
    if np.any(offset != 0):
        scaled = sp.csr_matrix(scaled + sp.csr_matrix(np.ones((l, 1))) @ sp.csr_matrix(
            offset.reshape(1, n)))
    if scaled.nnz > x.nnz:
        print("WARNING: original #nonzeros %d\n       > new      #nonzeros %d\nIf feature "
              "values are non-negative and sparse, get scale_param by setting lower=0 rather "
              "than the default lower=-1." % (x.nnz, scaled.nnz), file=sys.stderr)
    return scaled
