"""Drop-in for ``libsvm.svmutil``: a script written for

    from libsvm.svmutil import *

runs unchanged with ``from svmscreen.libsvm.svmutil import *`` (or
``from svmscreen.svmutil import *``) and gets LIBSVM's answers: the same
labels, decision values to solver tolerance, the same model files, the same
printed messages.

Differences from libsvm's binding, all deliberate:

* feature index 0 outside a precomputed kernel is refused (LIBSVM's
  documented indices start at 1; it accepts 0 unchecked), with an error
  naming the row (``x[i]``) of list or dict data, or the line of a data
  file (the commands) or model file.  A CSR matrix has no index 0 to
  refuse: ``svm_read_problem(..., return_scipy=True)`` of a file with
  ``0:`` gives 0-based columns, as libsvm's;
* ``svm_read_problem`` refuses, naming the line, what LIBSVM's format
  forbids or its C reader cannot hold and libsvm's Python reader lets
  through: indices not ascending or repeated, beyond a C int, values that
  are not finite, and Python-only literals such as ``1_000``;
* ``svm_save_model`` raises ``OSError`` when it cannot write (libsvm
  returns silently);
* malformed model files raise ``ValueError`` naming the line (libsvm
  returns None); a missing model file still prints "can't open model file"
  and returns None;
* the multi-class nu-SVC prediction crash of ``svm_predict`` (a one-slot
  buffer for k(k-1)/2 decision values) is not copied: every pair's value is
  returned;
* a precomputed kernel given as a scipy CSR matrix is read by column
  index: a test row whose serial-number column 0 holds an implicit zero
  (not stored) predicts as its dense copy, where libsvm's binding reads the
  stored entries by position and shifts the row's kernel values (decision
  values off by up to 4 on a random kernel);
* complex x (an ndarray or a scipy sparse matrix) or y is refused with a
  TypeError naming it; libsvm trains on the real parts, with numpy's
  ComplexWarning only;
* a negative, NaN or infinite class weight (``-wi``) is refused with a
  ValueError naming the class, whatever the svm type (libsvm trains on it:
  ``-w1 -1`` gives nSV = 0 and rho = inf; and ignores weights outside
  C-SVC);
* ``svm_train(prob, param)`` leaves the caller's ``param`` as it was:
  libsvm's writes the default gamma (1/n, n the largest feature index of
  prob) into ``param.gamma``, so a parameter object reused for a problem
  of another n trains there with the first problem's gamma; here each
  problem gets its own 1/n, as it does when the options are a string
  (the trained model's ``param.gamma`` holds the value used, as libsvm's);
* the low-level ctypes layer (``libsvm.svm_train`` on pointers) does not
  exist; ``gen_svm_nodearray`` returns a dict that ``svm_predict`` accepts.
"""
import numpy as np
import scipy.sparse as sp

from svmscreen.libsvm import commonutil as _commonutil
from svmscreen.libsvm import svm as _svm
from svmscreen.libsvm._rand import srand
from svmscreen.libsvm.commonutil import (csr_find_scale_param, csr_scale, evaluations,
                                         evaluations_scipy, svm_read_problem)
from svmscreen.libsvm.model import (cross_validation, predict, predict_probability,
                                    resolve_parameters, train)
from svmscreen.libsvm.modelfile import load_model, save_model
from svmscreen.libsvm.svm import (C_SVC, EPSILON_SVR, LINEAR, NU_SVC, NU_SVR, ONE_CLASS,
                                  POLY, PRECOMPUTED, RBF, SIGMOID, as_index_csr, as_labels,
                                  check_parameter, gen_svm_nodearray, kernel_names,
                                  print_null, svm_forms, svm_model, svm_node, svm_parameter,
                                  svm_problem, toPyModel)

__all__ = (["svm_load_model", "svm_predict", "svm_save_model", "svm_train", "srand"]
           + list(_svm.__all__) + list(_commonutil.__all__))


def svm_train(arg1, arg2=None, arg3=None):
    """
    svm_train(y, x [, options]) -> model | ACC | MSE
    svm_train(prob [, options]) -> model | ACC | MSE
    svm_train(prob, param) -> model | ACC | MSE

    Train an SVM model from data (y, x) or an svm_problem prob using
    'options' or an svm_parameter param.  If '-v' is specified in 'options'
    (cross validation), the accuracy (ACC, in %) is returned.

    y: a list/tuple/ndarray of l true labels (type must be int/double).
    x: a list/tuple of l training instances (each a list/tuple or dict), or
       an l * n numpy ndarray or scipy sparse matrix.

    options:
        -s svm_type : set type of SVM (default 0)
            0 -- C-SVC        (multi-class classification)
            1 -- nu-SVC       (multi-class classification)
            2 -- one-class SVM
            3 -- epsilon-SVR  (regression)
            4 -- nu-SVR       (regression)
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
        -b probability_estimates : whether to train a model for probability
            estimates, 0 or 1 (default 0)
        -wi weight : set the parameter C of class i to weight*C (default 1)
        -v n: n-fold cross validation mode
        -q : quiet mode (no outputs)

    The random shuffles of -b 1 and -v use C's rand() sequence (glibc,
    unseeded = srand(1)), shared by every call as in a C process; call
    ``srand(seed)`` to reseed.
    """
    if isinstance(arg1, (list, tuple, np.ndarray)):
        if not (isinstance(arg2, (list, tuple, np.ndarray)) or sp.issparse(arg2)):
            raise TypeError(f"type of x: {type(arg2)} is not supported!")
        param = svm_parameter(arg3)
        prob = svm_problem(arg1, arg2, isKernel=(param.kernel_type == PRECOMPUTED))
    elif isinstance(arg1, svm_problem):
        prob = arg1
        param = arg2 if isinstance(arg2, svm_parameter) else svm_parameter(arg2)
    else:
        raise TypeError("Wrong types for the arguments")
    param = resolve_parameters(prob, param)
    message = check_parameter(prob, param)
    if message:
        raise ValueError("Error: %s" % message)
    info = param.print_func
    if param.cross_validation:
        target = cross_validation(prob, param, param.nr_fold, info)
        ACC, MSE, SCC = evaluations(prob.y, target)
        if param.svm_type in (EPSILON_SVR, NU_SVR):
            print("Cross Validation Mean squared error = %g" % MSE)
            print("Cross Validation Squared correlation coefficient = %g" % SCC)
            return MSE
        print("Cross Validation Accuracy = %g%%" % ACC)
        return ACC
    return train(prob, param, info)


def svm_predict(y, x, m, options=""):
    """
    svm_predict(y, x, m [, options]) -> (pred_labels, pred_metrics, pred_values)

    y: a list/tuple/ndarray of l true labels (type must be int/double),
       used for the accuracy; [] if unknown.
    x: as for svm_train.
    m: an svm_model.
    options:
        -b probability_estimates: whether to predict probability estimates,
            0 or 1 (default 0).
        -q : quiet mode (no outputs).

    Returns
    -------
    pred_labels : list of predicted labels
    pred_metrics : (ACC, MSE, SCC)
    pred_values : list of decision values (k(k-1)/2 per instance; [1] for a
        one-class training set) or, with '-b 1', of k probabilities in the
        order of m.label.
    """
    def info(s):
        print(s)

    if not (isinstance(x, (list, tuple, np.ndarray)) or sp.issparse(x)):
        raise TypeError("type of x: {0} is not supported!".format(type(x)))
    if not isinstance(y, (list, tuple, np.ndarray)):
        raise TypeError("type of y: {0} is not supported!".format(type(y)))
    if not isinstance(m, svm_model):
        raise TypeError(f"m must be an svm_model, got {type(m).__name__}")
    predict_probability_flag = 0
    argv = options.split() if isinstance(options, str) else list(options)
    i = 0
    while i < len(argv):
        if argv[i] == "-b":
            i += 1
            try:
                predict_probability_flag = int(argv[i])
            except (IndexError, ValueError):
                raise ValueError("Wrong options: -b needs 0 or 1") from None
        elif argv[i] == "-q":
            info = print_null
        else:
            raise ValueError(f"Wrong options: unknown option {argv[i]!r}")
        i += 1

    svm_type = m.get_svm_type()
    X, _ = as_index_csr(x, m.param.kernel_type == PRECOMPUTED, "x")
    n = X.shape[0]
    if n == 0:
        # libsvm's svm_predict ends in "cannot convert float NaN to integer"
        # (the accuracy of no rows) after numpy's "Mean of empty slice"
        raise ValueError("x has no rows: nothing to predict")
    if predict_probability_flag:
        if not m.is_probability_model():
            raise ValueError("Model does not support probabiliy estimates")
        if svm_type in (NU_SVR, EPSILON_SVR):
            info("Prob. model for test data: target value = predicted value + z,\n"
                 "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma=%g"
                 % m.get_svr_probability())
            labels, _ = predict(m, X)
            values = [[] for _ in range(n)]
        else:
            labels, prob = predict_probability(m, X)
            values = prob.tolist()
    else:
        if m.is_probability_model():
            info("Model supports probability estimates, but disabled in predicton.")
        labels, dec = predict(m, X)
        if svm_type in (C_SVC, NU_SVC) and m.nr_class == 1:
            values = [[1] for _ in range(n)]
        else:
            values = dec.tolist()
    labels = labels.tolist()
    truth = as_labels(y, finite=False) if len(y) else np.zeros(n)
    ACC, MSE, SCC = evaluations(truth, labels)
    if svm_type in (EPSILON_SVR, NU_SVR):
        info("Mean squared error = %g (regression)" % MSE)
        info("Squared correlation coefficient = %g (regression)" % SCC)
    else:
        info("Accuracy = %g%% (%d/%d) (classification)"
             % (ACC, int(round(n * ACC / 100)), n))
    return labels, (ACC, MSE, SCC), values


def svm_save_model(model_file_name, model):
    """Save a model to a file, exactly as LIBSVM's ``svm_save_model``."""
    save_model(model_file_name, model)


def svm_load_model(model_file_name):
    """Load a LIBSVM model file (any svm type; written by LIBSVM or
    svmscreen).  Prints "can't open model file ..." and returns None when
    the file cannot be opened; raises ValueError naming the line when it is
    malformed."""
    try:
        return load_model(model_file_name)
    except OSError:
        print("can't open model file %s" % model_file_name)
        return None

