# Shared bound routines of the screening rules (see _bounds.pyx).

cdef enum BoundStatus:
    BOUND_OK = 0
    BOUND_POINT = 1          # a radius is 0 or the centres coincide: max/min of the two balls
    BOUND_NESTED = 2         # one ball inside the other: the inner ball's bounds
    BOUND_DISJOINT = 3       # regions inconsistent (inexact input): looser fallback used

cdef void ball_bounds_loop(const double[::1] centre_dot, const double[::1] vnorm,
                           double radius, double[::1] lower,
                           double[::1] upper) noexcept nogil

cdef int two_ball_bounds_loop(const double[::1] dot1, const double[::1] dot2,
                              const double[::1] vnorm, double r1, double r2,
                              double phi_norm, double[::1] lower,
                              double[::1] upper) noexcept nogil

cdef int dome_bounds_loop(const double[::1] centre_dot, const double[::1] v_dot_u,
                          const double[::1] vnorm, double radius, double u_norm,
                          double d_prime, double[::1] lower,
                          double[::1] upper, double vu_error=*,
                          double u_sq_rel=*) noexcept nogil
