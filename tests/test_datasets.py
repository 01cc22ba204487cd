"""Tests of svmscreen.datasets: the LIBSVM/svmlight reader and writer.

Reference: scikit-learn's ``load_svmlight_file`` on every shipped file; the
format rules of anchors.md §1.5 for the edge cases.
"""
import bz2
import errno
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file as sk_load_svmlight_file

from svmscreen import datasets
from svmscreen.datasets import dump_svmlight_file, load_dataset, load_svmlight_file

DATA = Path(__file__).resolve().parent.parent / "data"
SHIPPED = sorted(DATA.glob("*.xz"))

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def load_bytes(text, **kwargs):
    return load_svmlight_file(io.BytesIO(text), **kwargs)


def assert_same_csr(X, Y):
    """Same shape, same stored entries in the same order, same values."""
    assert X.shape == Y.shape
    X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    np.testing.assert_array_equal(X.indptr, Y.indptr)
    np.testing.assert_array_equal(X.indices, Y.indices)
    np.testing.assert_array_equal(X.data, Y.data)


def assert_same_matrix(X, Y):
    """Same shape and the same value in every cell (stored zeros ignored)."""
    assert X.shape == Y.shape
    np.testing.assert_array_equal(sp.csr_matrix(X).toarray(), sp.csr_matrix(Y).toarray())


# ---------------------------------------------------------------------------
# Shipped files against scikit-learn

def test_data_directory_is_populated():
    assert len(SHIPPED) >= 10, f"expected the shipped datasets in {DATA}"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_file_matches_sklearn(path):
    X, y = load_svmlight_file(path)
    with lzma.open(path, "rb") as fh:
        X_ref, y_ref = sk_load_svmlight_file(fh, zero_based=False)
    assert isinstance(X, sp.csr_matrix)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.has_sorted_indices
    assert_same_csr(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


@pytest.mark.parametrize("path", SHIPPED[:3], ids=lambda p: p.stem)
def test_shipped_file_matches_sklearn_with_n_features(path):
    X0, _ = load_svmlight_file(path)
    width = X0.shape[1] + 7
    X, y = load_svmlight_file(path, n_features=width)
    with lzma.open(path, "rb") as fh:
        X_ref, y_ref = sk_load_svmlight_file(fh, n_features=width, zero_based=False)
    assert X.shape == (X0.shape[0], width)
    assert_same_csr(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


def test_large_file_ijcnn1():
    # 49,990 rows: must load (and match sklearn, above) without trouble.
    X, y = load_svmlight_file(DATA / "ijcnn1.xz")
    assert X.shape == (49990, 22)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert X.nnz > 500_000


def test_crlf_file_mushrooms():
    raw = lzma.open(DATA / "mushrooms.xz", "rb").read()
    assert b"\r\n" in raw
    X, y = load_bytes(raw)
    X2, y2 = load_bytes(raw.replace(b"\r\n", b"\n"))
    assert_same_csr(X, X2)
    np.testing.assert_array_equal(y, y2)


def test_chunk_boundaries_do_not_matter(monkeypatch):
    raw = lzma.open(DATA / "heart_scale.xz", "rb").read()
    X_ref, y_ref = load_bytes(raw)
    for chunk in (1, 7, 64, 1000):
        monkeypatch.setattr(datasets, "_CHUNK", chunk)
        X, y = load_bytes(raw)
        assert_same_csr(X, X_ref)
        np.testing.assert_array_equal(y, y_ref)
        # Line numbers stay right across chunks.
        bad = raw + b"1 2:1 1:1\n"
        with pytest.raises(ValueError, match=r": line 271: "):
            load_bytes(bad)


# ---------------------------------------------------------------------------
# Format details

def test_labels_are_read_like_strtod():
    X, y = load_bytes(b"+01e0 1:1\n-1.5e-3 1:2\n.5\n-0 2:1\n0x10 1:1\n")
    np.testing.assert_array_equal(y, [1.0, -1.5e-3, 0.5, 0.0, 16.0])


def test_values_are_exact():
    X, _ = load_bytes(b"1 1:0.1 2:-2.5e-300 3:1.7976931348623157e308 4:4.9e-324\n")
    np.testing.assert_array_equal(
        X.toarray()[0], [0.1, -2.5e-300, 1.7976931348623157e308, 5e-324])


NUMBER_TEXTS = [
    "0", "-0", "+0.0", "00012", ".5", "5.", "1e22", "1e23", "-1E+5", "1e-22", "1e-23",
    "9007199254740992", "9007199254740993", "12345678901234567890123",
    "0.1000000000000000055511151231257827", "0.000000000000000000000000000001",
    "2.2250738585072011e-308", "4.9e-324", "2e-324", "1e-400", "1.7976931348623157e308",
    "3.14159265358979323846264338327950288", "123456789.123456789", "1e0000005",
]


@pytest.mark.parametrize("text", NUMBER_TEXTS)
def test_numbers_read_as_strtod(text):
    # Python's float() rounds correctly, as glibc's strtod does.
    X, y = load_bytes(f"{text} 1:{text}\n".encode())
    assert y[0] == float(text) and np.signbit(y[0]) == np.signbit(float(text))
    assert X.data[0] == float(text)


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,22}(\.[0-9]{0,22})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[+-]?\.[0-9]{1,22}([eE][+-]?[0-9]{1,2})?", fullmatch=True),
    finite.flatmap(lambda v: st.sampled_from(
        [repr(v), "%.17g" % v, "%.6g" % v, "%.3e" % v, "%.25f" % v]))))
def test_number_text_round_trip_matches_float(text):
    expected = float(text)
    line = f"{text} 1:{text}\n".encode()
    if not np.isfinite(expected):
        with pytest.raises(ValueError, match="line 1: label .* is not finite"):
            load_bytes(line)
        return
    X, y = load_bytes(line)
    assert y[0] == expected
    assert X.data[0] == expected


def test_rows_without_features():
    X, y = load_bytes(b"1\n-1 2:3\n2 \n3 # comment\n4\t\r\n")
    np.testing.assert_array_equal(y, [1, -1, 2, 3, 4])
    assert X.shape == (5, 2)
    np.testing.assert_array_equal(X.indptr, [0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(X.toarray()[1], [0, 3])


def test_only_rows_without_features():
    X, y = load_bytes(b"1\n-1\n")
    assert X.shape == (2, 0)
    X, y = load_bytes(b"1\n-1\n", n_features=3)
    assert X.shape == (2, 3) and X.nnz == 0


def test_empty_input():
    X, y = load_bytes(b"")
    assert X.shape == (0, 0) and y.shape == (0,)
    X, y = load_bytes(b"", n_features=4)
    assert X.shape == (0, 4)


def test_whitespace_comments_and_last_line_without_newline():
    text = b"  1\t1:2  3:4 \t# note a:b 5:6\r\n-1 2:0.5#x\n+1 1:1"
    X, y = load_bytes(text)
    np.testing.assert_array_equal(y, [1, -1, 1])
    np.testing.assert_array_equal(X.toarray(), [[2, 0, 4], [0, 0.5, 0], [1, 0, 0]])


def test_explicit_zeros_are_stored():
    # As LIBSVM and scikit-learn: an entry written in the file is stored.
    X, _ = load_bytes(b"1 1:0 2:3\n")
    assert X.nnz == 2
    np.testing.assert_array_equal(X.data, [0.0, 3.0])


def test_index_sign_is_accepted_like_strtol():
    X, _ = load_bytes(b"1 +2:1 3:1\n")
    np.testing.assert_array_equal(X.toarray(), [[0, 1, 1]])


def test_precomputed_index_zero():
    text = b"1 0:1 1:4 2:0.5\n-1 0:2 1:0.5 2:3\n"
    X, y = load_bytes(text, precomputed=True)
    assert X.shape == (2, 3)
    np.testing.assert_array_equal(X.toarray(), [[1, 4, 0.5], [2, 0.5, 3]])
    np.testing.assert_array_equal(y, [1, -1])
    with pytest.raises(ValueError, match=r"line 1: feature index 0 must be >= 1"):
        load_bytes(text)


@pytest.mark.parametrize("flag", ["no", "False", None, 2.0])
def test_precomputed_must_be_a_bool(tmp_path, flag):
    # a string such as "no" must not turn the kernel reading on by its truth
    with pytest.raises(TypeError, match="precomputed must be True or False"):
        load_bytes(b"1 1:1\n", precomputed=flag)
    with pytest.raises(TypeError, match="precomputed must be True or False"):
        dump_svmlight_file(np.eye(2), [1, -1], tmp_path / "out", precomputed=flag)
    assert not (tmp_path / "out").exists()


def test_precomputed_width_and_n_features():
    X, _ = load_bytes(b"1 0:1 1:4\n", precomputed=True)
    assert X.shape == (1, 2)
    X, _ = load_bytes(b"1 0:1 1:4\n", precomputed=True, n_features=5)
    assert X.shape == (1, 5)
    with pytest.raises(ValueError, match=r"line 2: feature index 2 does not fit"):
        load_bytes(b"1 0:1 1:4\n1 0:2 2:1\n", precomputed=True, n_features=2)
    with pytest.raises(ValueError, match=r"line 1: feature index -1 is negative"):
        load_bytes(b"1 -1:1\n", precomputed=True)


def test_n_features_too_small_names_line_and_index():
    with pytest.raises(ValueError, match=r"line 3: feature index 9 does not fit in n_features=5"):
        load_bytes(b"1 1:1\n1 5:1\n1 2:1 9:1\n1 7:1\n", n_features=5)


def test_dtype_float32():
    X, y = load_bytes(b"1 1:0.1\n", dtype=np.float32)
    assert X.dtype == np.float32 and y.dtype == np.float64
    assert X[0, 0] == np.float32(0.1)
    with pytest.raises(ValueError, match="line 2: value 1e\\+300 overflows float32"):
        load_bytes(b"1 1:0.1\n-1 2:1e300\n", dtype=np.float32)
    with pytest.raises(ValueError, match="float32 or float64"):
        load_bytes(b"1 1:0.1\n", dtype=np.float16)


def test_dump_refuses_complex_and_text_values():
    with pytest.raises(TypeError, match="X must hold real numbers"):
        dump_svmlight_file(np.array([[1 + 2j, 3j]]), [1.0], io.BytesIO())
    with pytest.raises(TypeError, match="y must hold real numbers"):
        dump_svmlight_file(np.ones((1, 1)), ["a"], io.BytesIO())


# ---------------------------------------------------------------------------
# Malformed input: every error names the line

MALFORMED = [
    ("empty line", b"1 1:1\n\n-1 1:2\n", 2, "no label"),
    ("blank line", b"1 1:1\n-1 1:2\n  \t\r\n", 3, "no label"),
    ("trailing empty line", b"1 1:1\n\n", 2, "no label"),
    ("comment-only line", b"# header\n1 1:1\n", 1, "no label"),
    ("label not a number", b"1 1:1\nabc 1:2\n", 2, "label 'abc' is not a number"),
    ("label with garbage", b"1x 1:2\n", 1, "label '1x' is not a number"),
    ("missing label", b"1 1:1\n1:2 3:4\n", 2, "label '1:2' is not a number"),
    ("nan label", b"nan 1:2\n", 1, "label 'nan' is not finite"),
    ("inf label", b"1 1:1\n-inf\n", 2, "label '-inf' is not finite"),
    ("value not a number", b"1 1:1\n1 1:1\n1 3:abc\n", 3, r"feature 3 in '3:abc' is not a number"),
    ("value with garbage", b"1 1:1.5x\n", 1, "not a number"),
    ("empty value", b"1 1: 2:3\n", 1, "value of feature 1"),
    ("empty value at end", b"1 1:\n", 1, "value of feature 1"),
    ("value with two colons", b"1 1:2:3\n", 1, "value of feature 1"),
    ("nan value", b"1 1:nan\n", 1, "not finite"),
    ("inf value", b"1 1:1\n1 1:inf\n", 2, "not finite"),
    ("overflowing value", b"1 1:1e999\n", 1, "not finite"),
    ("bare word", b"1 abc\n", 1, "expected <index>:<value>, got 'abc'"),
    ("missing colon", b"1 1:2 12\n", 1, "expected <index>:<value>, got '12'"),
    ("spaces around colon", b"1 1 : 2\n", 1, "expected <index>:<value>"),
    ("index not an integer", b"1 x:2\n", 1, "feature index in 'x:2' is not an integer"),
    ("fractional index", b"1 1.5:2\n", 1, "is not an integer"),
    ("missing index", b"1 :2\n", 1, "is not an integer"),
    ("index zero", b"1 1:1\n-1 0:2\n", 2, "feature index 0 must be >= 1"),
    ("negative index", b"1 -3:2\n", 1, "feature index -3 must be >= 1"),
    ("huge index", b"1 3000000000:1\n", 1, "out of range"),
    ("descending index", b"1 1:1\n1 5:1 3:1\n", 2,
     "feature index 3 is not greater than the previous index 5"),
    ("repeated index", b"1 2:1 2:1\n", 1, "feature index 2 is not greater than the previous index 2"),
    ("qid", b"1 1:1\n3 qid:1 1:2\n", 2, "query ids"),
]


@pytest.mark.parametrize("text, line, message", [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_input_names_the_line(text, line, message):
    with pytest.raises(ValueError, match=rf"line {line}: ") as info:
        load_bytes(text)
    assert info.match(message)


def test_error_names_the_file(tmp_path):
    path = tmp_path / "broken_scale"
    path.write_bytes(b"1 1:1\n" * 16 + b"1 5:1 3:1\n")
    expected = (f"{path}: line 17: feature index 3 is not greater than the "
                "previous index 5")
    with pytest.raises(ValueError) as info:
        load_svmlight_file(path)
    assert str(info.value) == expected
    with open(path, "rb") as fh, pytest.raises(ValueError) as info:
        load_svmlight_file(fh)
    assert str(info.value) == expected


def test_error_in_compressed_file_names_the_file(tmp_path):
    path = tmp_path / "bad.txt.xz"
    with lzma.open(path, "wb") as fh:
        fh.write(b"1 1:1\n-1 2:x\n")
    with pytest.raises(ValueError, match=r"bad\.txt\.xz: line 2: "):
        load_svmlight_file(path)


@pytest.mark.parametrize("suffix, compress, decompressor", [
    (".gz", gzip.compress, lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)),
    (".xz", lzma.compress, lzma.LZMADecompressor)])
def test_truncated_compressed_file(tmp_path, suffix, compress, decompressor):
    # The error names the first line the stream does not hold whole; it had
    # named line 1 whenever the file was shorter than a read (16 MB)
    path = tmp_path / ("cut" + suffix)
    rng = np.random.default_rng(0)
    text = "".join(f"{rng.choice([-1, 1])} 1:{v:.6f}\n" for v in rng.random(3000)).encode()
    blob = compress(text)
    cut = blob[: len(blob) // 2]
    path.write_bytes(cut)
    whole_lines = decompressor().decompress(cut).count(b"\n")
    assert whole_lines > 100
    with pytest.raises(ValueError, match=rf"cut\.(gz|xz): line {whole_lines + 1}: cannot "
                                         "decompress"):
        load_svmlight_file(path)


@pytest.mark.parametrize("suffix, compress, where", [
    (".gz", gzip.compress, 12),        # a damaged deflate block: zlib.error
    (".bz2", bz2.compress, None),      # bz2's OSError("Invalid data stream")
])
def test_corrupt_compressed_file(tmp_path, suffix, compress, where):
    """Damage inside the compressed stream is the documented ValueError
    that names the file, not a raw zlib.error or a bare OSError (the
    commands printed a traceback)."""
    blob = bytearray(compress(b"".join(b"%d 1:%d 2:0.5\n" % (1 - 2 * (i % 2), i)
                                       for i in range(2000))))
    position = len(blob) // 2 if where is None else where
    blob[position] ^= 0x55 if where is not None else 0xFF
    path = tmp_path / ("bad" + suffix)
    path.write_bytes(bytes(blob))
    with pytest.raises(ValueError, match=r"bad\.(gz|bz2): line \d+: cannot decompress"):
        load_svmlight_file(path)


class _ShortReads(io.RawIOBase):
    """A stream whose read returns at most ``step`` bytes (an unbuffered pipe)."""

    def __init__(self, data, step):
        self.data, self.position, self.step = data, 0, step

    def readable(self):
        return True

    def read(self, n=-1):
        stop = min(len(self.data), self.position + self.step)
        out = self.data[self.position:stop]
        self.position = stop
        return out


def test_short_reads_of_long_lines():
    """Short reads of lines longer than a read: the same matrix (the
    unfinished line's pieces are joined once it ends; re-joining at every
    read had made a 59 MB line from an unbuffered pipe take 15 s)."""
    text = (b"1 " + b" ".join(b"%d:%d" % (i, i) for i in range(1, 3000)) + b"\n"
            + b"-1 5:2\n" + b"1 " + b" ".join(b"%d:1" % i for i in range(1, 900)))
    X_ref, y_ref = load_bytes(text)
    for step in (1, 13, 4096):
        X, y = load_svmlight_file(_ShortReads(text, step))
        assert_same_csr(X, X_ref)
        np.testing.assert_array_equal(y, y_ref)


# ---------------------------------------------------------------------------
# Arguments and inputs

def test_input_file_objects(tmp_path):
    text = b"1 1:2 3:4\n-1 2:1\n"
    expected = np.array([[2, 0, 4], [0, 1, 0]], dtype=float)
    path = tmp_path / "plain.txt"
    path.write_bytes(text)
    with open(path, "rb") as fh:
        X, y = load_svmlight_file(fh)
    np.testing.assert_array_equal(X.toarray(), expected)
    X, y = load_svmlight_file(str(path))
    np.testing.assert_array_equal(X.toarray(), expected)
    X, y = load_svmlight_file(os.fsencode(str(path)))
    np.testing.assert_array_equal(X.toarray(), expected)
    # A decompressing file object is read as-is.
    X, y = load_svmlight_file(gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(text))))
    np.testing.assert_array_equal(X.toarray(), expected)
    np.testing.assert_array_equal(y, [1, -1])


def test_text_mode_file_is_rejected(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_bytes(b"1 1:2\n")
    with open(path, "r") as fh, pytest.raises(TypeError, match="binary mode"):
        load_svmlight_file(fh)


@pytest.mark.parametrize("kwargs, exc, message", [
    ({"n_features": -1}, ValueError, "n_features"),
    ({"n_features": 2.5}, ValueError, "n_features"),
    ({"n_features": True}, ValueError, "n_features"),
    ({"dtype": np.int32}, ValueError, "dtype"),
], ids=["negative n_features", "float n_features", "bool n_features", "int dtype"])
def test_bad_arguments(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        load_bytes(b"1 1:1\n", **kwargs)


def test_bad_f():
    with pytest.raises(TypeError, match="f must be"):
        load_svmlight_file(12)
    with pytest.raises(FileNotFoundError):
        load_svmlight_file("/nonexistent/file.txt")


# ---------------------------------------------------------------------------
# Writing

def test_dump_format():
    X = np.array([[0, 1.5, 0], [0, 0, 0], [-2, 0.1, 3]])
    y = np.array([1, -1, 0.5])
    out = io.BytesIO()
    dump_svmlight_file(X, y, out)
    assert out.getvalue() == b"1 2:1.5\n-1\n0.5 1:-2 2:0.10000000000000001 3:3\n"
    out = io.BytesIO()
    dump_svmlight_file(sp.csr_matrix(X), y, out)
    assert out.getvalue() == b"1 2:1.5\n-1\n0.5 1:-2 2:0.10000000000000001 3:3\n"


def test_dump_label_formatting():
    y = np.array([1.0, -1.0, 0.0, -0.0, 3.0, 1e20, 0.1, -2.5e-7, 2.0 ** 60])
    X = sp.csr_matrix((len(y), 1))
    out = io.BytesIO()
    dump_svmlight_file(X, y, out)
    lines = out.getvalue().split(b"\n")[:-1]
    assert lines[:5] == [b"1", b"-1", b"0", b"0", b"3"]
    _, y2 = load_bytes(out.getvalue())
    np.testing.assert_array_equal(y2, y)


@pytest.mark.parametrize("suffix, magic", [
    (".txt", None), (".gz", b"\x1f\x8b"), (".bz2", b"BZh"), (".xz", b"\xfd7zXZ"),
    (".lzma", None),
])
def test_compressed_round_trip(tmp_path, suffix, magic):
    X, y = load_svmlight_file(DATA / "heart_scale.xz")
    path = tmp_path / ("heart" + suffix)
    dump_svmlight_file(X, y, path)
    if magic is not None:
        assert path.read_bytes().startswith(magic)
    X2, y2 = load_svmlight_file(path, n_features=X.shape[1])
    assert_same_csr(X2, X)
    np.testing.assert_array_equal(y2, y)
    # Only the target file is left in the directory.
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_compressed_files_are_decompressed_by_extension(tmp_path):
    text = b"1 1:2 3:4\n-1 2:1\n"
    for name, compress in [("a.gz", gzip.compress), ("a.bz2", bz2.compress),
                           ("a.xz", lzma.compress), ("a", bytes)]:
        (tmp_path / name).write_bytes(compress(text))
        X, y = load_svmlight_file(tmp_path / name)
        np.testing.assert_array_equal(X.toarray(), [[2, 0, 4], [0, 1, 0]])


def test_dump_round_trip_shipped_file(tmp_path):
    X, y = load_svmlight_file(DATA / "splice.xz")
    out = io.BytesIO()
    dump_svmlight_file(X, y, out)
    X2, y2 = load_bytes(out.getvalue(), n_features=X.shape[1])
    assert_same_matrix(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_dump_does_not_modify_input():
    # Unsorted indices, a duplicate and an explicit zero.
    X = sp.csr_matrix((np.array([3.0, 1.0, 0.0, 2.0]), np.array([2, 0, 1, 0]),
                       np.array([0, 3, 4])), shape=(2, 3))
    X.has_sorted_indices = False
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    y = np.array([1.0, 2.0])
    out = io.BytesIO()
    dump_svmlight_file(X, y, out)
    assert out.getvalue() == b"1 1:1 3:3\n2 1:2\n"
    for a, b in zip((X.data, X.indices, X.indptr), before):
        np.testing.assert_array_equal(a, b)


def test_dump_duplicates_are_summed():
    X = sp.coo_matrix((np.array([1.0, 2.0]), (np.array([0, 0]), np.array([1, 1]))),
                      shape=(1, 2))
    out = io.BytesIO()
    dump_svmlight_file(X, [0], out)
    assert out.getvalue() == b"0 2:3\n"


def test_dump_precomputed_writes_every_column():
    K = np.array([[1.0, 4.0, 0.0], [2.0, 0.0, 3.0]])
    y = np.array([1.0, -1.0])
    out = io.BytesIO()
    dump_svmlight_file(K, y, out, precomputed=True)
    assert out.getvalue() == b"1 0:1 1:4 2:0\n-1 0:2 1:0 2:3\n"
    X2, y2 = load_bytes(out.getvalue(), precomputed=True)
    np.testing.assert_array_equal(X2.toarray(), K)
    np.testing.assert_array_equal(y2, y)


@pytest.mark.parametrize("X, y, exc, message", [
    (np.ones((2, 2)), np.ones(3), ValueError, "3 labels but X has 2 rows"),
    (np.ones((2, 2)), np.ones((2, 1)), ValueError, "y must be 1-dimensional"),
    (np.ones(2), np.ones(2), ValueError, "X must be 2-dimensional"),
    (np.array([[1.0, np.nan]]), np.ones(1), ValueError, "X must hold only finite"),
    (sp.csr_matrix(np.array([[np.inf]])), np.ones(1), ValueError, "X must hold only finite"),
    (np.ones((1, 1)), np.array([np.nan]), ValueError, "y must hold only finite"),
], ids=["length", "y 2-d", "X 1-d", "X nan", "X sparse inf", "y nan"])
def test_dump_bad_inputs_write_nothing(tmp_path, X, y, exc, message):
    path = tmp_path / "out.txt"
    with pytest.raises(exc, match=message):
        dump_svmlight_file(X, y, path)
    assert list(tmp_path.iterdir()) == []


def test_dump_refuses_indices_the_reader_refuses(tmp_path):
    """A value in column 2**31 - 1 has file index 2**31, beyond a C int:
    it was written, and the file could not be read back ("out of range")."""
    def one_entry(column, value=1.0):
        return sp.csr_matrix((np.array([value]), np.array([column], dtype=np.int64),
                              np.array([0, 1])), shape=(1, 2 ** 31 + 5))
    path = tmp_path / "out.txt"
    with pytest.raises(ValueError, match="column 2147483647, file index 2147483648"):
        dump_svmlight_file(one_entry(2 ** 31 - 1), [1.0], path)
    assert list(tmp_path.iterdir()) == []
    # the last index a C int holds, and a zero (not written) beyond it
    for column, value in [(2 ** 31 - 2, 1.0), (2 ** 31 + 1, 0.0)]:
        dump_svmlight_file(one_entry(column, value), [1.0], path)
        X, y = load_svmlight_file(path, n_features=2 ** 31 + 5)
        assert X.nnz == int(value != 0) and X[0, column] == value


def test_dump_failure_leaves_no_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "out.txt.gz"
    path.write_bytes(b"old content")

    def failing_write(out, X, y, precomputed):
        out.write(b"1 1:1\n")
        raise RuntimeError("disk full")

    monkeypatch.setattr(datasets, "_write_rows", failing_write)
    with pytest.raises(RuntimeError, match="disk full"):
        dump_svmlight_file(np.ones((2, 2)), np.ones(2), path)
    assert path.read_bytes() == b"old content"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt.gz"]


def test_output_files_write_through_links_and_fifos_as_fopen(tmp_path):
    """atomic_output replaces a regular file whole, but writes through a
    symbolic link (the link stays, its target changes) and into a FIFO
    (LIBSVM scripts pass /dev/stdout or /dev/null as output files); a
    directory or an empty name is an OSError naming the path."""
    import threading
    from svmscreen._files import atomic_output
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with atomic_output(link) as handle:
        handle.write(b"new")
    assert link.is_symlink() and target.read_text() == "new"

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with atomic_output(fifo) as handle:
        handle.write(b"through the pipe")
    reader.join(timeout=10)
    assert received == [b"through the pipe"] and fifo.is_fifo()

    for bad, exc in [(tmp_path, IsADirectoryError), ("", FileNotFoundError),
                     (tmp_path / "missing" / "out.txt", FileNotFoundError)]:
        with pytest.raises(exc) as info:
            with atomic_output(bad) as handle:
                handle.write(b"x")
        assert info.value.filename == os.fspath(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.txt", "target.txt"]


def test_dump_rejects_text_files(tmp_path):
    with open(tmp_path / "t.txt", "w") as fh, pytest.raises(TypeError, match="binary"):
        dump_svmlight_file(np.ones((1, 1)), [1], fh)


def test_dump_many_rows_crosses_write_blocks(monkeypatch):
    monkeypatch.setattr(datasets, "_WRITE_ROWS", 3)
    rng = np.random.default_rng(0)
    X = sp.random(20, 6, density=0.4, format="csr", random_state=rng)
    y = rng.integers(-2, 3, 20).astype(float)
    out = io.BytesIO()
    dump_svmlight_file(X, y, out)
    X2, y2 = load_bytes(out.getvalue(), n_features=6)
    assert_same_matrix(X2, X)
    np.testing.assert_array_equal(y2, y)


@st.composite
def sparse_problems(draw):
    n_rows = draw(st.integers(0, 8))
    n_cols = draw(st.integers(0, 8))
    mask = draw(st.lists(st.booleans(), min_size=n_rows * n_cols,
                         max_size=n_rows * n_cols))
    values = draw(st.lists(finite, min_size=n_rows * n_cols, max_size=n_rows * n_cols))
    dense = np.where(np.array(mask, dtype=bool), np.array(values, dtype=float), 0.0)
    dense = dense.reshape(n_rows, n_cols)
    y = np.array(draw(st.lists(st.one_of(st.integers(-5, 5).map(float), finite),
                               min_size=n_rows, max_size=n_rows)), dtype=float)
    return dense, y


@settings(max_examples=200, deadline=None)
@given(problem=sparse_problems(), as_sparse=st.booleans())
def test_dump_load_round_trip_is_exact(problem, as_sparse):
    dense, y = problem
    X = sp.csr_matrix(dense) if as_sparse else dense
    out = io.BytesIO()
    dump_svmlight_file(X, y, out)
    X2, y2 = load_bytes(out.getvalue(), n_features=dense.shape[1])
    assert X2.shape == dense.shape
    np.testing.assert_array_equal(X2.toarray(), dense)
    assert X2.nnz == np.count_nonzero(dense)
    np.testing.assert_array_equal(y2, y)


@settings(max_examples=50, deadline=None)
@given(problem=sparse_problems())
def test_dump_load_round_trip_precomputed(problem):
    dense, y = problem
    out = io.BytesIO()
    dump_svmlight_file(dense, y, out, precomputed=True)
    X2, y2 = load_bytes(out.getvalue(), precomputed=True, n_features=dense.shape[1])
    np.testing.assert_array_equal(X2.toarray(), dense)
    np.testing.assert_array_equal(y2, y)


# ---------------------------------------------------------------------------
# Shipped datasets by name

def test_load_dataset():
    X, y = load_dataset("heart_scale")
    X_ref, y_ref = load_svmlight_file(DATA / "heart_scale.xz")
    assert_same_csr(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    X, _ = load_dataset("svmguide1.t", n_features=10)
    assert X.shape == (4000, 10)


def test_load_dataset_directories(tmp_path, monkeypatch):
    package_root = Path(datasets.__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SVMSCREEN_DATA", raising=False)
    assert datasets._dataset_dirs() == [tmp_path / "data", package_root / "data",
                                        tmp_path.parent / "shared" / "data",
                                        package_root.parent / "shared" / "data"]
    monkeypatch.setenv("SVMSCREEN_DATA", str(tmp_path / "mine"))
    assert datasets._dataset_dirs()[0] == tmp_path / "mine"


def test_load_dataset_falls_back_to_second_directory(tmp_path, monkeypatch):
    first, second = tmp_path / "data", tmp_path / "shared" / "data"
    first.mkdir()
    second.mkdir(parents=True)
    (first / "both.xz").write_bytes(lzma.compress(b"1 1:1\n"))
    (second / "both.xz").write_bytes(lzma.compress(b"2 2:2\n"))
    (second / "only_shared.xz").write_bytes(lzma.compress(b"3 3:3\n"))
    monkeypatch.setattr(datasets, "_dataset_dirs", lambda: [first, second])
    _, y = load_dataset("both")
    np.testing.assert_array_equal(y, [1])
    X, y = load_dataset("only_shared")
    np.testing.assert_array_equal(y, [3])
    assert X.shape == (1, 3)


def test_load_dataset_missing_lists_where_it_looked():
    with pytest.raises(FileNotFoundError) as info:
        load_dataset("no_such_dataset")
    message = str(info.value)
    assert str(DATA / "no_such_dataset.xz") in message
    assert str(Path("shared") / "data" / "no_such_dataset.xz") in message
    with pytest.raises(ValueError, match="name"):
        load_dataset("../data/heart_scale")


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits and hard links")
def test_atomic_output_keeps_mode_and_hard_links(tmp_path):
    """As fopen(path, "w"): a replaced file keeps its permission bits (a
    private model stays private), and a file with another hard link is
    written in place, which the link then shows."""
    from svmscreen._files import atomic_output
    private = tmp_path / "private"
    private.write_bytes(b"old")
    os.chmod(private, 0o600)
    with atomic_output(private) as handle:
        handle.write(b"new")
    assert private.read_bytes() == b"new" and (os.stat(private).st_mode & 0o777) == 0o600
    linked, link = tmp_path / "linked", tmp_path / "link"
    linked.write_bytes(b"old")
    os.link(linked, link)
    with atomic_output(linked) as handle:
        handle.write(b"new")
    assert link.read_bytes() == b"new" and os.stat(linked).st_ino == os.stat(link).st_ino


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_atomic_output_leaves_no_temporary_file_when_keeping_the_mode_fails(tmp_path,
                                                                             monkeypatch):
    """The replaced file's mode was copied to the temporary file before the
    block that removes it on error: a failing chmod (or a Ctrl-C there)
    left a .tmp file beside the output, and its descriptor open."""
    from svmscreen import _files
    out = tmp_path / "model"
    out.write_bytes(b"old")

    def refuse(*args):
        raise PermissionError(errno.EPERM, "refused")

    monkeypatch.setattr(_files.os, "chmod", refuse)
    with pytest.raises(PermissionError):
        with _files.atomic_output(out) as handle:
            handle.write(b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    assert out.read_bytes() == b"old"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_atomic_output_in_a_directory_without_write_permission(tmp_path, monkeypatch):
    """As fopen(path, "w") in a directory where no file can be created: a
    writable existing file is overwritten in place; a new one is refused
    with a PermissionError naming the path, not the temporary file.  (The
    directory's refusal is simulated: the tests may run as root.)"""
    from svmscreen import _files
    real_open = os.open

    def locked(path, flags, *args):
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args)

    out = tmp_path / "model"
    out.write_bytes(b"old")
    inode = os.stat(out).st_ino
    monkeypatch.setattr(_files.os, "open", locked)
    with _files.atomic_output(out) as handle:
        handle.write(b"new")
    assert out.read_bytes() == b"new" and os.stat(out).st_ino == inode
    with pytest.raises(PermissionError) as info:
        with _files.atomic_output(tmp_path / "new.model") as handle:
            handle.write(b"new")
    assert info.value.filename == str(tmp_path / "new.model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".lzma"])
def test_plain_text_with_a_compressed_name_is_read(suffix, tmp_path):
    """LIBSVM's tools read a file whatever its name: plain text named
    data.gz had been refused as a file that cannot be decompressed."""
    path = tmp_path / ("data" + suffix)
    path.write_text("1 1:0.5 2:1\n-1 1:-0.5\n")
    X, y = load_svmlight_file(path)
    np.testing.assert_array_equal(y, [1.0, -1.0])
    np.testing.assert_array_equal(X.toarray(), [[0.5, 1.0], [-0.5, 0.0]])


@pytest.mark.parametrize("text", [b"1 1:2\n", b"+1\n-1\n", b"1"])
def test_short_plain_text_named_lzma_is_read(text, tmp_path):
    # shorter than the .lzma header, it decoded to nothing without an error
    # and was then refused ("Input format not supported by decoder")
    path = tmp_path / "data.lzma"
    path.write_bytes(text)
    X, y = load_svmlight_file(path)
    X_plain, y_plain = load_bytes(text)
    assert_same_csr(X, X_plain)
    np.testing.assert_array_equal(y, y_plain)


def test_lzma_alone_files_are_still_decompressed(tmp_path):
    # .lzma has no magic bytes: its first bytes are tried as LZMA
    path = tmp_path / "data.lzma"
    with lzma.open(path, "wb", format=lzma.FORMAT_ALONE) as fh:
        fh.write(b"1 1:0.5 2:1\n-1 1:-0.5\n")
    X, y = load_svmlight_file(path)
    np.testing.assert_array_equal(X.toarray(), [[0.5, 1.0], [-0.5, 0.0]])


def test_parser_refuses_a_leading_count_whose_buffer_size_overflows():
    """Parser(leading=m) keeps m numbers a row: at m = 2**61 the byte count
    of its first rows wrapped around to 0, and the numbers of a line were
    written past the end of that allocation (a heap overflow)."""
    from svmscreen._svmlight import Parser
    with pytest.raises(ValueError, match="leading must be at most"):
        Parser("x", leading=2 ** 61)
    parser = Parser("x", leading=3)
    parser.feed(b"1 2 3 1:1\n", 10)
    labels, data, _, indptr, _ = parser.finish()
    np.testing.assert_array_equal(labels, [1, 2, 3])
    np.testing.assert_array_equal(indptr, [0, 1])


def test_dump_writes_in_the_c_locale(tmp_path):
    """dump_svmlight_file's values are formatted by C's snprintf, which
    follows LC_NUMERIC: in a comma locale (de_DE) it wrote "1:0,5", a file
    that reads back as an error (in a child process, as the locale is the
    process's)."""
    import subprocess
    import sys
    from conftest import comma_locale_env
    name, env = comma_locale_env(tmp_path)
    code = ("import locale, numpy as np\n"
            f"locale.setlocale(locale.LC_NUMERIC, {name!r})\n"
            "from svmscreen import dump_svmlight_file\n"
            "dump_svmlight_file(np.array([[0.5, 0.0], [0.0, -2.25]]), [1, -1], 'd.txt')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "d.txt").read_text() == "1 1:0.5\n-1 2:-2.25\n"
