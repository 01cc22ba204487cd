"""The command-line tools ``svmscreen-train``, ``svmscreen-predict`` and
``svmscreen-scale``: LIBSVM's ``svm-train``, ``svm-predict`` and
``svm-scale`` with the same options, messages and output files.

Each ``*_main(argv=None)`` parses ``argv`` (default ``sys.argv[1:]``) as the
C tool does (options first, each with one value except ``-q``), prints what
it prints, and returns the exit status (0, or 1 after an error message on
stderr, or 130 without a message on Ctrl-C, as a shell reports the C tool
killed by SIGINT), so that ``sys.exit(train_main())`` is the console script.

Deliberate differences: malformed input names the file and line and never
leaves a partial output file (outputs are written to a temporary file and
renamed); option values must parse (C's ``atoi``/``atof`` read garbage as
0, and ``1_0`` as 1, which Python reads as 10).
"""
import io
import os
import re
import sys

import numpy as np
import scipy.sparse as sp

from svmscreen._files import atomic_output, detach_stdout
from svmscreen._svmlight import format_rows
from svmscreen.datasets import load_svmlight_file
from svmscreen.libsvm.model import (cross_validation, int_labels, predict,
                                    predict_probability, resolve_parameters, train)
from svmscreen.libsvm.modelfile import load_model, save_model
from svmscreen.libsvm.svm import (C_SVC, EPSILON_SVR, NU_SVC, NU_SVR, ONE_CLASS, PRECOMPUTED,
                                  OptionError, c_number, check_parameter, print_null,
                                  print_stdout, svm_parameter, svm_problem)

__all__ = ["train_main", "predict_main", "scale_main"]

TRAIN_USAGE = """\
Usage: svmscreen-train [options] training_set_file [model_file]
options:
-s svm_type : set type of SVM (default 0)
	0 -- C-SVC		(multi-class classification)
	1 -- nu-SVC		(multi-class classification)
	2 -- one-class SVM
	3 -- epsilon-SVR	(regression)
	4 -- nu-SVR		(regression)
-t kernel_type : set type of kernel function (default 2)
	0 -- linear: u'*v
	1 -- polynomial: (gamma*u'*v + coef0)^degree
	2 -- radial basis function: exp(-gamma*|u-v|^2)
	3 -- sigmoid: tanh(gamma*u'*v + coef0)
	4 -- precomputed kernel (kernel values in training_set_file)
-d degree : set degree in kernel function (default 3)
-g gamma : set gamma in kernel function (default 1/num_features)
-r coef0 : set coef0 in kernel function (default 0)
-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)
-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR (default 0.5)
-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)
-m cachesize : set cache memory size in MB (default 100)
-e epsilon : set tolerance of termination criterion (default 0.001)
-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)
-b probability_estimates : whether to train a SVC or SVR model for probability estimates, 0 or 1 (default 0)
-wi weight : set the parameter C of class i to weight*C, for C-SVC (default 1)
-v n: n-fold cross validation mode
-q : quiet mode (no outputs)
"""

PREDICT_USAGE = """\
Usage: svmscreen-predict [options] test_file model_file output_file
options:
-b probability_estimates: whether to predict probability estimates, 0 or 1 (default 0); for one-class SVM only 0 is supported
-q : quiet mode (no outputs)
"""

SCALE_USAGE = """\
Usage: svmscreen-scale [options] data_filename
options:
-l lower : x scaling lower limit (default -1)
-u upper : x scaling upper limit (default +1)
-y y_lower y_upper : y scaling limits (default: no y scaling)
-s save_filename : save scaling parameters to save_filename
-r restore_filename : restore scaling parameters from restore_filename
"""


class _Exit(Exception):
    """Stop a command with an exit status (after its message is printed)."""

    def __init__(self, status=1):
        super().__init__(status)
        self.status = status


def _fail(message):
    sys.stderr.write(message if message.endswith("\n") else message + "\n")
    raise _Exit(1)


def _usage(text):
    sys.stdout.write(text)
    raise _Exit(1)


def _check_number(option, text, usage):
    """Refuse an option value with an underscore: Python's int() and
    float() read '1_0' as 10 where the C tools' atoi/atof read 1 (and
    '0_1' as 0), so it would run with another value than svm-train's."""
    if "_" in text:
        sys.stderr.write("option %s needs a number, got %r\n" % (option, text))
        _usage(usage)


def _run(body, argv):
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    try:
        try:
            body(argv)
        except _Exit as stop:
            sys.stdout.flush()
            return stop.status
        except MemoryError:
            sys.stdout.flush()
            sys.stderr.write("can't allocate enough memory\n")
            return 1
        except (ValueError, OverflowError) as exc:
            # what svmscreen refuses and LIBSVM runs on (a kernel that
            # overflows float64, a label beyond a C int, a model file's
            # index beyond it): a message, not a traceback
            sys.stdout.flush()
            sys.stderr.write(f"Error: {exc}\n")
            return 1
        sys.stdout.flush()
        return 0
    except KeyboardInterrupt:
        # The C tools die of SIGINT without a word; the shell then reports
        # 128 + 2.  (An output file is only renamed into place once complete.)
        return 128 + 2
    except BrokenPipeError:
        return broken_pipe_exit()
    except OSError as exc:
        # stdout on a full disk (/dev/full): a message, not a traceback
        sys.stderr.write(f"can't write the output: {exc.strerror or exc}\n")
        detach_stdout()
        return 1


def broken_pipe_exit():
    """The reader of stdout went away (``svmscreen-scale ... | head``): the
    C tools end on SIGPIPE without a message; so do these, with the status
    a shell reports for it (128 + 13), and stdout pointed at /dev/null so
    that the interpreter's own final flush does not fail again."""
    detach_stdout()
    return 128 + 13


def _write_all(text):
    """``sys.stdout.write(text)``, all of it.  Unbuffered (python -u,
    PYTHONUNBUFFERED) the text layer hands a large write to the raw file
    once and drops what a pipe did not take, without an error, so a reader
    that left early went unnoticed; written in a loop on the raw file, the
    rest goes out or raises BrokenPipeError."""
    raw = getattr(sys.stdout, "buffer", None)
    if not isinstance(raw, io.RawIOBase):
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    view = memoryview(text.encode(sys.stdout.encoding or "utf-8"))
    while view:
        view = view[raw.write(view) or 0:]


def _can_open(path):
    """What fopen(path, "r") accepts and reads: an existing path that is not
    a directory (a regular file, a pipe such as /dev/stdin or <(...))."""
    return os.path.exists(path) and not os.path.isdir(path)


def _load_data(path, precomputed, what="input"):
    if not _can_open(path):
        _fail(f"can't open {what} file {path}")
    try:
        return load_svmlight_file(path, precomputed=precomputed)
    except ValueError as exc:
        _fail(f"Wrong input format: {exc}")
    except OSError as exc:
        _fail(f"can't open {what} file {path}: {exc.strerror or exc}")


# ------------------------------------------------------------------- train
def _train(argv):
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        if len(argv[i]) < 2:
            sys.stderr.write("Unknown option: -\n")
            _usage(TRAIN_USAGE)
        if argv[i][1] == "q":
            i += 1
            continue
        if argv[i][1] not in "stdgrnmcepbhvw":
            sys.stderr.write("Unknown option: -%s\n" % argv[i][1])
            _usage(TRAIN_USAGE)
        i += 2
    if i >= len(argv):
        _usage(TRAIN_USAGE)
    # Options are matched on their first letter, as svm-train's switch.
    options = []
    j = 0
    while j < i:
        option = argv[j]
        if option[1] == "q":
            options.append("-q")
            j += 1
            continue
        if option[1] == "w":
            _check_number(option, option[2:], TRAIN_USAGE)      # -wi's class label
        _check_number(option, argv[j + 1], TRAIN_USAGE)
        options.extend([option if option[1] == "w" else option[:2], argv[j + 1]])
        j += 2
    try:
        param = svm_parameter(options)
    except OptionError as exc:
        sys.stderr.write(f"{exc}\n")
        _usage(TRAIN_USAGE)
    input_file = argv[i]
    if i + 1 < len(argv):
        model_file = argv[i + 1]
    else:
        model_file = os.path.basename(input_file) + ".model"

    precomputed = param.kernel_type == PRECOMPUTED
    X, y = _load_data(input_file, precomputed)
    if param.svm_type in (C_SVC, NU_SVC):
        # svm_group_classes' (int) cast, checked here to name the file
        int_labels(y, source=input_file)
    max_index = X.shape[1] - 1 if precomputed else X.shape[1]
    prob = svm_problem.from_csr(y, X, max(max_index, 0), isKernel=precomputed)
    try:
        param = resolve_parameters(prob, param)
    except ValueError as exc:
        _fail(str(exc))
    message = check_parameter(prob, param)
    if message:
        _fail("ERROR: %s" % message)      # svm-train.c's wording

    info = _progress if param.print_func is print_stdout else param.print_func
    if param.cross_validation:
        target = cross_validation(prob, param, param.nr_fold, info)
        # 0/0 prints as C's "-nan" (c_number)
        if param.svm_type in (EPSILON_SVR, NU_SVR):
            sys.stdout.write("Cross Validation Mean squared error = %s\n"
                             % c_number("%g", _mean_squared_error(target, y)))
            sys.stdout.write("Cross Validation Squared correlation coefficient = %s\n"
                             % c_number("%g", _squared_correlation(target, y)))
        else:
            correct = int(np.count_nonzero(target == y))
            sys.stdout.write("Cross Validation Accuracy = %g%%\n" % (100.0 * correct / prob.l))
        return
    model = train(prob, param, info)
    try:
        save_model(model_file, model)
    except OSError:
        _fail("can't save model to file %s" % model_file)


def _progress(s):
    """svm-train's progress on stdout.  As C's stdio, a failed write (a full
    disk) does not stop the training: the rest goes to /dev/null and the
    model is still written.  A reader gone ends the command, as SIGPIPE
    ends svm-train."""
    try:
        print_stdout(s)
    except BrokenPipeError:
        raise
    except OSError:
        detach_stdout()


def _running_sum(values):
    """The sum of ``values`` accumulated left to right, as C's ``s += v``
    loop does (``np.sum`` adds pairwise and can round differently; on
    constant predictions the squared correlation is round-off, printed as
    svm-predict prints it only with the C loop's order)."""
    return np.float64(np.cumsum(values)[-1]) if values.shape[0] else np.float64(0.0)


def _mean_squared_error(v, y):
    """svm.cpp's sum (v - y)^2 / l: 0/0 is nan, as C's (c_number prints it)."""
    with np.errstate(all="ignore"):
        return _running_sum((v - y) * (v - y)) / np.float64(v.shape[0])


def _squared_correlation(v, y):
    """svm-predict's / svm-train -v's squared correlation coefficient, its
    sums accumulated in the C loop's order."""
    l = np.float64(v.shape[0])
    with np.errstate(all="ignore"):
        sumv, sumy = _running_sum(v), _running_sum(y)
        sumvv, sumyy, sumvy = _running_sum(v * v), _running_sum(y * y), _running_sum(v * y)
        num = (l * sumvy - sumv * sumy) * (l * sumvy - sumv * sumy)
        den = (l * sumvv - sumv * sumv) * (l * sumyy - sumy * sumy)
        return num / den


def train_main(argv=None):
    """``svmscreen-train [options] training_set_file [model_file]``."""
    return _run(_train, argv)


# ----------------------------------------------------------------- predict
def _predict(argv):
    predict_probability_flag = 0
    info = print_stdout
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        option = argv[i][1:2]
        if option == "b":
            if i + 1 >= len(argv):
                _usage(PREDICT_USAGE)
            _check_number("-b", argv[i + 1], PREDICT_USAGE)
            try:
                predict_probability_flag = int(argv[i + 1])
            except ValueError:
                sys.stderr.write("option -b needs 0 or 1, got %r\n" % argv[i + 1])
                _usage(PREDICT_USAGE)
            i += 2
        elif option == "q":
            info = print_null
            i += 1
        else:
            sys.stderr.write("Unknown option: -%s\n" % option)
            _usage(PREDICT_USAGE)
    if i >= len(argv) - 2:
        _usage(PREDICT_USAGE)
    test_file, model_file, output_file = argv[i], argv[i + 1], argv[i + 2]
    if not _can_open(test_file):
        _fail("can't open input file %s" % test_file)
    try:
        model = load_model(model_file)
    except OSError:
        _fail("can't open model file %s" % model_file)
    except ValueError as exc:
        _fail("can't load model file %s: %s" % (model_file, exc))
    if predict_probability_flag:
        if not model.is_probability_model():
            _fail("Model does not support probabiliy estimates")
    elif model.is_probability_model():
        info("Model supports probability estimates, but disabled in prediction.\n")

    X, target = _load_data(test_file, model.param.kernel_type == PRECOMPUTED)
    svm_type = model.param.svm_type
    lines = []
    if predict_probability_flag and svm_type in (C_SVC, NU_SVC, ONE_CLASS):
        labels, prob = predict_probability(model, X, info)
        if svm_type == ONE_CLASS:
            lines.append("label normal outlier\n")
        else:
            lines.append("labels" + "".join(" %d" % v for v in model.get_labels()) + "\n")
        row_format = "%g" + " %g" * prob.shape[1] + "\n"
        lines.extend(row_format % ((lab,) + tuple(p))
                     for lab, p in zip(labels.tolist(), prob.tolist()))
    else:
        if predict_probability_flag:   # regression
            info("Prob. model for test data: target value = predicted value + z,\nz: Laplace "
                 "distribution e^(-|z|/sigma)/(2sigma),sigma=%g\n" % model.probA[0])
        labels, _ = predict(model, X)
        lines.extend("%.17g\n" % v for v in labels.tolist())
    try:
        with atomic_output(output_file) as handle:
            handle.write("".join(lines).encode("ascii"))
    except OSError:
        _fail("can't open output file %s" % output_file)

    total = labels.shape[0]
    if svm_type in (EPSILON_SVR, NU_SVR):
        info("Mean squared error = %s (regression)\n"
             % c_number("%g", _mean_squared_error(labels, target)))
        info("Squared correlation coefficient = %s (regression)\n"
             % c_number("%g", _squared_correlation(labels, target)))
    else:
        correct = int(np.count_nonzero(labels == target))
        with np.errstate(all="ignore"):
            accuracy = np.float64(correct) / np.float64(total) * 100
        info("Accuracy = %s%% (%d/%d) (classification)\n"
             % (c_number("%g", accuracy), correct, total))


def predict_main(argv=None):
    """``svmscreen-predict [options] test_file model_file output_file``."""
    return _run(_predict, argv)


# ------------------------------------------------------------------- scale
_SCAN_SPACE = " \t\n\v\f\r"
_SCAN_INT = re.compile(r"[+-]?[0-9]+")
_SCAN_DOUBLE = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE)


class _Scanner:
    """fscanf's view of a text: numbers after any whitespace, newlines
    included (svm-scale reads its -r file with fscanf, not by lines)."""

    def __init__(self, text):
        self.text, self.pos = text, 0

    def skip_space(self):
        while self.pos < len(self.text) and self.text[self.pos] in _SCAN_SPACE:
            self.pos += 1

    def number(self, pattern):
        """The next %d (_SCAN_INT) or %lf (_SCAN_DOUBLE), or None."""
        self.skip_space()
        match = pattern.match(self.text, self.pos)
        if not match:
            return None
        self.pos = match.end()
        token = match.group()
        if pattern is _SCAN_INT:
            return int(token)
        if "x" in token.lower():
            sign = -1.0 if token[0] == "-" else 1.0
            return sign * float.fromhex(token.lstrip("+-"))
        return float(token)

    def doubles(self, count):
        values = []
        for _ in range(count):
            value = self.number(_SCAN_DOUBLE)
            if value is None:
                return None
            values.append(value)
        self.skip_space()                   # the format's trailing "\n"
        return values

    def line(self):
        return self.text.count("\n", 0, self.pos) + 1


def _read_restore(path):
    """The -r file, read as svm-scale.c's fscanf calls read it: (y_params
    or None, (lower, upper) or None, [(index, fmin, fmax), ...] in file
    order).  Numbers may be split or joined across lines ("x 0 1" is read);
    the feature list ends at the first entry that does not scan."""
    try:
        with open(path, "r", encoding="latin-1") as handle:
            scan = _Scanner(handle.read())
    except OSError:
        _fail("can't open file %s" % path)

    def doubles(count):
        values = scan.doubles(count)
        if values is None:
            _fail(f"ERROR: failed to read scaling parameters ({path}: line {scan.line()})")
        return values

    y_params = None
    if scan.text[:1] == "y":
        scan.pos = 1
        y_lower, y_upper = doubles(2)
        y_min, y_max = doubles(2)
        y_params = (y_lower, y_upper, y_min, y_max)
    if scan.text[scan.pos:scan.pos + 1] != "x":
        return y_params, None, []
    scan.pos += 1
    lower, upper = doubles(2)
    features = []
    while True:
        start = scan.pos
        index = scan.number(_SCAN_INT)
        values = scan.doubles(2) if index is not None else None
        if values is None:
            scan.pos = start
            break
        features.append((index, values[0], values[1]))
    return y_params, (lower, upper), features


def _scale(argv):
    lower, upper = -1.0, 1.0
    y_scaling = False
    y_lower = y_upper = 0.0
    save_filename = restore_filename = None
    i = 0
    try:
        while i < len(argv) and argv[i].startswith("-"):
            option = argv[i][1:2]
            i += 1
            if i >= len(argv):
                _usage(SCALE_USAGE)
            if option in ("l", "u", "y"):
                _check_number("-" + option, argv[i], SCALE_USAGE)
            if option == "l":
                lower = float(argv[i])
            elif option == "u":
                upper = float(argv[i])
            elif option == "y":
                y_lower = float(argv[i])
                i += 1
                if i >= len(argv):
                    _usage(SCALE_USAGE)
                _check_number("-y", argv[i], SCALE_USAGE)
                y_upper = float(argv[i])
                y_scaling = True
            elif option == "s":
                save_filename = argv[i]
            elif option == "r":
                restore_filename = argv[i]
            else:
                sys.stderr.write("unknown option\n")
                _usage(SCALE_USAGE)
            i += 1
    except ValueError:
        sys.stderr.write("option -%s needs a number, got %r\n" % (option, argv[i]))
        _usage(SCALE_USAGE)
    if not upper > lower or (y_scaling and not y_upper > y_lower):
        _fail("inconsistent lower/upper specification")
    if restore_filename is not None and save_filename is not None:
        _fail("cannot use -r and -s simultaneously")
    if len(argv) != i + 1:
        _usage(SCALE_USAGE)
    data_file = argv[i]
    if not _can_open(data_file):
        _fail("can't open file %s" % data_file)
    X, y = _load_data(data_file, precomputed=True)
    X = X.tocsr()
    n_rows = X.shape[0]
    data_max_index = X.shape[1] - 1
    has_zero_index = X.nnz > 0 and bool(np.any(X.indices == 0))
    if has_zero_index:
        sys.stderr.write("WARNING: minimal feature index is 0, but indices should start "
                         "from 1\n")

    restored = None
    if restore_filename is not None:
        restored = _read_restore(restore_filename)
    restored_max = max((f[0] for f in restored[2]), default=0) if restored else 0
    max_index = max(data_max_index, restored_max, 0)

    # feature_min/max over the data, implicit zeros included (index 0: only
    # the values written, as svm-scale's loops never visit it otherwise).
    width = max_index + 1
    Xw = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(n_rows, width))
    present = np.bincount(Xw.indices, minlength=width)
    feature_max = np.full(width, -np.finfo(np.float64).max)
    feature_min = np.full(width, np.finfo(np.float64).max)
    if Xw.nnz:
        np.maximum.at(feature_max, Xw.indices, Xw.data)
        np.minimum.at(feature_min, Xw.indices, Xw.data)
    implicit = present < n_rows
    implicit[0] = False
    feature_max[implicit] = np.maximum(feature_max[implicit], 0.0)
    feature_min[implicit] = np.minimum(feature_min[implicit], 0.0)
    y_max = float(y.max()) if n_rows else -np.finfo(np.float64).max
    y_min = float(y.min()) if n_rows else np.finfo(np.float64).max

    if restored is not None:
        y_params, x_limits, features = restored
        if y_params is not None:
            y_lower, y_upper, y_min, y_max = y_params
            y_scaling = True
        if x_limits is not None:
            lower, upper = x_limits
            # svm-scale.c, entry by entry in file order: a feature that varies
            # in the data and is skipped over (absent from the file, or behind
            # the previous entry's index) is warned about and scaled to 0 (its
            # range set to [0, 0], so that it is skipped as a constant).
            def drop_varying(first, stop):
                if first >= stop:
                    return
                varying = feature_min[first:stop] != feature_max[first:stop]
                for missing in np.flatnonzero(varying) + first:
                    sys.stderr.write(
                        "WARNING: feature index %d appeared in file %s was not seen in "
                        "the scaling factor file %s. The feature is scaled to 0.\n"
                        % (missing, data_file, restore_filename))
                    feature_min[missing] = feature_max[missing] = 0.0

            next_index = 1
            for index, f_min, f_max in features:
                if index < 0:
                    continue        # C writes outside its arrays; ignored here
                drop_varying(next_index, min(index, width))
                feature_min[index], feature_max[index] = f_min, f_max
                next_index = index + 1
            drop_varying(next_index, width)

    if save_filename is not None:
        text = []
        if y_scaling:
            text.append("y\n%.17g %.17g\n%.17g %.17g\n" % (y_lower, y_upper, y_min, y_max))
        text.append("x\n%.17g %.17g\n" % (lower, upper))
        for index in range(1, width):
            if feature_min[index] != feature_max[index]:
                text.append("%d %.17g %.17g\n" % (index, feature_min[index],
                                                  feature_max[index]))
        try:
            with atomic_output(save_filename) as handle:
                handle.write("".join(text).encode("ascii"))
        except OSError:
            _fail("can't open file %s" % save_filename)
        if has_zero_index:
            sys.stderr.write("WARNING: scaling factors with indices smaller than 1 are not "
                             "stored to the file %s.\n" % save_filename)

    targets = y.astype(np.float64).copy()
    if y_scaling:
        with np.errstate(all="ignore"):
            scaled_y = y_lower + (y_upper - y_lower) * (targets - y_min) / (y_max - y_min)
        scaled_y[targets == y_max] = y_upper
        scaled_y[targets == y_min] = y_lower
        targets = scaled_y

    with np.errstate(over="ignore"):       # unused index 0: -DBL_MAX - DBL_MAX
        span = feature_max - feature_min
    skip = feature_max == feature_min

    def scaled(values, columns):
        """svm-scale's output value of ``values`` in ``columns`` (0 where the
        feature is skipped as constant)."""
        with np.errstate(all="ignore"):
            out = lower + (upper - lower) * (values - feature_min[columns]) / span[columns]
        out = np.where(values == feature_max[columns], upper, out)
        out = np.where(values == feature_min[columns], lower, out)
        return np.where(skip[columns], 0.0, out)

    # What an absent entry (a 0) becomes, per column: the columns where it is
    # not 0 are written on every row (dense, as svm-scale writes them); the
    # others only where a row has an entry, so wide sparse data is never
    # made dense.  Index 0 is only written where the row wrote it.
    zero_scaled = scaled(np.zeros(width), np.arange(width))
    zero_scaled[0] = 0.0
    is_dense = zero_scaled != 0.0
    dense_columns = np.flatnonzero(is_dense)
    new_nonzeros = 0
    block = max(1, (1 << 20) // max(dense_columns.size, 1))
    for start in range(0, n_rows, block):
        stop = min(n_rows, start + block)
        rows = Xw[start:stop]
        # entries of the sparse columns, as stored (a stored 0 scales as an
        # absent one: to 0 in these columns)
        sparse_entry = ~is_dense[rows.indices]
        entry_columns = rows.indices[sparse_entry]
        entry_values = scaled(rows.data[sparse_entry], entry_columns)
        entry_rows = np.repeat(np.arange(stop - start), np.diff(rows.indptr))[sparse_entry]
        if dense_columns.size:
            dense_values = scaled(rows[:, dense_columns].toarray(), dense_columns)
            entry_rows = np.concatenate([entry_rows,
                                         np.repeat(np.arange(stop - start), dense_columns.size)])
            entry_columns = np.concatenate([entry_columns,
                                            np.tile(dense_columns, stop - start)])
            entry_values = np.concatenate([entry_values, dense_values.ravel()])
        keep = entry_values != 0.0
        entry_rows, entry_columns, entry_values = (entry_rows[keep], entry_columns[keep],
                                                   entry_values[keep])
        order = np.lexsort((entry_columns, entry_rows))
        bounds = np.searchsorted(entry_rows[order], np.arange(stop - start + 1))
        new_nonzeros += int(bounds[-1])
        # formatted in C: "%d:%g " % entry in Python took 300 ns an entry, 3
        # to 4 times svm-scale's time on the dense output of -l -1 (a9a,
        # sector.scale)
        labels = [b"%.17g" % t for t in targets[start:stop].tolist()]
        text = format_rows(labels, np.ascontiguousarray(entry_values[order], dtype=np.float64),
                           entry_columns[order].astype(np.int64), bounds.astype(np.int64),
                           0, stop - start, 0, scale_style=True)
        _write_all(text.decode("ascii"))
    if new_nonzeros > X.nnz:
        sys.stderr.write("WARNING: original #nonzeros %d\n       > new      #nonzeros %d\n"
                         "If feature values are non-negative and sparse, use -l 0 rather "
                         "than the default -l -1\n" % (X.nnz, new_nonzeros))


def scale_main(argv=None):
    """``svmscreen-scale [options] data_filename`` (scaled data on stdout)."""
    return _run(_scale, argv)
