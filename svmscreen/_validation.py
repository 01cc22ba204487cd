"""Validation at the boundary: every public entry point checks its input here
once, and everything below trusts it.

Arrays become float64 C-contiguous ndarrays or CSR matrices with float64 data
and int32 sorted unique indices, as copies when anything must change; the
caller's objects are never modified (nothing below check_X writes to its
result, so an input that already fits is shared, not copied).  Errors are ValueError/TypeError
naming the argument and the value.
"""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")
INT_MAX = 2 ** 31 - 1           # the Cython core's int (degree) and long long (max_iter)
INT64_MAX = 2 ** 63 - 1


def fits_c_int(value):
    """Whether C's int holds ``value`` (svm.h's fields, LIBSVM's indices)."""
    return -INT_MAX - 1 <= value <= INT_MAX


class ConvergenceWarning(UserWarning):
    """The solver stopped short of the tolerance (at max_iter, or where
    round-off leaves no step that lowers the objective); or CCCP
    (``train_ramp``) stopped short of a fixed point: at max_outer, on a rise
    of the ramp objective, or on a cycle of outlier sets."""


def _as_array(value, name):
    try:
        return np.asarray(value)
    except Exception as exc:
        raise TypeError(f"{name} cannot be converted to an array: {exc}") from None


def check_real_dtype(dtype, name):
    """Refuse a dtype other than bool, integer or float: a float64 cast
    drops complex parts with only numpy's ComplexWarning."""
    if dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {dtype}")


def as_real_array(value, name):
    """``np.asarray(value)``, refused unless it holds real numbers."""
    arr = _as_array(value, name)
    check_real_dtype(arr.dtype, name)
    return arr


def check_X(X, name="X", precomputed=False):
    """Dense float64 C-contiguous array or canonical CSR (see module doc)."""
    if X is None:
        raise TypeError(f"{name} must be an array or a sparse matrix, got None")
    if sp.issparse(X):
        if precomputed:
            raise TypeError(f"{name}: a precomputed kernel must be a dense array")
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
        check_csr_structure(X, name)
        X = sp.csr_matrix(X)   # a new object; the data may still be shared
        check_real_dtype(X.dtype, name)
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"{name} is empty: shape {X.shape}")
        if X.shape[1] > INT_MAX or X.nnz > INT_MAX:
            raise ValueError(f"{name} has {X.shape[1]} columns and {X.nnz} nonzeros: sparse "
                             f"data is indexed with C ints, at most {INT_MAX} of each (as "
                             "LIBSVM's feature indices)")
        X = canonical_csr(X, name)
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        if not np.all(np.isfinite(data)):
            raise ValueError(f"{name} contains NaN or infinity")
        # Shares the caller's arrays when their types already fit: nothing
        # below writes to them.  Contiguous, as the typed loops take them: a
        # matrix built on strided views of larger arrays is a valid scipy
        # matrix, and was refused with "ndarray is not C-contiguous"
        return sp.csr_matrix((data, np.ascontiguousarray(X.indices, dtype=np.int32),
                              np.ascontiguousarray(X.indptr, dtype=np.int32)), shape=X.shape)
    arr = as_real_array(X, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


def check_csr_structure(X, name):
    """Refuse a CSR, CSC or BSR matrix whose index arrays point outside it
    (other formats pass: COO's constructor checks its indices, DIA's and
    DOK's cannot hold such).  scipy's constructors check their lengths only,
    and an indptr that decreases (or runs past the stored entries) made
    scipy's ``sort_indices``, its conversions to CSR (a BSR block column
    past the width: heap corruption, then an abort) and the kernels read or
    write out of bounds: a crash, not an error."""
    if X.format not in ("csr", "csc", "bsr"):
        return
    fmt = X.format.upper()
    indptr, indices = X.indptr, X.indices
    n_major, n_minor, major, minor = _compressed_dimensions(X, fmt)
    # an indptr shortened after construction (scipy checks its length only
    # there): the conversions and csr_find_scale_param read past its end
    if indptr.ndim != 1 or indptr.size != n_major + 1:
        raise ValueError(f"{name}: malformed {fmt} matrix: indptr has {indptr.size} entries, "
                         f"its {n_major} {major} need {n_major + 1}")
    if (indptr[0] != 0 or indptr[-1] > indices.size
            or np.any(np.diff(indptr) < 0)):
        raise ValueError(f"{name}: malformed {fmt} matrix: indptr must start at 0, never "
                         "decrease and end within the stored entries")
    if X.data.shape[0] < indptr[-1]:
        # (BSR: blocks) scipy's CSC and BSR conversions read past the end
        raise ValueError(f"{name}: malformed {fmt} matrix: fewer stored values than indptr "
                         "counts")
    # entries past indptr[-1] are not the matrix's (scipy prunes them)
    used = indices[:indptr[-1]]
    if used.size and (used.min() < 0 or used.max() >= n_minor):
        raise ValueError(f"{name}: {fmt} {minor} index out of range")


def _compressed_dimensions(X, fmt):
    """(n_major, n_minor, major, minor) of a CSR, CSC or BSR matrix: the
    count its indptr runs over, the count its indices point into, and
    their names for an error message."""
    if fmt == "CSR":
        return X.shape[0], X.shape[1], "rows", "column"
    if fmt == "CSC":
        return X.shape[1], X.shape[0], "columns", "row"
    rows, columns = X.blocksize
    return X.shape[0] // rows, X.shape[1] // columns, "block rows", "block column"


def canonical_csr(X, name):
    """X with the column indices of every row sorted and unique, as the
    kernels' merge-joins need: X itself if they are, else a canonical copy
    (duplicates summed, which is what the matrix means to scipy, e.g. a
    column selection ``X[:, order]`` that leaves rows unsorted); the
    caller's matrix is never sorted in place (X: as ``check_csr_structure``
    passes it)."""
    indptr, indices = X.indptr, X.indices
    step = np.diff(indices.astype(np.int64))
    row_starts = indptr[1:-1]
    inside_row = np.ones(step.shape, dtype=bool)
    inside_row[row_starts[(row_starts > 0) & (row_starts < indices.size)] - 1] = False
    if not np.any(inside_row & (step <= 0)):
        return X
    X = X.copy()
    X.sum_duplicates()
    return X


def check_precomputed(K, name="X", n_train=None):
    """A finite kernel matrix: square for training, (n, n_train) for
    prediction."""
    K = check_X(K, name, precomputed=True)
    if n_train is None and K.shape[0] != K.shape[1]:
        raise ValueError(f"{name}: a precomputed kernel must be square, got shape {K.shape}")
    if n_train is not None and K.shape[1] != n_train:
        raise ValueError(f"{name}: a precomputed kernel for prediction needs {n_train} "
                         f"columns (one per training sample), got {K.shape[1]}")
    return K


def check_labels(y, n_samples, name="y"):
    """1-D finite real labels, one per sample."""
    y = _as_array(y, name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} labels but X has {n_samples} samples")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {y.dtype}")
    labels = np.array(y, dtype=np.float64)
    if not np.all(np.isfinite(labels)):
        raise ValueError(f"{name} contains NaN or infinity")
    if y.dtype.kind in "iu" and np.unique(labels).size != np.unique(y).size:
        raise ValueError(f"{name}: distinct integer labels are equal as float64 "
                         "(beyond 2**53); relabel them")
    return labels


def check_vector(value, n, name, *, scalar=False):
    """A finite float64 copy of a real vector of length n (any length when n
    is None; ``scalar``: a number is repeated n times)."""
    arr = as_real_array(value, name)
    if n is None:
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    elif scalar and arr.ndim == 0:
        arr = np.full(n, arr, dtype=np.float64)
    elif arr.shape != (n,):
        raise ValueError(f"{name} must be a finite array of shape ({n},), got shape {arr.shape}")
    arr = np.array(arr, dtype=np.float64, order="C")
    if not np.all(np.isfinite(arr)):
        shape = "(1-D)" if n is None else f"of shape ({n},)"
        raise ValueError(f"{name} must be a finite array {shape}: it contains NaN or infinity")
    return arr


def binary_signs(y, name="y"):
    """(classes, s) with s_i = +1 for classes[1], -1 for classes[0]."""
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"{name} must contain exactly two classes, got {classes.size}: "
                         f"{classes[:5].tolist()}")
    return classes, np.where(y == classes[1], 1.0, -1.0)


def _positive(name, value, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        op = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {op}, got {value!r}")
    return value


def resolve_gamma(gamma, X, kernel):
    """gamma=None or "auto" -> 1/n_features (LIBSVM's default);
    "scale" -> 1/(n_features * X.var()) (scikit-learn's); a number >= 0
    as it is (0, a constant kernel, as scikit-learn takes it; LIBSVM's
    ``-g 0`` meaning 1/n_features is the svmutil layer's,
    ``libsvm.model.resolve_parameters``)."""
    # before any comparison with a string: an array's == is elementwise,
    # and ``gamma in ("scale", "auto")`` raised numpy's "truth value ... is
    # ambiguous", naming no argument
    if isinstance(gamma, np.ndarray) and gamma.ndim > 0:
        raise TypeError(f"gamma must be one number, 'scale' or 'auto', got an array of shape "
                        f"{gamma.shape}")
    if kernel in ("linear", "precomputed"):
        # gamma plays no part; accept what a model of these kernels stores (0).
        if gamma is None or gamma in ("scale", "auto"):
            return 0.0
        return _positive("gamma", gamma, allow_zero=True)
    n_features = X.shape[1]
    if gamma is None or gamma == "auto":
        return 1.0 / n_features
    if gamma == "scale":
        if sp.issparse(X):
            # centred sums (E[x^2] - E[x]^2 cancels when the values share an
            # offset): nonzeros, then the implicit zeros' (0 - mean)^2 each
            size = X.shape[0] * X.shape[1]
            mean = X.sum() / size
            var = (np.sum((X.data - mean) ** 2) + (size - X.nnz) * mean ** 2) / size
        else:
            var = X.var()
        if not var > 0:
            return 1.0
        # a float, as every other gamma: np.float64 shows in the models' repr
        with np.errstate(over="ignore"):
            gamma = float(1.0 / (n_features * var))
        if not np.isfinite(gamma):
            # a subnormal variance (features near 1e-155): an infinite gamma
            # made K(x, x) = exp(-inf * 0) NaN, reported as a kernel overflow
            # whose advice (scale X down) made it worse
            raise ValueError(f"gamma='scale' is 1 / (n_features * X.var()), and X.var() = "
                             f"{float(var):g} is too small for it to be finite: scale X "
                             "up or give gamma a number")
        return gamma
    if isinstance(gamma, str):
        raise ValueError(f"gamma must be a number >= 0, 'scale' or 'auto', got {gamma!r}")
    return _positive("gamma", gamma, allow_zero=True)


def check_parameters(*, C, kernel, degree, coef0, tol, cache_size, max_iter):
    """The one parameter check (as LIBSVM's svm_check_parameter); returns the
    values normalised (kernel as a plain str: a numpy.str_ passes
    ``isinstance(kernel, str)`` but not the typed routines' ``str`` arguments)."""
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    kernel = str(kernel)
    C = _positive("C", C)
    if (isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0
            or degree > INT_MAX):
        raise ValueError(f"degree must be an integer in [0, {INT_MAX}], got {degree!r}")
    if isinstance(coef0, bool) or not isinstance(coef0, numbers.Real):
        raise TypeError(f"coef0 must be a real number, got {coef0!r}")
    if not np.isfinite(coef0):
        raise ValueError(f"coef0 must be finite, got {coef0!r}")
    tol = _positive("tol", tol)
    cache_size = _positive("cache_size", cache_size)
    if max_iter is not None:
        if (isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral)
                or not 0 < max_iter <= INT64_MAX):
            raise ValueError(f"max_iter must be a positive integer (at most {INT64_MAX}) or "
                             f"None, got {max_iter!r}")
        max_iter = int(max_iter)
    return C, kernel, int(degree), float(coef0), tol, cache_size, max_iter


def check_sample_weight(sample_weight, n):
    """sample_weight as a finite, non-negative float64 copy of length n."""
    sw = check_vector(sample_weight, n, "sample_weight")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be finite and >= 0, got a negative value")
    return sw


def is_balanced(class_weight):
    """class_weight="balanced" (a numpy.str_ included)."""
    return isinstance(class_weight, str) and class_weight == "balanced"


def balanced_class_weight(y, classes):
    """scikit-learn's class_weight="balanced": {label: n / (n_classes *
    number of samples of that label)} over the labels ``y``, every one of
    ``classes`` among them."""
    counts = np.array([np.count_nonzero(y == label) for label in classes])
    if np.any(counts == 0):
        missing = [label for label, count in zip(classes.tolist(), counts) if count == 0]
        raise ValueError(f'class_weight="balanced" needs every class among the training '
                         f"labels; missing: {missing}")
    return dict(zip(classes.tolist(), y.size / (classes.size * counts)))


def check_box_overflow(C, units, weights="class_weight and sample_weight"):
    """C_i = C * units_i (units: the class times sample weights) must be
    finite: the solver refuses an infinite box, which would never converge.
    ``weights`` names the caller's weight arguments in the error."""
    with np.errstate(over="ignore"):
        finite = np.all(np.isfinite(C * np.asarray(units)))
    if not finite:
        raise ValueError(f"C={C:g} times {weights} overflows float64 "
                         "for some samples; use smaller values")


def class_bounds(y, classes, C, class_weight, sample_weight, rows=None):
    """Per-sample upper bound C_i = C * weight(class of y_i) * sample_weight_i
    (``classes``: the labels of y, sorted).  class_weight: a dict {label:
    weight >= 0}, "balanced" (``balanced_class_weight`` of y[rows], the training
    rows of a CV fold, all of y if None) or None."""
    hi = np.full(y.shape, C)
    if is_balanced(class_weight):
        class_weight = balanced_class_weight(y if rows is None else y[rows], classes)
    if class_weight is not None:
        if not isinstance(class_weight, dict):
            raise TypeError(f'class_weight must be a dict {{label: weight}} or "balanced", '
                            f"got {class_weight!r}")
        for label, weight in class_weight.items():
            # 0 as LIBSVM's -wi 0 and estimators.SVC: the class's C_i are 0,
            # as sample weights of 0 make them (the check below refuses a
            # class left alone with a positive weight)
            weight = _positive(f"class_weight[{label!r}]", weight, allow_zero=True)
            match = np.flatnonzero(classes == label)
            if match.size == 0:
                raise ValueError(f"class_weight names label {label!r}, which is not in y "
                                 f"(labels: {classes.tolist()})")
            with np.errstate(over="ignore"):     # checked below
                hi[y == classes[match[0]]] *= weight
    if sample_weight is not None:
        with np.errstate(over="ignore"):
            hi = hi * check_sample_weight(sample_weight, y.size)
    if not np.all(np.isfinite(hi)):
        raise ValueError("C times class_weight and sample_weight overflows float64 for "
                         "some samples; use smaller values")
    if not np.any(hi > 0):
        raise ValueError("C times class_weight and sample_weight is zero for every sample "
                         "(underflow, or every weight zero): nothing to train")
    weighing = [label for label in classes.tolist() if np.any(hi[y == label] > 0)]
    if len(weighing) < 2:
        # every alpha of the other classes is 0: a constant model, which
        # scikit-learn's SVC refuses as well
        raise ValueError(f"class_weight and sample_weight leave only class {weighing} with "
                         "a positive weight: nothing to separate it from")
    return hi


def check_n_jobs(n_jobs):
    """None or a nonzero integer, as joblib takes it (checked whether or
    not there is parallel work: loky raised OverflowError on a huge one)."""
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                               or n_jobs == 0 or abs(n_jobs) > INT_MAX):
        raise ValueError(f"n_jobs must be None or a nonzero integer (as joblib), got {n_jobs!r}")
    return n_jobs


def check_flag(value, name):
    """A bool (numpy's, or 0/1 as LIBSVM's -h): a string such as "False"
    must not switch a setting on by its truth value."""
    if not (isinstance(value, (bool, np.bool_))
            or (isinstance(value, numbers.Integral) and value in (0, 1))):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def stopped_short(status, max_iter):
    """Why a solve of ``status`` (``_solver.SolveResult.status``) stopped
    short of its tolerance, for a warning; None if it did not."""
    if status == "max_iter":
        return f"the solver reached max_iter={max_iter} before the tolerance"
    if status == "round_off":
        return ("the solver stopped above the tolerance: no step representable in "
                "double precision lowers the objective, and the gradient's round-off "
                "exceeds tol (raise tol, or scale X down: the round-off grows with the "
                "kernel values and C)")
    return None


def warn_if_not_converged(status, max_iter, category=ConvergenceWarning):
    why = stopped_short(status, max_iter)
    if why is not None:
        warnings.warn(f"{why}; the solution may be inexact", category, stacklevel=3)
