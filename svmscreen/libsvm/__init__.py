"""LIBSVM compatibility: the svmutil API, model files and the command-line
tools, on svmscreen's solver.

    from svmscreen.libsvm.svmutil import *     # as `from libsvm.svmutil import *`

Modules mirror libsvm's Python package: ``svm`` (svm_problem,
svm_parameter, svm_model, svm_node, gen_svm_nodearray), ``commonutil``
(svm_read_problem, evaluations, csr scaling), ``svmutil`` (svm_train,
svm_predict, svm_save_model, svm_load_model and all of the above).  ``model`` holds the multi-class,
probability and cross-validation algorithms, ``modelfile`` the model file
format, ``commands`` the ``svmscreen-train``/``-predict``/``-scale`` tools,
``_rand`` glibc's ``rand()`` for LIBSVM's shuffles (``srand`` reseeds it).
"""
from svmscreen.libsvm._rand import srand

__all__ = ["srand"]
