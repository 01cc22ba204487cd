# The rule of _rules.pyx that the solver runs in its loop (gap-safe screening
# of its movable variables).

cdef Py_ssize_t _gap_safe_flags(const double[::1] G, const double[::1] y,
                                const double[::1] alpha, const double[::1] lo,
                                const double[::1] hi, const double[::1] QD,
                                Py_ssize_t m, double b, double tau, double roundoff,
                                signed char[::1] flag) noexcept nogil
