"""LRU cache of kernel columns under a byte budget, as LIBSVM's ``Cache``
(svm.cpp, class Cache).

A column is cached as a prefix: entries 0..length-1 in the solver's current
(position) order.  Shrinking and screening keep the active variables in the
first positions, so a solver only ever asks for short prefixes of columns.
``swap_index`` keeps every cached prefix consistent when two positions swap.

The budget (``cache_size`` in MB, as LIBSVM's ``-m``) covers the column data
and the per-column headers; as in LIBSVM it is raised to hold at least two
full columns, which a two-variable SMO step needs at once.
"""
from libc.stdlib cimport calloc, free, realloc


cdef inline void lru_delete(CacheEntry* h) noexcept nogil:
    h.prev.next = h.next
    h.next.prev = h.prev


cdef class ColumnCache:
    """Parameters
    ----------
    n_columns : int
        Number of variables (columns, and the length of a full column).
    cache_size : float
        Budget in megabytes.
    """

    def __cinit__(self, Py_ssize_t n_columns, double cache_size):
        cdef Py_ssize_t budget = <Py_ssize_t>(cache_size * (1 << 20))
        self.n_columns = n_columns
        self.entries = <CacheEntry*>calloc(max(n_columns, 1), sizeof(CacheEntry))
        if self.entries == NULL:
            raise MemoryError("cannot allocate the kernel cache headers")
        budget -= n_columns * <Py_ssize_t>sizeof(CacheEntry)
        self.free_space = max(budget // <Py_ssize_t>sizeof(double), 2 * n_columns)
        self.lru_head.next = &self.lru_head
        self.lru_head.prev = &self.lru_head

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.entries != NULL:
            for i in range(self.n_columns):
                free(self.entries[i].data)
            free(self.entries)

    cdef void lru_insert(self, CacheEntry* h) noexcept nogil:
        # Most recently used goes last.
        h.next = &self.lru_head
        h.prev = self.lru_head.prev
        h.prev.next = h
        h.next.prev = h

    cdef Py_ssize_t get_data(self, Py_ssize_t index, double** data,
                             Py_ssize_t length) noexcept nogil:
        """Point ``data`` at column ``index``, grown to ``length`` entries.

        Returns the number of entries already valid; the caller fills
        entries from there up to ``length``.  Returns -1 if memory runs out.
        """
        cdef CacheEntry* h = &self.entries[index]
        cdef CacheEntry* old
        cdef Py_ssize_t more, valid
        cdef double* grown
        if h.length:
            lru_delete(h)
        more = length - h.length
        if more > 0:
            while self.free_space < more and self.lru_head.next != &self.lru_head:
                old = self.lru_head.next
                lru_delete(old)
                free(old.data)
                self.free_space += old.length
                old.data = NULL
                old.length = 0
            grown = <double*>realloc(h.data, length * sizeof(double))
            if grown == NULL:
                return -1
            h.data = grown
            self.free_space -= more
            valid = h.length
            h.length = length
        else:
            valid = length
        self.lru_insert(h)
        data[0] = h.data
        return valid

    cdef void swap_headers(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """Columns i and j exchange their data (and LRU places stay valid);
        the entries i and j inside every column are the callers' job."""
        cdef CacheEntry tmp
        if self.entries[i].length:
            lru_delete(&self.entries[i])
        if self.entries[j].length:
            lru_delete(&self.entries[j])
        tmp.data = self.entries[i].data
        tmp.length = self.entries[i].length
        self.entries[i].data = self.entries[j].data
        self.entries[i].length = self.entries[j].length
        self.entries[j].data = tmp.data
        self.entries[j].length = tmp.length
        if self.entries[i].length:
            self.lru_insert(&self.entries[i])
        if self.entries[j].length:
            self.lru_insert(&self.entries[j])

    cdef void swap_index(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """Positions i and j exchange places (``swap_many`` with one pair)."""
        if i != j:
            self.swap_many(&i, &j, 1)

    cdef void swap_many(self, const Py_ssize_t* first, const Py_ssize_t* second,
                        Py_ssize_t count) noexcept nogil:
        """``swap_index(first[k], second[k])`` for k = 0..count-1, in that
        order, with one pass over the cached columns instead of one per
        swap: each column applies all the swaps to its own entries while it
        is hot in the CPU cache."""
        cdef CacheEntry* h
        cdef CacheEntry* next_h
        cdef Py_ssize_t k, i, j
        cdef double t
        for k in range(count):
            i = first[k]
            j = second[k]
            if i != j:
                self.swap_headers(i, j)
        h = self.lru_head.next
        while h != &self.lru_head:
            next_h = h.next
            for k in range(count):
                i = first[k]
                j = second[k]
                if i > j:
                    i, j = j, i
                if h.length > j:
                    t = h.data[i]
                    h.data[i] = h.data[j]
                    h.data[j] = t
                elif h.length > i:
                    # The column covers i but not j: its entry i would be
                    # stale, so give the column up (LIBSVM does the same).
                    lru_delete(h)
                    free(h.data)
                    self.free_space += h.length
                    h.data = NULL
                    h.length = 0
                    break
            h = next_h
