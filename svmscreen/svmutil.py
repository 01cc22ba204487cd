"""Alias of ``svmscreen.libsvm.svmutil``: ``from svmscreen.svmutil import *``
works as ``from libsvm.svmutil import *``."""
from svmscreen.libsvm.svmutil import *  # noqa: F401,F403
from svmscreen.libsvm.svmutil import __all__  # noqa: F401
