cdef struct CacheEntry:
    CacheEntry* prev
    CacheEntry* next
    double* data
    Py_ssize_t length        # entries 0..length-1 of the column are cached


cdef class ColumnCache:
    """LRU cache of (partial) Q columns under a byte budget."""
    cdef Py_ssize_t n_columns
    cdef Py_ssize_t free_space       # in doubles
    cdef CacheEntry* entries
    cdef CacheEntry lru_head         # circular list, least recent first

    cdef void lru_insert(self, CacheEntry* h) noexcept nogil
    cdef Py_ssize_t get_data(self, Py_ssize_t index, double** data,
                             Py_ssize_t length) noexcept nogil
    cdef void swap_headers(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef void swap_index(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef void swap_many(self, const Py_ssize_t* first, const Py_ssize_t* second,
                        Py_ssize_t count) noexcept nogil
