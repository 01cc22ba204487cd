"""Parse and format LIBSVM/svmlight data text, as LIBSVM's ``svm-train``
reads it (svm-train.c, ``read_problem``).

Format (anchors.md §1.5): one row per line, ``<label> <index>:<value> ...``.

- Indices are 1-based and strictly ascending within a row; index 0 is allowed
  only for precomputed kernels, whose columns keep the file index as-is
  (column 0 holds the serial number).  Otherwise column = file index - 1.
- Labels and values are read as ``strtod`` reads them (``+01e0`` is 1),
  with an exact fast path for short decimals; indices as ``strtol``.  NaN
  and infinite labels or values are rejected.
- A row may have no features, but a line with no label (empty, blank, or only
  a comment) is an error, as in LIBSVM.
- Everything from ``#`` to the end of the line is a comment.  Spaces, tabs,
  ``\\r``, ``\\v`` and ``\\f`` separate tokens, so CRLF files read fine.
- ``qid:`` (SVMlight query ids) is not supported and is an error.

Every error is a ``ValueError`` naming the file and the 1-based line.

What this module trusts: ``Parser.feed`` receives a ``bytes`` object whose
first ``n`` bytes end with a newline or are the whole object (the caller in
``datasets.py`` splits its input at newlines); ``format_rows`` receives CSR
arrays already validated by ``datasets.py`` (int64 ``indices``/``indptr``,
float64 finite ``data``, one ``bytes`` label per row), ``format_sv_lines``
those of an ``svm_model`` (``modelfile.py``).  Numbers outside the
fast path are read with the C library's ``strtod``, so they assume the "C"
``LC_NUMERIC`` locale that Python keeps unless a program changes it.
"""
import numpy as np

cimport numpy as cnp
from libc.errno cimport errno, ERANGE
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport free, realloc, strtod, strtol
from libc.string cimport memchr, memcmp, memcpy
from cpython.pyport cimport PY_SSIZE_T_MAX

cnp.import_array()

cdef extern from "Python.h":
    bytes PyBytes_FromStringAndSize(const char* v, Py_ssize_t n)

# Error codes set by ``parse_block``; ``Parser.feed`` turns them into messages.
cdef enum:
    PARSE_OK = 0
    ERR_NO_LABEL
    ERR_LABEL
    ERR_LABEL_NOT_FINITE
    ERR_QID
    ERR_NO_COLON
    ERR_INDEX
    ERR_INDEX_TOO_SMALL
    ERR_INDEX_TOO_LARGE
    ERR_INDEX_ORDER
    ERR_VALUE
    ERR_VALUE_NOT_FINITE
    ERR_NO_MEMORY

# Largest file index: columns are int32.
cdef long MAX_INDEX = 2147483647
# The same for ``datasets.dump_svmlight_file``, so that what it writes reads back.
MAX_FILE_INDEX = MAX_INDEX


cdef inline bint is_space(char c) noexcept nogil:
    return c == b' ' or c == b'\t' or c == b'\r' or c == b'\v' or c == b'\f'


cdef inline bint is_digit(char c) noexcept nogil:
    return b'0' <= c <= b'9'


cdef inline bint push_digit(uint64_t* mantissa, int* digits, char c) noexcept nogil:
    """Appends decimal digit c to the mantissa (leading zeros are not
    significant and not counted); False when a 20th significant digit would
    overflow it, which the caller hands to the slow path."""
    if mantissa[0] != 0 or c != b'0':
        if digits[0] == 19:
            return False
        mantissa[0] = mantissa[0] * 10 + <uint64_t>(c - c'0')
        digits[0] += 1
    return True


# Exact powers of ten for the fast path of ``read_double``.
cdef double POW10[23]
POW10[:] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef inline bint read_double_fast(const char* s, char** endp, double* out) noexcept nogil:
    """Read a plain decimal ``[+-]digits[.digits][(e|E)[+-]digits]`` whose
    value is exactly ``m * 10**k`` with ``m <= 2**53`` and ``|k| <= 22``.

    Then ``m`` and ``10**|k|`` are exact doubles and one multiplication or
    division rounds correctly, so the result equals ``strtod``'s (Clinger's
    fast path).  Returns False, without writing, for anything else (more
    digits, larger exponents, hex, nan, inf, no digits, or a number that
    ``strtod`` might read further); the caller then uses ``strtod``.
    """
    cdef const char* p = s
    cdef bint negative = False, exp_negative = False, any_digit = False
    cdef uint64_t mantissa = 0
    cdef int digits = 0, exp10 = 0, e = 0, e_digits = 0
    cdef double value
    if p[0] == b'-':
        negative = True
        p += 1
    elif p[0] == b'+':
        p += 1
    while is_digit(p[0]):
        any_digit = True
        if not push_digit(&mantissa, &digits, p[0]):
            return False
        p += 1
    if p[0] == b'.':
        p += 1
        while is_digit(p[0]):
            any_digit = True
            if not push_digit(&mantissa, &digits, p[0]):
                return False
            exp10 -= 1
            p += 1
    if not any_digit:
        return False
    if p[0] == b'e' or p[0] == b'E':
        p += 1
        if p[0] == b'-':
            exp_negative = True
            p += 1
        elif p[0] == b'+':
            p += 1
        if not is_digit(p[0]):
            return False
        while is_digit(p[0]):
            if e_digits == 6:
                return False
            e = e * 10 + (p[0] - c'0')
            e_digits += 1
            p += 1
        exp10 += -e if exp_negative else e
    # strtod could read on after letters ("0x1p3") or a second '.'.
    if (b'a' <= p[0] <= b'z') or (b'A' <= p[0] <= b'Z') or p[0] == b'.':
        return False
    if mantissa > (<uint64_t>1 << 53) or exp10 < -22 or exp10 > 22:
        return False
    value = <double>mantissa
    if exp10 < 0:
        value /= POW10[-exp10]
    else:
        value *= POW10[exp10]
    out[0] = -value if negative else value
    endp[0] = <char*>p
    return True


cdef inline double read_double(const char* s, char** endp) noexcept nogil:
    """``strtod(s, endp)``, faster for short plain decimals."""
    cdef double value
    if read_double_fast(s, endp, &value):
        return value
    return strtod(s, endp)


cdef class Parser:
    """Incremental parser: feed it complete lines, then call ``finish``.

    Parameters
    ----------
    name : str
        File name used in error messages.
    precomputed : bool
        Allow index 0 and keep file indices as column numbers.
    leading : int, default 1
        How many numbers come before the features on every line: a data
        file's label, or the nr_class - 1 coefficients of a LIBSVM model's
        support-vector line.  Each is read and checked as a label.
    """
    cdef:
        object name
        bint precomputed
        Py_ssize_t leading      # numbers before the features, each line
        # Growing outputs (C buffers, copied into ndarrays by ``finish``).
        double* labels          # ``leading`` per row
        int64_t* indptr         # n_rows + 1 entries
        double* values          # one per stored entry
        int32_t* columns        # 0-based column of each entry
        Py_ssize_t n_rows, cap_rows, nnz, cap_nnz
        long max_index          # largest file index seen; -1 when none
        Py_ssize_t line         # lines consumed so far
        # Error details, valid when ``parse_block`` returns non-zero.
        Py_ssize_t err_start, err_stop
        long err_a, err_b

    def __cinit__(self, name, bint precomputed=False, Py_ssize_t leading=1):
        if leading < 1:
            raise ValueError(f"leading must be >= 1, got {leading}")
        cdef Py_ssize_t most = PY_SSIZE_T_MAX // (2 * 1024 * <Py_ssize_t>sizeof(double))
        if leading > most:
            # the labels' byte count wrapped around: a tiny buffer, written
            # past its end
            raise ValueError(f"leading must be at most {most}, got {leading}")
        self.name = name
        self.precomputed = precomputed
        self.leading = leading
        # 1024 labels to start with, however many a line
        self.cap_rows = max(1, 1024 // leading)
        self.cap_nnz = 16384
        self.labels = <double*>realloc(NULL, self.cap_rows * leading * sizeof(double))
        self.indptr = <int64_t*>realloc(NULL, (self.cap_rows + 1) * sizeof(int64_t))
        self.values = <double*>realloc(NULL, self.cap_nnz * sizeof(double))
        self.columns = <int32_t*>realloc(NULL, self.cap_nnz * sizeof(int32_t))
        if (self.labels == NULL or self.indptr == NULL or self.values == NULL
                or self.columns == NULL):
            raise MemoryError("cannot allocate the data-file parser buffers")
        self.indptr[0] = 0
        self.n_rows = 0
        self.nnz = 0
        self.max_index = -1
        self.line = 0

    def __dealloc__(self):
        free(self.labels)
        free(self.indptr)
        free(self.values)
        free(self.columns)

    cdef int grow_rows(self) noexcept nogil:
        cdef Py_ssize_t cap = 2 * self.cap_rows
        if cap > PY_SSIZE_T_MAX // (self.leading * <Py_ssize_t>sizeof(double)):
            return ERR_NO_MEMORY
        cdef double* labels = <double*>realloc(self.labels, cap * self.leading * sizeof(double))
        if labels == NULL:
            return ERR_NO_MEMORY
        self.labels = labels
        cdef int64_t* indptr = <int64_t*>realloc(self.indptr, (cap + 1) * sizeof(int64_t))
        if indptr == NULL:
            return ERR_NO_MEMORY
        self.indptr = indptr
        self.cap_rows = cap
        return PARSE_OK

    cdef int grow_nnz(self) noexcept nogil:
        cdef Py_ssize_t cap = 2 * self.cap_nnz
        cdef double* values = <double*>realloc(self.values, cap * sizeof(double))
        if values == NULL:
            return ERR_NO_MEMORY
        self.values = values
        cdef int32_t* columns = <int32_t*>realloc(self.columns, cap * sizeof(int32_t))
        if columns == NULL:
            return ERR_NO_MEMORY
        self.columns = columns
        self.cap_nnz = cap
        return PARSE_OK

    cdef int fail(self, int code, const char* buf, Py_ssize_t start,
                  Py_ssize_t end, long a, long b) noexcept nogil:
        """Record the failing token ``buf[start:stop]`` (stop = the next
        separator before ``end``) and the numbers ``a``, ``b``."""
        cdef Py_ssize_t stop = start
        while stop < end and not is_space(buf[stop]):
            stop += 1
        self.err_start = start
        self.err_stop = stop
        self.err_a = a
        self.err_b = b
        return code

    cdef int parse_block(self, const char* buf, Py_ssize_t n) noexcept nogil:
        """Parse the lines of ``buf[0:n]``; stop at the first bad one.

        Numbers are parsed in place: ``strtod``/``strtol`` stop at the first
        character that cannot continue a number, and a newline or ``#`` never
        can, so they never read past the current line.  Value tokens are
        checked to start with a non-space first, since ``strtod`` would skip
        leading whitespace, newlines included.
        """
        cdef Py_ssize_t pos = 0, line_end, end, p, q, tok, j
        cdef const char* found
        cdef char* endp
        cdef double label, value
        cdef long index, prev, lowest
        cdef int code
        cdef bint overflow
        cdef long column_shift = 0 if self.precomputed else 1
        lowest = 0 if self.precomputed else 1
        while pos < n:
            found = <const char*>memchr(buf + pos, b'\n', n - pos)
            line_end = (found - buf) if found != NULL else n
            self.line += 1
            found = <const char*>memchr(buf + pos, b'#', line_end - pos)
            end = (found - buf) if found != NULL else line_end

            # Label (or the ``leading`` numbers).
            if self.n_rows == self.cap_rows:
                code = self.grow_rows()
                if code != PARSE_OK:
                    return code
            q = pos
            for j in range(self.leading):
                p = q
                while p < end and is_space(buf[p]):
                    p += 1
                if p == end:
                    return self.fail(ERR_NO_LABEL, buf, pos, pos, 0, 0)
                label = read_double(buf + p, &endp)
                q = endp - buf
                if q == p or q > end or (q < end and not is_space(buf[q])):
                    return self.fail(ERR_LABEL, buf, p, end, 0, 0)
                if not isfinite(label):
                    return self.fail(ERR_LABEL_NOT_FINITE, buf, p, end, 0, 0)
                self.labels[self.n_rows * self.leading + j] = label

            # Features.
            prev = lowest - 1
            p = q
            while True:
                while p < end and is_space(buf[p]):
                    p += 1
                if p >= end:
                    break
                tok = p
                if end - p >= 4 and memcmp(buf + p, b"qid:", 4) == 0:
                    return self.fail(ERR_QID, buf, tok, end, 0, 0)
                # Fast path: up to 9 plain digits then ':'; else strtol.
                q = p
                index = 0
                overflow = False
                while q < end and q - p < 9 and is_digit(buf[q]):
                    index = index * 10 + (buf[q] - c'0')
                    q += 1
                if q == p or q >= end or buf[q] != b':':
                    errno = 0
                    index = strtol(buf + p, &endp, 10)
                    q = endp - buf
                    overflow = errno == ERANGE
                if q == p or q >= end or buf[q] != b':':
                    # Tell "no colon at all" from "a colon after a bad index".
                    q = p
                    while q < end and not is_space(buf[q]) and buf[q] != b':':
                        q += 1
                    if q < end and buf[q] == b':':
                        return self.fail(ERR_INDEX, buf, tok, end, 0, 0)
                    return self.fail(ERR_NO_COLON, buf, tok, end, 0, 0)
                if overflow or index > MAX_INDEX or index < -MAX_INDEX:
                    return self.fail(ERR_INDEX_TOO_LARGE, buf, tok, end, 0, 0)
                if index < lowest:
                    return self.fail(ERR_INDEX_TOO_SMALL, buf, tok, end, index, 0)
                if index <= prev:
                    return self.fail(ERR_INDEX_ORDER, buf, tok, end, index, prev)
                p = q + 1
                if p >= end or is_space(buf[p]):
                    return self.fail(ERR_VALUE, buf, tok, end, index, 0)
                value = read_double(buf + p, &endp)
                q = endp - buf
                if q == p or q > end or (q < end and not is_space(buf[q])):
                    return self.fail(ERR_VALUE, buf, tok, end, index, 0)
                if not isfinite(value):
                    return self.fail(ERR_VALUE_NOT_FINITE, buf, tok, end, index, 0)
                if self.nnz == self.cap_nnz:
                    code = self.grow_nnz()
                    if code != PARSE_OK:
                        return code
                self.values[self.nnz] = value
                self.columns[self.nnz] = <int32_t>(index - column_shift)
                self.nnz += 1
                prev = index
                p = q
            if prev > self.max_index:
                self.max_index = prev
            self.n_rows += 1
            self.indptr[self.n_rows] = self.nnz
            pos = line_end + 1
        return PARSE_OK

    def feed(self, bytes buf, Py_ssize_t n):
        """Parse the complete lines in ``buf[:n]``.

        ``buf[:n]`` must end with ``b"\\n"``, or ``n == len(buf)`` (the last
        line of the input, with or without its newline).

        Raises
        ------
        ValueError
            On the first malformed line, naming the file and the line.
        """
        if n < 0 or n > len(buf) or (n < len(buf) and n > 0 and buf[n - 1] != 10):
            raise ValueError("feed: buf[:n] must end at a newline or at len(buf)")
        cdef const char* p = buf
        cdef int code
        with nogil:
            code = self.parse_block(p, n)
        if code != PARSE_OK:
            self.raise_error(code, buf)

    cdef raise_error(self, int code, bytes buf):
        if code == ERR_NO_MEMORY:
            raise MemoryError(f"{self.name}: line {self.line}: out of memory")
        token = buf[self.err_start:self.err_stop].decode("utf-8", "replace")
        if len(token) > 40:
            token = token[:37] + "..."
        a, b = self.err_a, self.err_b
        if code == ERR_NO_LABEL:
            what = ("wrong input format: the line has no label (empty lines and "
                    "comment-only lines are not allowed)")
        elif code == ERR_LABEL:
            what = f"label {token!r} is not a number"
        elif code == ERR_LABEL_NOT_FINITE:
            what = f"label {token!r} is not finite"
        elif code == ERR_QID:
            what = f"query ids ({token!r}) are not supported in LIBSVM format"
        elif code == ERR_NO_COLON:
            what = f"expected <index>:<value>, got {token!r}"
        elif code == ERR_INDEX:
            what = f"feature index in {token!r} is not an integer"
        elif code == ERR_INDEX_TOO_LARGE:
            what = (f"feature index in {token!r} is out of range (at most "
                    f"{MAX_INDEX})")
        elif code == ERR_INDEX_TOO_SMALL:
            if self.precomputed:
                what = f"feature index {a} is negative"
            else:
                what = (f"feature index {a} must be >= 1 (index 0 is only "
                        "allowed with precomputed=True)")
        elif code == ERR_INDEX_ORDER:
            what = f"feature index {a} is not greater than the previous index {b}"
        elif code == ERR_VALUE:
            what = f"value of feature {a} in {token!r} is not a number"
        elif code == ERR_VALUE_NOT_FINITE:
            what = f"value of feature {a} in {token!r} is not finite"
        else:
            what = f"parse error {code}"
        raise ValueError(f"{self.name}: line {self.line}: {what}")

    def finish(self):
        """Return ``(labels, data, indices, indptr, max_index)``.

        ``labels`` (``leading`` per row, row after row), ``data`` are
        float64; ``indices`` int32 0-based columns;
        ``indptr`` int64; ``max_index`` the largest file index (-1 if none).
        """
        labels = np.empty(self.n_rows * self.leading, dtype=np.float64)
        data = np.empty(self.nnz, dtype=np.float64)
        indices = np.empty(self.nnz, dtype=np.int32)
        indptr = np.empty(self.n_rows + 1, dtype=np.int64)
        cdef double[::1] labels_v = labels, data_v = data
        cdef int32_t[::1] indices_v = indices
        cdef int64_t[::1] indptr_v = indptr
        if self.n_rows > 0:
            memcpy(&labels_v[0], self.labels, self.n_rows * self.leading * sizeof(double))
        if self.nnz > 0:
            memcpy(&data_v[0], self.values, self.nnz * sizeof(double))
            memcpy(&indices_v[0], self.columns, self.nnz * sizeof(int32_t))
        memcpy(&indptr_v[0], self.indptr, (self.n_rows + 1) * sizeof(int64_t))
        return labels, data, indices, indptr, self.max_index

    @property
    def lines(self):
        """Number of lines parsed so far."""
        return self.line


cdef extern from "<locale.h>" nogil:
    struct lconv:
        char* decimal_point
    lconv* localeconv()


cdef bytes _c_decimal_point(bytes text):
    """``text`` with the thread's decimal point (LC_NUMERIC) as ".".

    The writers' snprintf follows LC_NUMERIC, which a program may set
    (locale.setlocale: "0,5" in de_DE, a line no LIBSVM reader takes), and
    svm.cpp's svm_save_model writes in the C locale.  Their lines hold
    numbers, ':', ' ' and newlines only, so the point is replaced whole
    (localeconv and a replace are standard C and Python; uselocale is not
    on every platform)."""
    cdef bytes point = localeconv().decimal_point
    return text if point == b"." or not point else text.replace(point, b".")


# Room for one " <index>:<value>": the longest is 1 + 11 (int32 index) + 1
# + 24 (%.17g, e.g. "-1.2345678901234567e-308") = 37 characters.
cdef enum:
    ENTRY_WIDTH = 48


def format_rows(list labels, const double[::1] data, const int64_t[::1] indices,
                const int64_t[::1] indptr, Py_ssize_t start, Py_ssize_t stop,
                long long index_shift, bint scale_style=False):
    """Format rows ``start:stop`` of a CSR matrix as LIBSVM lines.

    Parameters
    ----------
    labels : list of bytes
        The formatted label of every row (``labels[i]`` for row ``i``).
    data, indices, indptr : ndarray
        CSR arrays: float64 values, int64 0-based columns, int64 offsets.
    start, stop : int
        Row range to format.
    index_shift : int
        Added to each column to get the file index (1, or 0 for precomputed).
    scale_style : bool, default False
        Values as ``%g`` and each line ending in a space, as svm-scale
        writes its output (svm-scale.c's ``"%d:%g "`` per entry).

    Returns
    -------
    bytes
        ``label index:value ...\\n`` for each row, values as ``%.17g``.
    """
    cdef Py_ssize_t i, k, size = 0, used = 0
    cdef bytes label
    cdef const char* entry_format = b" %lld:%.17g"
    if scale_style:
        entry_format = b" %lld:%g"
    for i in range(start, stop):
        label = labels[i]
        size += len(label) + 2
    size += (indptr[stop] - indptr[start]) * ENTRY_WIDTH + 1
    cdef char* out = <char*>realloc(NULL, size)
    if out == NULL:
        raise MemoryError("cannot allocate the output buffer")
    cdef const char* text
    cdef Py_ssize_t text_len
    try:
        for i in range(start, stop):
            label = labels[i]
            text = label
            text_len = len(label)
            memcpy(out + used, text, text_len)
            used += text_len
            with nogil:
                for k in range(indptr[i], indptr[i + 1]):
                    used += snprintf(out + used, ENTRY_WIDTH + 1, entry_format,
                                     <long long>(indices[k] + index_shift), data[k])
                if scale_style:
                    out[used] = b' '
                    used += 1
                out[used] = b'\n'
                used += 1
        return _c_decimal_point(PyBytes_FromStringAndSize(out, used))
    finally:
        free(out)


# Room for one "%.17g " coefficient (25 characters, e.g.
# "-1.2345678901234567e-308 ") or one "%lld:%.8g " entry (20 + 1 + 15 + 1
# = 37: any int64 file index, "-1.2345678e-308").  A hand-built model's
# index past INT_MAX is written whole, as the Python writer did; 32 had cut
# such an entry and counted the bytes it could not write (a heap overflow).
cdef enum:
    SV_NUMBER_WIDTH = 40


def format_sv_lines(const double[:, ::1] coef, const double[::1] data,
                    const int64_t[::1] indices, const int64_t[::1] indptr,
                    Py_ssize_t start, Py_ssize_t stop):
    """Format rows ``start:stop`` of a model's support vectors as LIBSVM's
    ``svm_save_model`` writes them (svm.cpp): each coefficient as
    ``"%.17g "``, each entry as ``"%d:%.8g "`` with the file index =
    column + 1, then a newline.

    Parameters
    ----------
    coef : ndarray, shape (n_SV, nr_class - 1)
        The coefficients of every support vector (``sv_coef.T``).
    data, indices, indptr : ndarray
        CSR arrays of the support vectors: float64 values, int64 0-based
        columns (LIBSVM's are below ``2**31 - 1``), int64 offsets.
    start, stop : int
        Row range to format.

    Returns
    -------
    bytes
        The lines, as C's printf writes the numbers (a nan with its sign
        bit as ``-nan``).
    """
    cdef Py_ssize_t i, j, k, used = 0, m = coef.shape[1]
    cdef Py_ssize_t size = ((stop - start) * (m + 1)
                            + (indptr[stop] - indptr[start])) * SV_NUMBER_WIDTH + 1
    cdef char* out = <char*>realloc(NULL, size)
    if out == NULL:
        raise MemoryError("cannot allocate the output buffer")
    try:
        with nogil:
            for i in range(start, stop):
                for j in range(m):
                    used += snprintf(out + used, SV_NUMBER_WIDTH + 1, b"%.17g ", coef[i, j])
                for k in range(indptr[i], indptr[i + 1]):
                    used += snprintf(out + used, SV_NUMBER_WIDTH + 1, b"%lld:%.8g ",
                                     <long long>(indices[k] + 1), data[k])
                out[used] = b'\n'
                used += 1
        return _c_decimal_point(PyBytes_FromStringAndSize(out, used))
    finally:
        free(out)
