cdef enum KernelType:
    LINEAR = 0
    POLY = 1
    RBF = 2
    SIGMOID = 3
    PRECOMPUTED = 4


# Defined here so that other modules (_rules) share it.
cdef inline double dense_dot(const double* u, const double* v,
                             Py_ssize_t d) noexcept nogil:
    # Four partial sums: lets the compiler keep four FMAs in flight.
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t k = 0
    while k + 4 <= d:
        s0 += u[k] * v[k]
        s1 += u[k + 1] * v[k + 1]
        s2 += u[k + 2] * v[k + 2]
        s3 += u[k + 3] * v[k + 3]
        k += 4
    while k < d:
        s0 += u[k] * v[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


# Ctrl-C is looked for whenever this much work has been done, counted in
# kernel values, multiply-adds or element visits of a selection (a few ns
# each): a shrinking period of 1000 iterations took 2-3 s at n = 50,000
# (two kernel columns an iteration), and one block of the LIBSVM layer's
# RBF prediction (4M kernel values over 1500 dense SVs of 5000 features)
# 4 s, and a SIGINT waited for either.
cdef enum:
    SIGNAL_WORK = 5_000_000

cdef bint signal_raised(long long* counter, long long work) noexcept nogil


cdef double kernel_from_dot(int kernel_type, double dot, double sq_a,
                            double sq_b, double gamma, double coef0,
                            int degree) noexcept nogil


cdef class Kernel:
    """Kernel values between the rows of one training matrix (dense, CSR or
    a precomputed Gram matrix)."""
    cdef readonly int kernel_type
    cdef readonly int degree
    cdef readonly double gamma
    cdef readonly double coef0
    cdef readonly Py_ssize_t n_samples
    cdef readonly Py_ssize_t n_features
    cdef readonly bint in_order            # dense dots summed in index order (LIBSVM's)
    cdef readonly bint sparse
    cdef object _keepalive
    cdef const double[:, ::1] dense        # dense rows, or the Gram matrix
    cdef const double[::1] csr_data
    cdef const int[::1] csr_indices
    cdef const int[::1] csr_indptr
    cdef double[::1] sq_norms              # ||x_i||^2, used by RBF
    cdef double[::1] scatter               # dense copy of one CSR row
    # CSR rows again, in the order given to ``follow_order`` (the solver's
    # position order), for ``column_rows``; with their squared norms.
    cdef readonly bint ordered
    cdef readonly long long order_version  # counts the copies made
    cdef const double[::1] ord_data
    cdef const int[::1] ord_indices
    cdef const int[::1] ord_indptr
    cdef const double[::1] ord_sq_norms

    cdef double dense_pair(self, const double* u, const double* v) noexcept nogil
    cdef const double* dense_row(self, Py_ssize_t a) noexcept nogil
    cdef double dot(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef double value(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef void column(self, Py_ssize_t a, const Py_ssize_t* idx,
                     Py_ssize_t count, double* out) noexcept nogil
    cdef void column_rows(self, Py_ssize_t a, const Py_ssize_t* rows,
                          Py_ssize_t count, double* out) noexcept nogil
    cdef void csr_dots(self, Py_ssize_t a, const Py_ssize_t* rows, Py_ssize_t count,
                       const int[::1] indptr, const int[::1] indices,
                       const double[::1] data, double* out) noexcept nogil
    cdef void dots_to_kernel(self, Py_ssize_t a, const Py_ssize_t* rows, Py_ssize_t count,
                             const double[::1] sq_norms, double* out) noexcept nogil
