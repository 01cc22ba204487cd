"""LIBSVM's data structures, as ``libsvm.svm`` exposes them: ``svm_parameter``
(option parsing), ``svm_problem`` (training data), ``svm_model`` (a trained or
loaded model with its getters), ``svm_node`` and ``gen_svm_nodearray`` (one
feature vector), the ``svm_forms``/``kernel_names`` enums and
``check_parameter`` (LIBSVM's ``svm_check_parameter``).

Data are held as CSR matrices in LIBSVM's *index space*: column ``c`` is
feature index ``c + 1``, or ``c`` for a precomputed kernel, whose column 0 is
the sample's serial number (``0:serial``).  Every input form libsvm's
binding accepts (lists of dicts, lists of lists, 1-D rows, (indices, values)
pairs, 2-D ndarrays, scipy sparse matrices) is converted here, once, by
``as_index_csr``; the caller's objects are never modified.
"""
import copy
import math
import numbers
import sys
from enum import IntEnum

import numpy as np
import scipy.sparse as sp

from svmscreen._validation import INT_MAX, check_csr_structure, check_real_dtype, fits_c_int

__all__ = ["svm_problem", "svm_parameter", "svm_model", "svm_forms", "kernel_names",
           "print_null", "toPyModel", "gen_svm_nodearray", "svm_node", "C_SVC", "NU_SVC",
           "ONE_CLASS", "EPSILON_SVR", "NU_SVR", "LINEAR", "POLY", "RBF", "SIGMOID",
           "PRECOMPUTED"]


class svm_forms(IntEnum):
    C_SVC = 0
    NU_SVC = 1
    ONE_CLASS = 2
    EPSILON_SVR = 3
    NU_SVR = 4


class kernel_names(IntEnum):
    LINEAR = 0
    POLY = 1
    RBF = 2
    SIGMOID = 3
    PRECOMPUTED = 4


C_SVC, NU_SVC, ONE_CLASS, EPSILON_SVR, NU_SVR = (int(f) for f in svm_forms)
LINEAR, POLY, RBF, SIGMOID, PRECOMPUTED = (int(k) for k in kernel_names)

# Names written in model files (svm.cpp svm_type_table / kernel_type_table).
SVM_TYPE_TABLE = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
KERNEL_TYPE_TABLE = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
# The kernel names of svmscreen._kernels, by LIBSVM code.
KERNEL_CODE_NAMES = ("linear", "poly", "rbf", "sigmoid", "precomputed")


def c_number(fmt, value):
    """``fmt % value`` as C's printf writes it: a NaN with its sign bit
    set (x86's 0/0, e.g. nu-SVC's rho / r at r = 0) is "-nan" there and
    "nan" in Python."""
    text = fmt % value
    if value != value and math.copysign(1.0, value) < 0:
        text = text.replace("nan", "-nan")
    return text


def print_null(s):
    """An output function that prints nothing (what ``-q`` installs)."""
    return None


def print_stdout(s):
    """LIBSVM's default output: the text as is, flushed."""
    sys.stdout.write(s)
    sys.stdout.flush()


class OptionError(ValueError):
    """An option string LIBSVM would refuse."""


# ------------------------------------------------------------- parameters
def _option_value(argv, i, option, convert):
    if i >= len(argv):
        raise OptionError(f"option {option} needs a value")
    text = argv[i]
    try:
        value = convert(text)
    except (TypeError, ValueError):
        kind = "an integer" if convert is int else "a number"
        raise OptionError(f"option {option} needs {kind}, got {text!r}") from None
    if convert is int and not fits_c_int(value):
        # the field is a C int (svm.h)
        raise OptionError(f"option {option} needs an integer that fits in a C int, "
                          f"got {text!r}")
    return value


class svm_parameter:
    """Training parameters, parsed from LIBSVM's option string.

    Parameters
    ----------
    options : str or list of str, optional
        ``'-s 0 -t 2 -c 4 -g 0.5 -b 1 -w1 2 -v 5 -q'`` etc.; see
        ``svm_train``.  Unknown options raise ``ValueError("Wrong options")``
        as libsvm's binding does (the message names the option).

    Attributes
    ----------
    svm_type, kernel_type, degree, gamma, coef0, cache_size, eps, C, nu, p,
    shrinking, probability : as LIBSVM's ``struct svm_parameter``
    nr_weight, weight_label, weight : the ``-wi`` options (lists)
    cross_validation, nr_fold : the ``-v`` option
    print_func : callable, the output hook (``print_null`` under ``-q``)
    """

    _names = ["svm_type", "kernel_type", "degree", "gamma", "coef0", "cache_size", "eps",
              "C", "nr_weight", "weight_label", "weight", "nu", "p", "shrinking",
              "probability"]

    def __init__(self, options=None):
        if options is None:
            options = ""
        self.parse_options(options)

    def __str__(self):
        attrs = list(self._names) + ["cross_validation", "nr_fold"]
        return "\n".join(f" {a}: {getattr(self, a)}" for a in attrs).strip()

    def set_to_default_values(self):
        """LIBSVM's defaults (svm-train.c)."""
        self.svm_type = C_SVC
        self.kernel_type = RBF
        self.degree = 3
        self.gamma = 0.0        # 0 means 1/num_features
        self.coef0 = 0.0
        self.nu = 0.5
        self.cache_size = 100.0
        self.C = 1.0
        self.eps = 0.001
        self.p = 0.1
        self.shrinking = 1
        self.probability = 0
        self.nr_weight = 0
        self.weight_label = []
        self.weight = []
        self.cross_validation = False
        self.nr_fold = 0
        self.print_func = print_stdout

    def parse_options(self, options):
        """Parse an option string or list (resets every field first)."""
        if isinstance(options, (list, tuple)):
            argv = [str(a) for a in options]
        elif isinstance(options, str):
            argv = options.split()
        else:
            raise TypeError("arg 1 should be a list or a str.")
        self.set_to_default_values()
        setters = {
            "-s": ("svm_type", int), "-t": ("kernel_type", int), "-d": ("degree", int),
            "-g": ("gamma", float), "-r": ("coef0", float), "-n": ("nu", float),
            "-m": ("cache_size", float), "-c": ("C", float), "-e": ("eps", float),
            "-p": ("p", float), "-h": ("shrinking", int), "-b": ("probability", int),
        }
        i = 0
        while i < len(argv):
            option = argv[i]
            if option in setters:
                name, convert = setters[option]
                i += 1
                setattr(self, name, _option_value(argv, i, option, convert))
            elif option == "-q":
                self.print_func = print_null
            elif option == "-v":
                i += 1
                self.cross_validation = True
                self.nr_fold = _option_value(argv, i, option, int)
                if self.nr_fold < 2:
                    raise OptionError("n-fold cross validation: n must >= 2")
            elif option.startswith("-w"):
                try:
                    # "-w 2": svm-train's atoi("") reads label 0 and a weight
                    # of 2; libsvm's Python binding raises
                    label = int(option[2:])
                except ValueError:
                    if option == "-w":
                        raise OptionError("Wrong options: '-w' needs its class label "
                                          "attached: -wi weight, as in -w1 2") from None
                    raise OptionError(f"Wrong options: {option!r}: the class label of -wi "
                                      "must be an integer") from None
                i += 1
                self.weight_label.append(label)
                self.weight.append(_option_value(argv, i, option, float))
                self.nr_weight += 1
            else:
                raise OptionError(f"Wrong options: unknown option {option!r}")
            i += 1

    def copy(self):
        return copy.deepcopy(self)


def check_parameter(prob, param):
    """LIBSVM's ``svm_check_parameter``: None, or the message of the first
    problem found (LIBSVM's wording), then svmscreen's own limits."""
    svm_type = param.svm_type
    if svm_type not in (C_SVC, NU_SVC, ONE_CLASS, EPSILON_SVR, NU_SVR):
        return "unknown svm type"
    kernel_type = param.kernel_type
    if kernel_type not in (LINEAR, POLY, RBF, SIGMOID, PRECOMPUTED):
        return "unknown kernel type"
    for name in ("gamma", "coef0", "cache_size", "eps", "C", "nu", "p"):
        value = getattr(param, name)
        if not isinstance(value, numbers.Real) or not np.isfinite(value):
            return f"{name} is not a finite number"
    # svm.h's int degree: libsvm's ctypes field refuses 2.5 or nan, which the
    # kernel had truncated (2.5 trained degree 2) or failed on unnamed
    degree = param.degree
    if not isinstance(degree, numbers.Integral) or not fits_c_int(degree):
        return f"degree must be an integer (a C int), got {degree!r}"
    if kernel_type in (POLY, RBF, SIGMOID) and param.gamma < 0:
        return "gamma < 0"
    if kernel_type == POLY and param.degree < 0:
        return "degree of polynomial kernel < 0"
    if param.cache_size <= 0:
        return "cache_size <= 0"
    if param.eps <= 0:
        return "eps <= 0"
    if svm_type in (C_SVC, EPSILON_SVR, NU_SVR) and param.C <= 0:
        return "C <= 0"
    if svm_type in (NU_SVC, ONE_CLASS, NU_SVR) and (param.nu <= 0 or param.nu > 1):
        return "nu <= 0 or nu > 1"
    if svm_type == EPSILON_SVR and param.p < 0:
        return "p < 0"
    if param.shrinking not in (0, 1):
        return "shrinking != 0 and shrinking != 1"
    if param.probability not in (0, 1):
        return "probability != 0 and probability != 1"
    for label, weight in zip(param.weight_label, param.weight):
        if not np.isfinite(weight) or weight < 0:
            return f"weight of class {label} must be a finite number >= 0"
    if svm_type == NU_SVC:
        # every pair of classes (labels cast with (int), as svm.cpp)
        _, counts = np.unique(np.trunc(np.asarray(prob.y, dtype=np.float64)),
                              return_counts=True)
        for i, n1 in enumerate(counts):
            for n2 in counts[i + 1:]:
                if param.nu * (n1 + n2) / 2 > min(n1, n2):
                    return "specified nu is infeasible"
    return None


# ---------------------------------------------------------------- problems
def _as_int_index(key, where):
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (numbers.Integral, np.integer)):
        raise TypeError(f"{where}: feature index {key!r} is not an integer")
    return int(key)


def _rows_to_csr(x, isKernel, name):
    """A list/tuple of rows (dict, list/tuple, 1-D ndarray, or an (indices,
    values) pair of ndarrays) to an index-space CSR matrix and LIBSVM's n
    (the largest index seen).  Zeros are dropped except for precomputed
    kernels and (indices, values) pairs, as libsvm's gen_svm_nodearray."""
    base = 0 if isKernel else 1
    indptr = [0]
    indices = []
    data = []
    max_index = 0
    for r, xi in enumerate(x):
        where = f"{name}[{r}]"
        if (isinstance(xi, tuple) and len(xi) == 2 and isinstance(xi[0], np.ndarray)
                and isinstance(xi[1], np.ndarray)):
            idx = np.asarray(xi[0]).astype(np.int64) + base
            val = np.asarray(xi[1], dtype=np.float64)
            if idx.shape != val.shape or idx.ndim != 1:
                raise ValueError(f"{where}: indices and values must be 1-D of equal length")
            order = np.argsort(idx, kind="stable")
            row_idx = idx[order].tolist()
            row_val = val[order].tolist()
        elif isinstance(xi, dict):
            keys = sorted(_as_int_index(k, where) for k in xi)
            if isKernel:
                row_idx = keys
            else:
                row_idx = [k for k in keys if xi[k] != 0]
            row_val = [float(xi[k]) for k in row_idx]
        elif isinstance(xi, (list, tuple, np.ndarray)):
            if isinstance(xi, np.ndarray) and xi.dtype != object:
                check_real_dtype(xi.dtype, where)
            try:
                row = np.asarray(xi, dtype=np.float64)
            except (TypeError, ValueError) as error:
                # a list (or object array) holding a string or a complex
                raise type(error)(f"{where}: {error}") from None
            if row.ndim != 1:
                raise ValueError(f"{where}: a row must be 1-D, got shape {row.shape}")
            if isKernel:
                nz = np.arange(row.shape[0])
            else:
                nz = np.flatnonzero(row)
            row_idx = (nz + base).tolist()
            row_val = row[nz].tolist()
        else:
            raise TypeError(f"{where}: xi should be a dictionary, list, tuple, 1-d numpy "
                            f"array, or tuple of (index, data), got {type(xi).__name__}")
        previous = -1
        for k in row_idx:
            if k < base:
                # libsvm's svm_problem(y, x) keeps a dict's 0: key without
                # isKernel, so a script reading a kernel file that way trains
                # there with -t 4; here it must say isKernel=True
                raise ValueError(f"{where}: feature index {k} must be >= {base}"
                                 + (" (index 0, the serial number, is only for precomputed "
                                    "kernels: train with -t 4, or build "
                                    "svm_problem(y, x, isKernel=True))" if k == 0 else ""))
            if k <= previous:
                raise ValueError(f"{where}: duplicate feature index {k}")
            previous = k
        if row_idx:
            max_index = max(max_index, row_idx[-1])
        indices.extend(row_idx)
        data.extend(row_val)
        indptr.append(len(indices))
    n_rows = len(indptr) - 1
    cols = np.asarray(indices, dtype=np.int64) - base
    width = max(max_index + 1 - base, 0)
    if width > INT_MAX:
        raise ValueError(f"{name}: feature index {max_index} is too large")
    X = sp.csr_matrix((np.asarray(data, dtype=np.float64), cols.astype(np.int32),
                       np.asarray(indptr, dtype=np.int64)), shape=(n_rows, width))
    return X, max_index


def as_index_csr(x, isKernel=False, name="x"):
    """Any of libsvm's accepted forms of x to ``(X, n)``: X a CSR matrix
    (float64, int32 sorted indices, a copy) in index space, n the largest
    feature index as libsvm's binding counts it.  Values must be finite."""
    if sp.issparse(x):
        check_real_dtype(x.dtype, name)
        if x.ndim != 2:
            # a 1-D sparse array (scipy's coo_array, dok_array) has no
            # column count
            raise ValueError(f"{name} must be 2-D when given as a sparse array, got shape "
                             f"{x.shape}")
        check_csr_structure(x, name)
        X = sp.csr_matrix(x, dtype=np.float64, copy=True)
        X.sum_duplicates()          # also sorts the indices (of our copy)
        n = X.shape[1]              # as libsvm's csr_to_problem
        if n > INT_MAX:
            # libsvm's feature indices (column + 1) are C ints; the matrix's
            # width beyond its last used column carries nothing but n
            last = int(X.indices.max()) if X.nnz else -1
            if last + 1 > INT_MAX:
                raise ValueError(f"{name}: feature index {last + 1} is beyond a C int")
            X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr),
                              shape=(X.shape[0], last + 1))
    elif isinstance(x, np.ndarray) and x.dtype == object:
        # libsvm's binding reads an object array row by row, as a list: rows
        # of numbers (2-D), or of dicts / lists / (indices, values) (1-D)
        if x.ndim not in (1, 2):
            raise ValueError(f"{name} must be 1-D or 2-D when given as an object array, "
                             f"got shape {x.shape}")
        X, n = _rows_to_csr(list(x), isKernel, name)
    elif isinstance(x, np.ndarray):
        if x.ndim != 2:
            raise ValueError(f"{name} must be 2-D when given as an ndarray, got shape {x.shape}")
        check_real_dtype(x.dtype, name)
        dense = np.ascontiguousarray(x, dtype=np.float64)
        rows, cols = dense.shape
        if isKernel:
            # Every entry is stored, zeros included; columns start at index 0.
            X = sp.csr_matrix((dense.ravel().copy(), np.tile(np.arange(cols), rows),
                               np.arange(0, rows * cols + 1, max(cols, 1))[:rows + 1]
                               if cols else np.zeros(rows + 1, dtype=np.int64)),
                              shape=(rows, cols))
            n = cols - 1 if rows and cols else 0
        else:
            X = sp.csr_matrix(dense)                    # drops zeros, as nonzero()
            used = np.flatnonzero((dense != 0).any(axis=0))
            n = int(used[-1]) + 1 if used.size else 0
    elif isinstance(x, (list, tuple)):
        X, n = _rows_to_csr(x, isKernel, name)
    else:
        raise TypeError(f"type of {name}: {type(x)} is not supported!")
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32 if X.nnz <= INT_MAX else np.int64, copy=False)
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name} contains NaN or infinity")
    X.has_sorted_indices = True
    return X, int(n)


def as_labels(y, name="y", finite=True):
    """y as a float64 array (a list, tuple or ndarray, as libsvm accepts).
    ``finite``: refuse NaN and infinity (training labels and targets);
    svm_predict's y only scores the predictions, and libsvm's scores NaN
    (unknown labels) as ACC 0, MSE and SCC nan."""
    if not isinstance(y, (list, tuple, np.ndarray)):
        raise TypeError(f"type of {name}: {type(y)} is not supported!")
    if isinstance(y, np.ndarray) and y.dtype.kind == "c":
        # only complex: libsvm's binding also reads object and string arrays
        # of numbers
        check_real_dtype(y.dtype, name)
    arr = np.array(y, dtype=np.float64).ravel() if len(y) else np.zeros(0)
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


class svm_node:
    """One (index, value) feature, as libsvm's ``svm_node``."""

    def __init__(self, index=-1, value=0):
        self.index, self.value = index, value

    def __str__(self):
        return "%d:%g" % (self.index, self.value)


def gen_svm_nodearray(xi, feature_max=None, isKernel=False):
    """A feature vector as ``{index: value}`` (what svm_predict accepts) and
    its largest index, from the forms libsvm's ``gen_svm_nodearray`` takes;
    indices above ``feature_max`` are dropped."""
    X, _ = as_index_csr([xi], isKernel, "xi")
    base = 0 if isKernel else 1
    index = (X.indices.astype(np.int64) + base).tolist()
    row = dict(zip(index, X.data.tolist()))
    if feature_max:
        row = {k: v for k, v in row.items() if k <= feature_max}
    return row, (max(row) if row else 0)


class svm_problem:
    """Training data: labels y and instances x.

    Parameters
    ----------
    y : list, tuple or ndarray of l labels (or targets)
    x : list/tuple of l rows (dict ``{index: value}``, list, 1-D ndarray,
        or ``(indices, values)``), an (l, n) ndarray, or a scipy sparse matrix
        (column j is feature j + 1)
    isKernel : bool
        x holds a precomputed kernel: row i is ``0:serial 1:K(xi,x1) ...``
        (index 0 first, ndarray/list columns start at index 0).

    Attributes
    ----------
    l : int, number of instances
    n : int, the largest feature index (LIBSVM's default gamma is 1/n)
    y : ndarray of float64
    X : CSR matrix in index space (see the module docstring)
    """

    def __init__(self, y, x, isKernel=False):
        labels = as_labels(y)
        if not isinstance(x, (list, tuple, np.ndarray)) and not sp.issparse(x):
            raise TypeError(f"type of x: {type(x)} is not supported!")
        n_rows = x.shape[0] if (sp.issparse(x) or isinstance(x, np.ndarray)) else len(x)
        if labels.shape[0] != n_rows:
            raise ValueError("len(y) != len(x)")
        X, n = as_index_csr(x, isKernel, "x")
        self._set(labels, X, n, bool(isKernel))

    def _set(self, y, X, n, isKernel):
        self.y = y
        self.X = X
        self.n = n
        self.l = y.shape[0]
        self.isKernel = isKernel

    @classmethod
    def from_csr(cls, y, X, n, isKernel=False):
        """Wrap validated pieces (labels, index-space CSR, n) without copying."""
        prob = cls.__new__(cls)
        prob._set(y, X, n, isKernel)
        return prob

    def subset(self, rows):
        """The problem restricted to ``rows`` (in that order)."""
        rows = np.asarray(rows, dtype=np.intp)
        return svm_problem.from_csr(self.y[rows], self.X[rows], self.n, self.isKernel)


# ------------------------------------------------------------------ models
class svm_model:
    """A LIBSVM model: trained by ``svm_train`` or read by ``svm_load_model``.

    Attributes (LIBSVM's ``struct svm_model``)
    ----------
    param : svm_parameter (svm_type, kernel_type, degree, gamma, coef0 matter)
    nr_class : int, number of classes (2 for regression and one-class)
    l : int, total number of support vectors
    SV : CSR matrix (l rows) of support vectors in index space; for a
        precomputed kernel, column 0 holds each SV's serial number
    sv_coef : ndarray (nr_class - 1, l), LIBSVM's coefficient layout
    rho : ndarray (nr_class (nr_class - 1) / 2,)
    probA, probB : ndarray or None, pairwise Platt parameters
    prob_density_marks : ndarray (10,) or None (one-class probabilities)
    sv_indices : ndarray of 1-based training indices, or None (loaded models)
    label : ndarray of int or None (classification only)
    nSV : ndarray of int or None, support vectors per class
    """

    def __init__(self):
        self.param = svm_parameter()
        self.nr_class = 0
        self.l = 0
        self.SV = sp.csr_matrix((0, 0))
        self.sv_coef = np.zeros((0, 0))
        self.rho = np.zeros(0)
        self.probA = None
        self.probB = None
        self.prob_density_marks = None
        self.sv_indices = None
        self.label = None
        self.nSV = None
        self._predict_cache = None

    def __getstate__(self):
        # The prediction layout (model._sv_layout) is derived from SV and
        # rebuilt on demand: a pickle (or copy.copy) taken after a predict
        # carried the dense copy of the SVs, up to 256 MB.
        state = self.__dict__.copy()
        state["_predict_cache"] = None
        return state

    def __repr__(self):
        return (f"svm_model(svm_type={SVM_TYPE_TABLE[self.param.svm_type]!r}, "
                f"kernel_type={KERNEL_TYPE_TABLE[self.param.kernel_type]!r}, "
                f"nr_class={self.nr_class}, total_sv={self.l})")

    def get_svm_type(self):
        return int(self.param.svm_type)

    def get_nr_class(self):
        return int(self.nr_class)

    def get_svr_probability(self):
        """The Laplace scale of an SVR probability model, else 0 (LIBSVM
        prints a message and returns 0)."""
        if self.param.svm_type in (EPSILON_SVR, NU_SVR) and self.probA is not None:
            return float(self.probA[0])
        # svm_get_svr_probability writes it to stderr
        sys.stderr.write("Model doesn't contain information for SVR probability inference\n")
        return 0.0

    def get_labels(self):
        """The class labels; nr_class zeros for a model without labels
        (one-class and regression), as LIBSVM's svm_get_labels leaves its
        output."""
        if self.label is None:
            return [0] * int(self.nr_class)
        return [int(v) for v in self.label]

    def get_sv_indices(self):
        """1-based indices of the SVs in the training data (zeros for a
        model read from a file, which does not store them, as LIBSVM)."""
        if self.sv_indices is None:
            return [0] * self.l
        return [int(v) for v in self.sv_indices]

    def get_nr_sv(self):
        return int(self.l)

    def is_probability_model(self):
        svm_type = self.param.svm_type
        return bool(
            (svm_type in (C_SVC, NU_SVC) and self.probA is not None and self.probB is not None)
            or (svm_type in (EPSILON_SVR, NU_SVR) and self.probA is not None)
            or (svm_type == ONE_CLASS and self.prob_density_marks is not None))

    def get_sv_coef(self):
        return [tuple(col) for col in np.asarray(self.sv_coef).T.tolist()]

    def get_SV(self):
        base = 0 if self.param.kernel_type == PRECOMPUTED else 1
        X = self.SV
        out = []
        for r in range(self.l):
            lo, hi = X.indptr[r], X.indptr[r + 1]
            out.append(dict(zip((X.indices[lo:hi] + base).tolist(), X.data[lo:hi].tolist())))
        return out


def toPyModel(model):
    """Identity (libsvm's binding converts a ctypes pointer here)."""
    if model is None:
        raise ValueError("Null pointer")
    return model
