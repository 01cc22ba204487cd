"""Read and write LIBSVM/svmlight data files; find the shipped datasets.

The format and its edge cases follow LIBSVM's ``svm-train`` (anchors.md §1.5):
``<label> <index>:<value> ...`` per line, 1-based strictly ascending indices,
index 0 only for precomputed kernels, ``#`` starts a comment, and any
malformed line raises ``ValueError`` naming the file and the line.  The
parsing itself is done by ``_svmlight`` (Cython); this module opens files,
validates arguments once, and assembles the CSR matrix.

What this module trusts: nothing from its callers (every argument is
checked here); from ``_svmlight.Parser`` it trusts CSR pieces with strictly
ascending in-row columns, so the returned matrix is marked as having sorted
indices without re-checking.  Inputs are never modified: ``dump_svmlight_file``
works on copies.
"""
import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import _svmlight
from ._files import atomic_output
from ._validation import check_csr_structure, check_flag, check_real_dtype

__all__ = ["load_svmlight_file", "dump_svmlight_file", "load_dataset"]

# Bytes read from the input per parser call.
_CHUNK = 1 << 24
# Rows formatted per write.
_WRITE_ROWS = 8192

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open, ".lzma": lzma.open}


_MAGIC = {".gz": b"\x1f\x8b", ".bz2": b"BZh", ".xz": b"\xfd7zXZ\x00"}


def _open_compressed(path, mode):
    """Open ``path`` in binary ``mode``, decompressing by extension.  A
    regular file whose first bytes are not its extension's format (plain
    text named ``data.gz``) is read as it is, as LIBSVM's tools read it."""
    suffix = Path(os.fsdecode(path)).suffix.lower()
    opener = _OPENERS.get(suffix, open)
    if "r" in mode and suffix in _MAGIC and os.path.isfile(path):
        with open(path, "rb") as head:
            start = head.read(len(_MAGIC[suffix]))
        if start and start != _MAGIC[suffix]:
            opener = open
    elif "r" in mode and suffix == ".lzma" and os.path.isfile(path):
        # the .lzma (LZMA alone) header has no magic bytes: its first bytes
        # either decode or they are not .lzma; fewer than the header's 13
        # (properties, dictionary size, uncompressed size) decode to nothing
        # without an error, and are not .lzma either
        with open(path, "rb") as head:
            start = head.read(64)
        try:
            lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(start)
        except lzma.LZMAError:
            opener = open
        if 0 < len(start) < 13:
            opener = open
    return opener(path, mode)


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def _display_name(f):
    if _is_path(f):
        name = os.fspath(f)
        return os.fsdecode(name)
    name = getattr(f, "name", None)
    if isinstance(name, (str, bytes)):
        return os.fsdecode(name)
    return "<file object>"


# What a truncated or corrupt compressed stream raises while read: gzip's
# BadGzipFile and bz2's "Invalid data stream" are OSErrors, a damaged
# deflate block is zlib.error.
_DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)


def _parse(fh, name, precomputed):
    """Feed ``fh`` (binary, readable) to the parser chunk by chunk, whole
    lines at a time."""
    parser = _svmlight.Parser(name, precomputed)
    compressed = isinstance(fh, (gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile))
    # read1 for a compressed stream: read would drop what it had decompressed
    # of a chunk when the stream breaks off, and the error would name line 1
    read = fh.read1 if compressed else fh.read
    pending = []          # the chunks of an unfinished line, joined once it ends
    while True:
        try:
            chunk = read(_CHUNK)
        except _DECOMPRESSION_ERRORS as exc:
            if not compressed and not isinstance(exc, EOFError):
                raise
            raise ValueError(f"{name}: line {parser.lines + 1}: cannot decompress "
                             f"the file ({exc})") from exc
        if isinstance(chunk, str):
            raise TypeError(f"f: {name} is open in text mode; open it in binary "
                            "mode ('rb') or pass its path")
        if not chunk:
            break
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:
            # no line ends here: keep it, not a growing copy (an unbuffered
            # stream's short reads of one long line were quadratic)
            pending.append(bytes(chunk))
            continue
        buf = b"".join(pending + [bytes(chunk)]) if pending else bytes(chunk)
        cut += len(buf) - len(chunk)
        pending = []
        parser.feed(buf, cut)
        if cut < len(buf):
            pending.append(buf[cut:])
    if pending:
        tail = b"".join(pending)
        parser.feed(tail, len(tail))
    return parser.finish()


def load_svmlight_file(f, n_features=None, *, precomputed=False, dtype=np.float64):
    """Load a LIBSVM/svmlight data file.

    Parameters
    ----------
    f : str, bytes, os.PathLike or binary file object
        A path (``.gz``, ``.bz2``, ``.xz`` and ``.lzma`` are decompressed by
        extension) or an object with a binary ``read`` method, read as-is.
    n_features : int, optional
        Number of columns of ``X``.  By default the largest index in the file
        (plus one for ``precomputed``).  It is an error for the file to hold
        an index beyond ``n_features``.
    precomputed : bool (or 0/1), default False
        The file holds a precomputed kernel (LIBSVM ``-t 4``): index 0 is
        allowed and file index ``j`` is column ``j`` (column 0 is the serial
        number).  Otherwise index ``j >= 1`` is column ``j - 1``.
    dtype : floating dtype, default float64
        dtype of ``X``; ``y`` is always float64.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_samples, n_features)
        With sorted indices.  Entries written explicitly in the file are
        stored, zeros included.
    y : ndarray of float64, shape (n_samples,)

    Raises
    ------
    ValueError
        If a line is malformed or an index exceeds ``n_features``; the
        message names the file and the 1-based line.
    TypeError
        If ``f`` is neither a path nor a binary file object, or
        ``precomputed`` is not a bool.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64 (the dtypes scipy's sparse "
                         f"matrices compute in), got {dtype}")
    if n_features is not None:
        if isinstance(n_features, (bool, np.bool_)) or not isinstance(
                n_features, (int, np.integer)) or n_features < 0:
            raise ValueError(
                f"n_features must be a non-negative integer or None, got {n_features!r}")
        n_features = int(n_features)
    precomputed = check_flag(precomputed, "precomputed")
    name = _display_name(f)

    if _is_path(f):
        with _open_compressed(f, "rb") as fh:
            labels, data, indices, indptr, max_index = _parse(fh, name, precomputed)
    elif hasattr(f, "read"):
        labels, data, indices, indptr, max_index = _parse(f, name, precomputed)
    else:
        raise TypeError(
            f"f must be a path or a binary file object, got {type(f).__name__}")

    width = max_index + 1 if precomputed else max(max_index, 0)
    if n_features is None:
        n_features = width
    elif width > n_features:
        first = int(np.argmax(indices >= n_features))
        row = int(np.searchsorted(indptr, first, side="right")) - 1
        index = int(indices[first]) + (0 if precomputed else 1)
        raise ValueError(
            f"{name}: line {row + 1}: feature index {index} does not fit in "
            f"n_features={n_features}")

    with np.errstate(over="ignore"):
        values = data.astype(dtype, copy=False)
    if not np.all(np.isfinite(values)):
        first = int(np.flatnonzero(~np.isfinite(values))[0])
        row = int(np.searchsorted(indptr, first, side="right")) - 1
        raise ValueError(f"{name}: line {row + 1}: value {float(data[first])!r} "
                         f"overflows {dtype}")
    X = sp.csr_matrix((values, indices, indptr),
                      shape=(labels.shape[0], n_features), copy=False)
    X.has_sorted_indices = True
    return X, labels


def _format_label(value):
    """Integral labels as integers (``1``, ``-1``); others as ``repr``,
    the shortest text that reads back to the same double."""
    if value.is_integer() and abs(value) < 2.0 ** 53:
        return b"%d" % int(value)
    return repr(value).encode("ascii")


def _check_dump_inputs(X, y, precomputed):
    """Validated copies: CSR float64 (int64 indices, sorted, summed) and y."""
    for value, name in ((X, "X"), (y, "y")):
        check_real_dtype(value.dtype if sp.issparse(value) else np.asarray(value).dtype, name)
    if sp.issparse(X):
        check_csr_structure(X, "X")
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
        if not precomputed:
            X.eliminate_zeros()
    else:
        X = np.array(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        X = sp.csr_matrix(X)
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X must hold only finite values (LIBSVM files cannot "
                         "store NaN or infinity)")
    # every column written (all of them for a precomputed kernel) must have
    # a file index the reader accepts
    shift = 0 if precomputed else 1
    last = X.shape[1] - 1 if precomputed else (int(X.indices.max()) if X.nnz else -1)
    if last + shift > _svmlight.MAX_FILE_INDEX:
        raise ValueError(f"X has a value in column {last}, file index {last + shift}: "
                         f"LIBSVM data files hold indices up to {_svmlight.MAX_FILE_INDEX} "
                         "(a C int)")
    y = np.array(y, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} labels but X has {X.shape[0]} rows")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must hold only finite values")
    return X, y


def _write_rows(out, X, y, precomputed):
    """Write every row to the binary stream ``out``."""
    if precomputed:
        # LIBSVM finds kernel values by position, so every entry is written,
        # zeros included.
        dense = X.toarray()
        n_rows, n_cols = dense.shape
        data = np.ascontiguousarray(dense.ravel())
        indices = np.tile(np.arange(n_cols, dtype=np.int64), n_rows)
        indptr = np.arange(0, n_rows * n_cols + 1, max(n_cols, 1), dtype=np.int64)
        if n_cols == 0:
            indptr = np.zeros(n_rows + 1, dtype=np.int64)
        shift = 0
    else:
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int64)
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        shift = 1
    uniques, inverse = np.unique(y, return_inverse=True)
    texts = [_format_label(float(v)) for v in uniques]
    labels = [texts[k] for k in inverse.ravel()]
    for start in range(0, y.shape[0], _WRITE_ROWS):
        stop = min(start + _WRITE_ROWS, y.shape[0])
        out.write(_svmlight.format_rows(labels, data, indices, indptr, start, stop, shift))


def dump_svmlight_file(X, y, f, *, precomputed=False):
    """Write ``X``, ``y`` in LIBSVM/svmlight format.

    Each row is written as ``label index:value ...`` with 1-based indices
    (file index = column, for ``precomputed``), values as ``%.17g`` and
    labels as integers when integral (``1``, ``-1``), otherwise as their
    shortest exact decimal; every value reads back exactly.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples, n_features)
        Zeros are not written, except with ``precomputed``, where every
        column is written as LIBSVM requires.  Not modified.
    y : array-like, shape (n_samples,)
        Labels or targets (finite).
    f : str, bytes, os.PathLike or binary file object
        A path is written through a temporary file in the same directory and
        renamed when complete, so an error leaves no partial file; ``.gz``,
        ``.bz2``, ``.xz`` and ``.lzma`` paths are compressed.  A file object
        receives bytes.
    precomputed : bool (or 0/1), default False
        ``X`` is a precomputed-kernel matrix whose column 0 is the serial
        number: columns are written with their own number as index, from 0.

    Raises
    ------
    ValueError
        If ``X`` or ``y`` is not finite, their shapes disagree, or ``X``
        has a value whose file index is beyond a C int (2147483647), which
        no LIBSVM reader (nor :func:`load_svmlight_file`) accepts.
    TypeError
        If ``f`` is neither a path nor a binary file object, or
        ``precomputed`` is not a bool.
    """
    precomputed = check_flag(precomputed, "precomputed")
    X, y = _check_dump_inputs(X, y, precomputed)
    if not _is_path(f):
        if isinstance(f, io.TextIOBase) or not hasattr(f, "write"):
            raise TypeError("f must be a path or a file object open in binary mode")
        _write_rows(f, X, y, precomputed)
        return

    path = Path(os.fsdecode(os.fspath(f)))
    with atomic_output(path) as raw:
        suffix = path.suffix.lower()
        if suffix == ".gz":
            out = gzip.GzipFile(filename=path.name, mode="wb", fileobj=raw)
        elif suffix == ".bz2":
            out = bz2.BZ2File(raw, "wb")
        elif suffix in (".xz", ".lzma"):
            out = lzma.LZMAFile(raw, "wb",
                                format=lzma.FORMAT_XZ if suffix == ".xz" else lzma.FORMAT_ALONE)
        else:
            out = None
        if out is None:
            _write_rows(raw, X, y, precomputed)
        else:
            with out:
                _write_rows(out, X, y, precomputed)


def _dataset_dirs():
    """Where shipped datasets are looked for, in order: $SVMSCREEN_DATA,
    ./data, the source checkout's data/ (when running from it), then
    shared/data beside either.  An installed package has no data/ of its
    own, so the working directory (a clone) comes first."""
    here = Path(__file__).resolve().parent.parent
    cwd = Path.cwd()
    dirs = [Path(os.environ["SVMSCREEN_DATA"])] if os.environ.get("SVMSCREEN_DATA") else []
    dirs += [cwd / "data", here / "data", cwd.parent / "shared" / "data",
             here.parent / "shared" / "data"]
    return list(dict.fromkeys(dirs))


def load_dataset(name, *, n_features=None):
    """Load a shipped dataset by name, e.g. ``"heart_scale"``.

    Looks for ``<name>.xz`` in ``$SVMSCREEN_DATA``, ``./data``, the source
    checkout's ``data/``, then ``shared/data`` beside them.

    Parameters
    ----------
    name : str
        Dataset name without the ``.xz`` extension.
    n_features : int, optional
        Passed to :func:`load_svmlight_file` (to give a train/test pair the
        same width).

    Returns
    -------
    X : scipy.sparse.csr_matrix
    y : ndarray of float64

    Raises
    ------
    FileNotFoundError
        If no directory holds the file; the message lists where it looked.
    """
    if not isinstance(name, str) or not name or "/" in name or os.sep in name:
        raise ValueError(f"name must be a dataset name such as 'heart_scale', got {name!r}")
    candidates = [d / (name + ".xz") for d in _dataset_dirs()]
    for path in candidates:
        if path.is_file():
            return load_svmlight_file(path, n_features)
    raise FileNotFoundError(
        f"dataset {name!r} not found; looked for "
        + ", ".join(str(p) for p in candidates))
