from svmscreen._cache cimport ColumnCache
from svmscreen._kernels cimport Kernel


cdef class QMatrix:
    """Q_ij = s_i s_j K(x_i, x_j), cached, in the solver's position order."""
    cdef readonly Kernel kernel
    cdef ColumnCache cache
    cdef readonly Py_ssize_t n
    cdef double[::1] sign          # s_i, position order
    cdef double[::1] QD            # Q_ii, position order
    cdef Py_ssize_t[::1] perm      # position -> sample index
    cdef Py_ssize_t[::1] where     # sample index -> position (add_columns' scratch)
    # position -> row of the kernel's ordered copy (Kernel.follow_order),
    # valid while the kernel's order_version is rows_version
    cdef Py_ssize_t[::1] row_at
    cdef bint use_rows
    cdef long long rows_version
    cdef readonly long long kernel_evals   # kernel values computed so far (diagnostic)
    cdef readonly bint round_float32       # entries rounded as LIBSVM's Qfloat cache
    cdef readonly double cache_mb          # the cache budget (MB)
    # Variables sharing kernel rows (``rows``: SVR's 2l variables on l rows):
    # the kernel row of each position, and fill_column's scratch, which
    # computes each row's value once a column
    cdef bint twins
    cdef Py_ssize_t[::1] kernel_row
    cdef long long[::1] stamp
    cdef Py_ssize_t[::1] slot, unique_rows
    cdef double[::1] row_values
    cdef long long epoch

    cdef double* get_Q(self, Py_ssize_t i, Py_ssize_t length) except NULL nogil
    cdef int add_columns_into(self, const Py_ssize_t* samples, const double* coef,
                              Py_ssize_t m, double* out) except -1 nogil
    cdef void fill_column(self, Py_ssize_t i, Py_ssize_t start, Py_ssize_t stop,
                          double* out) noexcept nogil
    cdef void fill_twins(self, Py_ssize_t i, Py_ssize_t start, Py_ssize_t stop,
                         double* out) noexcept nogil
    cdef bint reads_copy(self) noexcept nogil
    cdef void swap_index(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef void swap_positions(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
