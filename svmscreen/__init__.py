"""svmscreen: exact SVM training in the LIBSVM tradition, with safe sample
screening along regularization paths."""
from svmscreen._validation import ConvergenceWarning
from svmscreen.model import BinaryModel, fit_binary
from svmscreen.objective import duality_gap

__version__ = "0.1.0"
__all__ = ["BinaryModel", "ConvergenceWarning", "duality_gap", "fit_binary"]
