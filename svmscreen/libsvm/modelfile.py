"""LIBSVM model files: write exactly what ``svm_save_model`` writes, read any
file it reads.

Format (svm.cpp 3.37, ``svm_save_model``; always in the C locale)::

    svm_type c_svc|nu_svc|one_class|epsilon_svr|nu_svr
    kernel_type linear|polynomial|rbf|sigmoid|precomputed
    degree %d                        (polynomial)
    gamma %.17g                      (polynomial, rbf, sigmoid)
    coef0 %.17g                      (polynomial, sigmoid)
    nr_class %d
    total_sv %d
    rho %.17g x k(k-1)/2
    label %d x k                     (classification)
    probA %.17g x k(k-1)/2           (probability models)
    probB %.17g x k(k-1)/2           (classification probability models)
    prob_density_marks %.17g x 10    (one-class probability models)
    nr_sv %d x k                     (classification)
    SV
    <k-1 times "%.17g "><"%d:%.8g " per feature>\\n   (precomputed: "0:%d ")

Every SV line ends with a space before the newline.  The header is
formatted by Python's ``%`` (locale-independent, rounding as C's printf),
the SV lines by C's snprintf in the C locale (``_svmlight.format_sv_lines``),
so the bytes are LIBSVM's.

The reader takes the header as LIBSVM does, a stream of whitespace-separated
keywords and values in any order up to ``SV`` (the lengths of rho, label,
probA... come from ``nr_class``, which must come first), then one line per
support vector.  Anything malformed raises ``ValueError`` naming the file
and the line; so does a nan or an infinite gamma, coef0 or support-vector
value, which LIBSVM would read (the data reader, ``load_svmlight_file``,
refuses them too).  rho, probA, probB and the coefficients may be nan or
infinite: svm-train writes them so, as LIBSVM does (nan for a nu-SVC of
conflicting points, rho inf for a one-class -n 1 or a class weight 0).
Writing goes through a temporary file renamed at the end, so a failure
never leaves a partial model file.
"""
import math
import os

import numpy as np
import scipy.sparse as sp

from svmscreen._files import atomic_output
from svmscreen._svmlight import Parser, format_sv_lines
from svmscreen._validation import INT_MAX, check_csr_structure, fits_c_int
from svmscreen.libsvm.svm import (C_SVC, KERNEL_TYPE_TABLE, NU_SVC, POLY, PRECOMPUTED, RBF,
                                  SIGMOID, SVM_TYPE_TABLE, c_number, svm_model,
                                  svm_parameter)

__all__ = ["format_model", "save_model", "load_model"]

N_DENSITY_MARKS = 10
# Support vectors formatted at a time: bounds the C buffer (about 30 bytes
# a number) for models of many classes or wide rows.
_FORMAT_ROWS = 4096


# ------------------------------------------------------------------ writer
def _numbers(keyword, values, fmt):
    return keyword + "".join(" " + c_number(fmt, v) for v in np.asarray(values).tolist()) + "\n"


def format_model(model):
    """The text ``svm_save_model`` writes for ``model``."""
    param = model.param
    kernel_type = int(param.kernel_type)
    k = int(model.nr_class)
    out = ["svm_type %s\n" % SVM_TYPE_TABLE[int(param.svm_type)],
           "kernel_type %s\n" % KERNEL_TYPE_TABLE[kernel_type]]
    if kernel_type == POLY:
        out.append("degree %d\n" % int(param.degree))
    if kernel_type in (POLY, RBF, SIGMOID):
        out.append("gamma %.17g\n" % float(param.gamma))
    if kernel_type in (POLY, SIGMOID):
        out.append("coef0 %.17g\n" % float(param.coef0))
    out.append("nr_class %d\n" % k)
    out.append("total_sv %d\n" % int(model.l))
    n_pairs = k * (k - 1) // 2
    out.append(_numbers("rho", np.asarray(model.rho)[:n_pairs], "%.17g"))
    if model.label is not None:
        out.append(_numbers("label", np.asarray(model.label)[:k], "%d"))
    if model.probA is not None:
        out.append(_numbers("probA", np.asarray(model.probA)[:n_pairs], "%.17g"))
    if model.probB is not None:
        out.append(_numbers("probB", np.asarray(model.probB)[:n_pairs], "%.17g"))
    if model.prob_density_marks is not None:
        out.append(_numbers("prob_density_marks", model.prob_density_marks, "%.17g"))
    if model.nSV is not None:
        out.append(_numbers("nr_sv", np.asarray(model.nSV)[:k], "%d"))
    out.append("SV\n")
    # sv_coef is (k - 1) x l; one class (k = 1, l = 0) has no rows to write
    coef = np.asarray(model.sv_coef, dtype=np.float64).reshape(max(k - 1, 0), int(model.l)).T
    SV = model.SV
    # format_sv_lines reads indptr and the entries of rows 0 to l unchecked:
    # a hand-built SV of fewer rows or with a malformed indptr wrote lines
    # read past its arrays (garbage, or a segfault)
    if not (sp.issparse(SV) and SV.format == "csr"):
        raise TypeError(f"model.SV must be a scipy CSR matrix, got {type(SV).__name__}")
    if SV.indptr.shape[0] - 1 < int(model.l):
        raise ValueError(f"model.SV has {SV.indptr.shape[0] - 1} rows, fewer than model.l = "
                         f"{int(model.l)} support vectors")
    check_csr_structure(SV, "model.SV")
    if kernel_type == PRECOMPUTED:
        out.extend(_precomputed_sv_lines(coef, SV, int(model.l)))
        return "".join(out)
    # formatted in C: "%d:%.8g " % entry and "%.17g " % coefficient in
    # Python took an a9a model (2 classes) 2.1 times libsvm's svm_save_model
    coef = np.ascontiguousarray(coef)
    data = np.ascontiguousarray(SV.data, dtype=np.float64)
    indices = np.ascontiguousarray(SV.indices, dtype=np.int64)
    indptr = np.ascontiguousarray(SV.indptr, dtype=np.int64)
    for start in range(0, int(model.l), _FORMAT_ROWS):
        stop = min(start + _FORMAT_ROWS, int(model.l))
        out.append(format_sv_lines(coef, data, indices, indptr, start, stop).decode("ascii"))
    return "".join(out)


def _precomputed_sv_lines(coef, SV, l):
    """The SV lines of a precomputed kernel's model, "0:%d " of the serial
    (svm.cpp's (int)value) after the coefficients.  In Python: one entry a
    line, and Python's int of a serial past INT_MAX, which C's %d cannot
    write, stays as before."""
    if np.any(np.isnan(coef) & np.signbit(coef)):
        # printf writes a nan with its sign bit (x86's 0 * inf: a nu-SVC
        # pair with r = 0) as "-nan"; Python's % drops the sign
        coef_text = ["".join(c_number("%.17g", v) + " " for v in row) for row in coef.tolist()]
    else:
        coef_format = "%.17g " * coef.shape[1]
        coef_text = [coef_format % tuple(row) for row in coef.tolist()]
    indptr = SV.indptr
    first = [float(SV.data[indptr[r]]) if indptr[r + 1] > indptr[r] and
             SV.indices[indptr[r]] == 0 else 0.0 for r in range(l)]
    return [coef_text[r] + "0:%d \n" % int(first[r]) for r in range(l)]


def save_model(path, model):
    """Write ``model`` to ``path`` as ``svm_save_model`` (atomically: a
    temporary file in the same directory, renamed when complete)."""
    text = format_model(model).encode("ascii")
    with atomic_output(path) as handle:
        handle.write(text)


# ------------------------------------------------------------------ reader
class _Tokens:
    """Whitespace tokens of the header, with their line numbers."""

    def __init__(self, lines, name):
        self.lines = lines
        self.name = name
        self.line = 0            # index of the current line
        self.pending = []
        self.last_line = 0

    def error(self, line_number, message):
        return ValueError(f"{self.name}: line {line_number}: {message}")

    def next(self, what):
        while not self.pending:
            if self.line >= len(self.lines):
                raise self.error(max(len(self.lines), 1),
                                 f"the file ends before {what} (is the 'SV' line missing, "
                                 "or the file truncated?)")
            self.pending = self.lines[self.line].split()[::-1]
            self.line += 1
        self.last_line = self.line
        return self.pending.pop(), self.line


def _c_float(token):
    """float(token), refusing the digits grouped by underscores that only
    Python reads: '1_5' is 15 to float(), where LIBSVM's fscanf reads 1 and
    stops at '_5' (its strtod of an SV line too)."""
    if "_" in token:
        raise ValueError(f"{token!r} is not a number")
    return float(token)


def _c_int(token):
    """int(token), refusing underscores as ``_c_float``."""
    if "_" in token:
        raise ValueError(f"{token!r} is not an integer")
    return int(token)


def _finite_float(token):
    """float(token), refusing nan and inf (gamma, coef0 and the support
    vectors' values, which no training writes so: data files refuse them)."""
    value = _c_float(token)
    if not math.isfinite(value):
        raise ValueError(f"{token!r} is not finite")
    return value


def _read_values(tokens, keyword, count, convert, detail):
    values = []
    for _ in range(count):
        token, line = tokens.next(f"the {count} values of '{keyword}'")
        try:
            value = convert(token)
            if convert is _c_int and not fits_c_int(value):
                raise ValueError        # a C int in svm.h
        except ValueError:
            raise tokens.error(line, f"'{keyword}' expects {count} {detail}, got {token!r} "
                               f"after {len(values)}") from None
        values.append(value)
    return values


def _read_header(tokens):
    header = {}
    lines_of = {}
    while True:
        token, line = tokens.next("the 'SV' line")
        if token == "SV":
            tokens.pending = []      # the rest of the SV line is skipped, as LIBSVM
            return header, lines_of, line
        lines_of[token] = line
        if token in ("svm_type", "kernel_type"):
            table = SVM_TYPE_TABLE if token == "svm_type" else KERNEL_TYPE_TABLE
            value, vline = tokens.next(f"the value of '{token}'")
            if value not in table:
                what = "svm type" if token == "svm_type" else "kernel function"
                raise tokens.error(vline, f"unknown {what} {value!r} (one of {', '.join(table)})")
            header[token] = table.index(value)
        elif token in ("degree", "nr_class", "total_sv"):
            header[token] = _read_values(tokens, token, 1, _c_int, "integer")[0]
            if token == "nr_class" and header[token] < 1:
                raise tokens.error(line, f"nr_class must be >= 1, got {header[token]}")
            if token == "total_sv" and header[token] < 0:
                raise tokens.error(line, f"total_sv must be >= 0, got {header[token]}")
            if token == "nr_class":
                for dependent in ("rho", "label", "probA", "probB", "nr_sv"):
                    if dependent in header and header.get("_k_" + dependent) != header[token]:
                        raise tokens.error(line, f"nr_class {header[token]} disagrees with "
                                           f"'{dependent}' read before it")
        elif token in ("gamma", "coef0"):
            header[token] = _read_values(tokens, token, 1, _finite_float, "finite number")[0]
        elif token in ("rho", "label", "probA", "probB", "nr_sv", "prob_density_marks"):
            if token == "prob_density_marks":
                count = N_DENSITY_MARKS
            else:
                if "nr_class" not in header:
                    raise tokens.error(line, f"'{token}' comes before 'nr_class', which gives "
                                       "its length")
                k = header["nr_class"]
                count = k if token in ("label", "nr_sv") else k * (k - 1) // 2
                header["_k_" + token] = k
            integer = token in ("label", "nr_sv")
            detail = ("integers" if integer else "numbers") + (
                f" (nr_class {header['nr_class']})" if token != "prob_density_marks" else "")
            # rho, probA, probB can be nan or inf: svm-train writes them so,
            # as LIBSVM (see the module's docstring), and svm-predict reads them
            header[token] = _read_values(tokens, token, count,
                                         _c_int if integer else _c_float, detail)
        else:
            raise tokens.error(line, f"unknown text {token!r} in model file")


def load_model(path):
    """Read a LIBSVM model file into an ``svm_model``.

    Raises
    ------
    ValueError
        If the file is malformed; the message names the file and line.
    OSError
        If it cannot be read.
    """
    name = os.fsdecode(os.fspath(path))
    with open(path, "rb") as handle:
        text = handle.read().decode("latin-1")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tokens = _Tokens(lines, name)
    header, lines_of, sv_line = _read_header(tokens)

    def missing(keyword):
        return tokens.error(sv_line, f"the header lacks '{keyword}' (before the 'SV' line)")

    for keyword in ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"):
        if keyword not in header:
            raise missing(keyword)
    svm_type = header["svm_type"]
    kernel_type = header["kernel_type"]
    k = header["nr_class"]
    total_sv = header["total_sv"]
    needs = {POLY: ("degree", "gamma", "coef0"), RBF: ("gamma",), SIGMOID: ("gamma", "coef0")}
    for keyword in needs.get(kernel_type, ()):
        if keyword not in header:
            raise missing(keyword)
    classification = svm_type in (C_SVC, NU_SVC)
    if classification:
        for keyword in ("label", "nr_sv"):
            if keyword not in header:
                raise missing(keyword)
        if any(v < 0 for v in header["nr_sv"]) or sum(header["nr_sv"]) != total_sv:
            raise tokens.error(lines_of["nr_sv"], f"nr_sv {header['nr_sv']} does not add up "
                               f"to total_sv {total_sv}")
    elif k != 2:
        raise tokens.error(lines_of["nr_class"], f"nr_class must be 2 for "
                           f"{SVM_TYPE_TABLE[svm_type]} models, got {k}")

    m = k - 1
    sv = None
    if m >= 1 and kernel_type != PRECOMPUTED:
        sv = _sv_lines_in_c(lines, sv_line, total_sv, m, name)
    if sv is None:
        sv = _read_sv_lines(lines, sv_line, total_sv, m, kernel_type, tokens)
    coefs, values, indices, indptr = sv

    model = svm_model()
    param = svm_parameter()
    param.svm_type = svm_type
    param.kernel_type = kernel_type
    param.degree = int(header.get("degree", param.degree))
    param.gamma = float(header.get("gamma", 0.0))
    param.coef0 = float(header.get("coef0", 0.0))
    model.param = param
    model.nr_class = k
    model.l = total_sv
    width = int(np.max(indices)) + 1 if len(indices) else 0
    model.SV = sp.csr_matrix((np.asarray(values, dtype=np.float64),
                              np.asarray(indices, dtype=np.int32),
                              np.asarray(indptr, dtype=np.int64)), shape=(total_sv, width))
    model.SV.has_sorted_indices = True
    model.sv_coef = np.asarray(coefs, dtype=np.float64).reshape(total_sv, m).T.copy()
    model.rho = np.asarray(header["rho"], dtype=np.float64)
    for keyword in ("probA", "probB", "prob_density_marks"):
        if keyword in header:
            setattr(model, keyword, np.asarray(header[keyword], dtype=np.float64))
    if "label" in header:
        model.label = np.asarray(header["label"], dtype=np.int64)
    if "nr_sv" in header:
        model.nSV = np.asarray(header["nr_sv"], dtype=np.int64)
    return model


def _sv_lines_in_c(lines, sv_line, total_sv, m, name):
    """(coefs, values, indices, indptr) of the SV lines, read by the data
    files' C parser, whose lines they are with the m = nr_class - 1
    coefficients as leading labels: read a token at a time in Python, a
    160 kB a9a model loaded 7 times slower than LIBSVM's svm_load_model, a
    2.8 MB letter.scale one (26 classes) 6 times.  None where the two
    readers could differ (a comment, a hexadecimal number, which strtod
    reads, a blank line, nan or inf, a malformed line, another count of
    lines): ``_read_sv_lines`` then reads them, and names the line of any
    error."""
    text = "\n".join(lines[sv_line:]).encode("latin-1")
    if any(mark in text for mark in (b"#", b"x", b"X")):
        return None
    parser = Parser(name, leading=m)
    try:
        parser.feed(text, len(text))
    except ValueError:
        return None
    coefs, values, indices, indptr, _ = parser.finish()
    if indptr.shape[0] - 1 != total_sv:
        return None
    return coefs, values, indices, indptr


def _read_sv_lines(lines, sv_line, total_sv, m, kernel_type, tokens):
    """(coefs, values, indices, indptr) of the SV lines, a line at a time
    (a ValueError naming the line of the first malformed one)."""
    base = 0 if kernel_type == PRECOMPUTED else 1
    coefs = []
    indptr = [0]
    indices = []
    values = []
    count = 0
    line_number = sv_line
    for line_index in range(sv_line, len(lines)):
        line_number = line_index + 1
        parts = lines[line_index].split()
        if not parts:
            continue
        if count == total_sv:
            raise tokens.error(line_number, f"more support vectors than total_sv {total_sv}")
        count += 1
        head = parts[:m]
        if len(head) < m or any(":" in token for token in head):
            found = sum(1 for token in head if ":" not in token)
            raise tokens.error(line_number, f"expected {m} coefficients (nr_class - 1) before "
                               f"the features, found {found}")
        try:
            # nan and inf are read, as rho's (the module's docstring)
            coefs.append([_c_float(token) for token in head])
        except ValueError:
            bad = next(t for t in head if not _is_float(t))
            raise tokens.error(line_number, f"bad coefficient {bad!r}") from None
        previous = base - 1
        for token in parts[m:]:
            index_text, sep, value_text = token.partition(":")
            try:
                if not sep:
                    raise ValueError
                index = _c_int(index_text)
                value = _finite_float(value_text)
                if index > INT_MAX:
                    raise ValueError    # svm_node.index is a C int
            except ValueError:
                raise tokens.error(line_number, f"bad feature {token!r} (expected "
                                   "index:value, the value finite)") from None
            if index <= previous:
                raise tokens.error(line_number, f"feature index {index} is not greater than "
                                   f"the previous one ({previous}) or is below {base}")
            previous = index
            indices.append(index - base)
            values.append(value)
        first = indptr[-1]
        if kernel_type == PRECOMPUTED and not (
                len(indices) > first and indices[first] == 0 and values[first] >= 1):
            # svm.cpp's kernel reads the test row's node at position
            # (int)serial: one below 1 or none was never trained (svm-train
            # refuses it) and points before the row (0:-1 read its last column)
            raise tokens.error(line_number, "a precomputed kernel's support vector needs "
                               "'0:serial' first, with serial >= 1")
        indptr.append(len(indices))
    if count < total_sv:
        raise tokens.error(line_number + 1 if lines else 1,
                           f"the file ends after {count} support vectors, but total_sv is "
                           f"{total_sv} (truncated file?)")
    return coefs, values, indices, indptr


def _is_float(token):
    try:
        _c_float(token)
    except ValueError:
        return False
    return True
