"""svmscreen: exact SVM training in the LIBSVM tradition, with safe sample
screening along regularization paths."""
from svmscreen._validation import ConvergenceWarning
from svmscreen.datasets import dump_svmlight_file, load_dataset, load_svmlight_file
from svmscreen.model import BinaryModel, fit_binary
from svmscreen.objective import duality_gap
from svmscreen.one_vs_one import OneVsOneModel, OneVsOnePath
from svmscreen.path import PathResult, train_path
from svmscreen.ramp import RampResult, train_ramp, train_ramp_path

__version__ = "0.1.0"
__all__ = ["BinaryModel", "ConvergenceWarning", "OneVsOneModel", "OneVsOnePath", "PathResult",
           "RampResult", "duality_gap", "dump_svmlight_file", "fit_binary", "load_dataset",
           "load_svmlight_file", "train_path", "train_ramp", "train_ramp_path"]
