# Routines of _rules.pyx shared with the solver's in-loop screening.

cdef int _count_interval(const double[::1] beta_lo, const double[::1] beta_hi,
                         const double[::1] y, const double[::1] weight,
                         bint weighted, double target, double* b_lo,
                         double* b_hi) noexcept nogil

cdef double _select(double* work, Py_ssize_t n, Py_ssize_t k) noexcept nogil
