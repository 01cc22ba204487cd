"""Build the Cython extensions: one Extension per svmscreen/*.pyx.

Compiler directives are set once here.  SVMSCREEN_DEBUG=1 turns bounds and
wraparound checks back on for a debug build.
"""
import glob
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

debug = os.environ.get("SVMSCREEN_DEBUG", "0") == "1"
directives = {
    "language_level": 3,
    "boundscheck": debug,
    "wraparound": debug,
    "initializedcheck": debug,
    "cdivision": True,
}
extensions = [
    Extension(
        "svmscreen." + os.path.splitext(os.path.basename(path))[0],
        [path],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O0", "-g"] if debug else ["-O3"],
        # Without -lm the extensions' exp, pow, sqrt and tanh were unversioned
        # references, which the loader binds to glibc's oldest versions:
        # exp@GLIBC_2.2.5 is the SVID-compatible wrapper, about 2 ns slower
        # on every underflowing call (RBF on unscaled data: 80% of
        # svmguide1's kernel values).
        libraries=[] if sys.platform == "win32" else ["m"],
    )
    for path in sorted(glob.glob(os.path.join("svmscreen", "*.pyx")))
]
setup(ext_modules=cythonize(extensions, compiler_directives=directives))
