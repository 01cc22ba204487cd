"""Shared bound routines of the screening rules: one per region geometry.

Every safe screening rule proves that the optimal weight vector w* lies in a
region Theta and then bounds, for every sample i, the linear functional
v_i'w over Theta (paper 000, eqs. 5-9: l_i = min_{w in Theta} v_i'w and
u_i = max_{w in Theta} v_i'w).  The vectors v_i are never formed: callers pass
v_i'(centre) and ||v_i|| (and, for the dome, v_i'u), computed in kernel form
or from an explicit w.  v_i is z_i = y_i phi(x_i) for the bias-free margin,
or phi(x_i) - c for the intercept count (bias_screening.md, sec. 2.4a).

Geometries
----------
ball      Theta = {||w - m|| <= r}                     (paper 000, Lemma 1)
two-ball  Theta = B(m1, r1) cap B(m2, r2)             (paper 000, Thm 8, App. A)
dome      Theta = {u'w <= d} cap B(o, r)              (paper 003, Lemma 20)

Safety policy: the routines never return NaN and never a bound tighter than
the region allows.  When the inputs are inconsistent (two disjoint balls, a
half-space missing the ball: only possible with an inexact reference or
round-off) they fall back to a looser bound that is valid as soon as *one*
of the two sets contains w* (the hull of the two ball bounds, or the ball
alone), and report it in the returned status.

Trusts its caller: all arrays have the same length, radii are >= 0 and
finite, vnorm >= 0.  The def wrappers at the end validate nothing either;
they exist for the tests and for Python callers.
"""
import numpy as np

from libc.math cimport sqrt, fabs, fmax, fmin, frexp, ldexp

# Relative tolerance used to decide the degenerate cases of the two-ball and
# dome geometry (round-off level; the fallbacks chosen are always valid).
cdef double GEOM_EPS = 1e-12


cdef inline double _max(double a, double b) noexcept nogil:
    """fmax(a, b) (a NaN argument gives the other), without the libm call
    that gcc keeps for fmax's NaN rule."""
    return a if (a > b or b != b) else b


cdef inline double _min(double a, double b) noexcept nogil:
    """fmin(a, b), likewise."""
    return a if (a < b or b != b) else b


cdef void ball_bounds_loop(const double[::1] centre_dot, const double[::1] vnorm,
                           double radius, double[::1] lower,
                           double[::1] upper) noexcept nogil:
    """l_i, u_i = v_i'm -/+ r ||v_i||  (paper 000, Lemma 1)."""
    cdef Py_ssize_t i, n = centre_dot.shape[0]
    cdef double spread
    for i in range(n):
        spread = radius * vnorm[i]
        lower[i] = centre_dot[i] - spread
        upper[i] = centre_dot[i] + spread


cdef int two_ball_bounds_loop(const double[::1] dot1, const double[::1] dot2,
                              const double[::1] vnorm, double r1, double r2,
                              double phi_norm, double[::1] lower,
                              double[::1] upper) noexcept nogil:
    """Bounds of v_i'w over B(m1, r1) cap B(m2, r2) (paper 000, Thm 8).

    dot1[i] = v_i'm1, dot2[i] = v_i'm2, phi_norm = ||m1 - m2||.

    Closed form (paper 000, eqs. 20 and 24; notation of seed_000 note 2.7):
        zeta  = (||phi||^2 + r2^2 - r1^2) / (2 ||phi||),  kappa^2 = r2^2 - zeta^2
        psi   = m2 + zeta phi/||phi||,  c_i = -v_i'phi / (||v_i|| ||phi||)
        A     = (zeta - ||phi||) / r1,  B = zeta / r2
        P_i   = sqrt(||v_i||^2 - (v_i'phi)^2 / ||phi||^2)
        l_i   = l1_i if c_i < A, l2_i if c_i > B, else v_i'psi - kappa P_i
        u_i   = u1_i if -c_i < A, u2_i if -c_i > B, else v_i'psi + kappa P_i
    Degenerate cases (seed_000 note, pitfalls 2-4 and 6):
        ||phi|| > r1 + r2 (disjoint: an input ball is wrong) -> the hull
            min(l1, l2), max(u1, u2): valid if either ball holds w*;
        r1 = 0, r2 = 0 or phi = 0 -> max(l1, l2), min(u1, u2) (valid for any
            two balls that both hold w*; exact for concentric balls);
        one ball inside the other -> that ball's bounds (App. A: A >= 1 or
            B <= -1; handled explicitly so kappa^2 < 0 is never used);
        ||v_i|| = 0 -> l_i = u_i = v_i'm1 (= 0).
    Every result is finally clipped into [max(l1, l2), min(u1, u2)] in the
    direction that can only loosen it.

    Returns a BoundStatus.
    """
    cdef Py_ssize_t i, n = dot1.shape[0]
    cdef double l1, l2, u1, u2, vn, proj, P, zpsi, lo, up
    cdef double zeta = 0.0, kappa = 0.0, A = 0.0, B = 0.0, inv_phi = 0.0, scale
    cdef double near = 0.0, d, R1, R2, PHI, unit
    cdef int exponent
    cdef bint from_m1 = r1 <= r2
    cdef int mode
    scale = r1 + r2 + phi_norm
    if phi_norm > (r1 + r2) * (1.0 + GEOM_EPS) + GEOM_EPS * scale:
        mode = BOUND_DISJOINT
    elif r1 <= GEOM_EPS * scale or r2 <= GEOM_EPS * scale or phi_norm <= GEOM_EPS * scale:
        mode = BOUND_POINT
    elif phi_norm + r1 <= r2 or phi_norm + r2 <= r1 or phi_norm >= r1 + r2:
        # nested (either way) or tangent from outside: max/min of the two
        # ball bounds is then exact (the inner ball, or the tangent point)
        mode = BOUND_NESTED
    else:
        mode = BOUND_OK
        # paper 000, Thm 8: zeta, kappa, A, B, in factored forms measured
        # from the smaller ball's centre: with r1 << r2 (IT below the
        # reference C), r2^2 - zeta^2 cancelled to 1e-3 relative and the
        # bounds moved by 6e-6 at an exact reference.  near = zeta - ||phi||
        # (m1 to the plane of the circle), kappa^2 = r2^2 - zeta^2
        # = r1^2 - near^2, each difference of squares as a product.
        # In units of the power of two ``unit`` just above ``scale`` (r1,
        # r2, ||phi|| < 1; an exact scaling, so the bounds keep their bits
        # wherever nothing under- or overflowed): kappa^2 is a product of
        # three lengths, which underflowed to 0 at lengths ~1e-103 (a kernel
        # of scale 1e250: ||w|| ~ 1e-127), and the cap shrank to its plane
        # (IT put back 19 of 23 screened samples).
        frexp(scale, &exponent)
        unit = ldexp(1.0, exponent)
        R1 = r1 / unit
        R2 = r2 / unit
        PHI = phi_norm / unit
        if from_m1:
            d = R2 - PHI
            near = (d * (R2 + PHI) - R1 * R1) / (2.0 * PHI)
            zeta = PHI + near
            kappa = sqrt(fmax((R1 - d) * (R1 + d) * (R2 + zeta) / (2.0 * PHI), 0.0))
        else:
            d = R1 - PHI
            zeta = (R2 * R2 - d * (R1 + PHI)) / (2.0 * PHI)
            near = zeta - PHI
            kappa = sqrt(fmax((R2 - d) * (R2 + d) * (R1 + PHI - zeta) / (2.0 * PHI), 0.0))
        A = near / R1
        B = zeta / R2
        near *= unit
        zeta *= unit
        kappa *= unit
        inv_phi = 1.0 / phi_norm
    for i in range(n):
        vn = vnorm[i]
        l1 = dot1[i] - r1 * vn
        u1 = dot1[i] + r1 * vn
        l2 = dot2[i] - r2 * vn
        u2 = dot2[i] + r2 * vn
        if mode == BOUND_DISJOINT:
            lower[i] = _min(l1, l2)
            upper[i] = _max(u1, u2)
            continue
        lo = _max(l1, l2)
        up = _min(u1, u2)
        if mode == BOUND_OK and vn > 0.0:
            # c_i = -v_i'phi / (||v_i|| ||phi||) (paper 000, before eq. 20),
            # compared with A and B after multiplying by ||v_i|| > 0: no
            # division in the loop (it was a third of the loop's time).
            proj = (dot1[i] - dot2[i]) * inv_phi         # v_i'phi / ||phi||
            P = sqrt(_max(vn * vn - proj * proj, 0.0))
            # v_i'psi, psi = m2 + zeta phi/||phi|| = m1 + near phi/||phi||,
            # from the nearer centre
            zpsi = dot1[i] + near * proj if from_m1 else dot2[i] + zeta * proj
            # eq. 20: case 1 (c < A) gives l1, case 2 (c > B) l2, both in lo
            if A * vn <= -proj <= B * vn:
                lo = _max(lo, zpsi - kappa * P)          # eq. 20, case 3
            # eq. 24, the same with -c
            if A * vn <= proj <= B * vn:
                up = _min(up, zpsi + kappa * P)          # eq. 24, case 3
        if up < lo:                      # round-off at a point-like region
            lo = up = 0.5 * (lo + up)
        lower[i] = lo
        upper[i] = up
    return mode


cdef inline double _cap_min(double vo, double vu, double vn, double radius,
                            double u_norm, double d_prime, double vu_error,
                            double u_sq_rel) noexcept nogil:
    """min v'w s.t. u'w <= d, ||w - o|| <= r (paper 003, Lemma 20).

    vo = v'o, vu = v'u, vn = ||v||, d_prime = d - u'o.
        if v'u + ||v|| d'/r >= 0:  v'o - r||v||             (ball minimiser feasible)
        else:  v'o + v'u d'/||u||^2 - ||v_perp|| sqrt(r^2 - d'^2/||u||^2)
    The result is never below the ball bound v'o - r||v|| (round-off guard).

    Inexact u (``vu_error`` > 0 or ``u_sq_rel`` > 0): the true v'u is within
    vu_error of vu and the true ||u||^2 at most (1 + u_sq_rel) u_norm^2.  The
    closed form is then not a bound: it divides by ||u||, and where w_a is
    tiny (a reference near w = 0) its round-off made ||u|| half its value and
    ESSNSV screened free support vectors (a fuzz, linear, |x| < 0.43).  Its
    Lagrangian dual is one: for every lambda >= 0,
        min v'w >= v'o - lambda d' - r ||v + lambda u||      (weak duality),
    and with mu = lambda u_norm,
        ||v + lambda u||^2 <= v_perp^2 + (vu_hat + mu)^2
                              + 2 mu vu_error / u_norm + mu^2 u_sq_rel,
    which needs only upper bounds on v'u and ||u||^2.  lambda is the closed
    form's multiplier, vu_hat + mu = -(d'/||u||) ||v_perp|| / chord, at which
    the dual equals the closed form for exact inputs.
    """
    cdef double ball = vo - radius * vn
    cdef double vu_hat, e, e_signed, vperp2, chord, mu, norm2, val
    if radius <= 0.0 or vn <= 0.0:
        return vo
    if vu + vn * d_prime / radius >= 0.0:
        return ball
    # v'u / ||u|| and d' / ||u||, lengths: d'^2 (a squared ||w||^2)
    # overflowed at ||w|| ~ 1e77 (a kernel of scale 1e-200 at C ~ 1e205),
    # and r^2 - inf made the cap's chord 0 (SSNSV put a sample back)
    vu_hat = vu / u_norm
    e_signed = d_prime / u_norm
    e = fabs(e_signed)
    vperp2 = fmax((vn - fabs(vu_hat)) * (vn + fabs(vu_hat)), 0.0)
    chord = sqrt(fmax(radius - e, 0.0)) * sqrt(radius + e)
    if vu_error == 0.0 and u_sq_rel == 0.0:
        val = vo + vu_hat * e_signed - sqrt(vperp2) * chord
        return fmax(val, ball)
    if not chord > 0.0:                  # tangent: the ball (always valid)
        return ball
    mu = fmax(-e_signed * (sqrt(vperp2) / chord) - vu_hat, 0.0)
    norm2 = (vperp2 + (vu_hat + mu) * (vu_hat + mu) + 2.0 * mu * (vu_error / u_norm)
             + mu * mu * u_sq_rel)
    val = vo - mu * e_signed - radius * sqrt(norm2)
    return fmax(val, ball)               # (a nan, from inf - inf, gives the ball)


cdef int dome_bounds_loop(const double[::1] centre_dot, const double[::1] v_dot_u,
                          const double[::1] vnorm, double radius, double u_norm,
                          double d_prime, double[::1] lower,
                          double[::1] upper, double vu_error=0.0,
                          double u_sq_rel=0.0) noexcept nogil:
    """Bounds of v_i'w over {u'w <= d} cap B(o, r) (paper 003, Lemma 20).

    centre_dot[i] = v_i'o, v_dot_u[i] = v_i'u, d_prime = d - u'o.  The
    maximum is -min of -v_i (paper 002, eq. 17-18; paper 003, eqs. 60-61).
    Degenerate cases: u = 0 (w_a = 0, seed_003 note pitfall 6) or a
    half-space that misses the ball (d' < -r||u||: inexact input) fall back
    to the ball alone (status BOUND_DISJOINT for the latter); r = 0 gives the
    point o.  Round-off of the inputs is the caller's: it passes d' and r
    already widened by their round-off (``_rules.dome_shape``), so a tangent
    half-space (w_a = w_b on a saturated path) stays a thin cap; the error
    of u (each v_i'u within ``vu_error``, ||u||^2 within a factor
    1 + ``u_sq_rel`` of u_norm^2) goes to ``_cap_min``.

    Returns a BoundStatus.
    """
    cdef Py_ssize_t i, n = centre_dot.shape[0]
    cdef int status = BOUND_OK
    cdef bint ball_only = False
    cdef double vo, vu, vn
    if u_norm <= GEOM_EPS * fmax(radius, 1e-300):
        ball_only = True
        status = BOUND_POINT
    elif d_prime < -radius * u_norm:
        ball_only = True
        status = BOUND_DISJOINT
    for i in range(n):
        vo = centre_dot[i]
        vn = vnorm[i]
        if ball_only:
            lower[i] = vo - radius * vn
            upper[i] = vo + radius * vn
            continue
        vu = v_dot_u[i]
        lower[i] = _cap_min(vo, vu, vn, radius, u_norm, d_prime, vu_error, u_sq_rel)
        upper[i] = -_cap_min(-vo, -vu, vn, radius, u_norm, d_prime, vu_error, u_sq_rel)
        if upper[i] < lower[i]:          # round-off at a point-like region
            upper[i] = lower[i] = 0.5 * (lower[i] + upper[i])
    return status


# ---------------------------------------------------------------------------
# Python wrappers (tests, Python callers)
# ---------------------------------------------------------------------------

def _f64(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def ball_bounds(centre_dot, vnorm, double radius):
    """(lower, upper) of v_i'w over B(m, r); see ``ball_bounds_loop``."""
    cdef const double[::1] cd = _f64(centre_dot)
    cdef const double[::1] vn = _f64(vnorm)
    lower = np.empty(cd.shape[0])
    upper = np.empty(cd.shape[0])
    cdef double[::1] lo = lower, up = upper
    with nogil:
        ball_bounds_loop(cd, vn, radius, lo, up)
    return lower, upper


def two_ball_bounds(dot1, dot2, vnorm, double r1, double r2, double phi_norm):
    """(lower, upper, status) over B(m1, r1) cap B(m2, r2); see
    ``two_ball_bounds_loop``.  status: 0 ok, 1 point/concentric, 2 nested,
    3 disjoint (fallback to the hull of the two balls)."""
    cdef const double[::1] d1 = _f64(dot1)
    cdef const double[::1] d2 = _f64(dot2)
    cdef const double[::1] vn = _f64(vnorm)
    lower = np.empty(d1.shape[0])
    upper = np.empty(d1.shape[0])
    cdef double[::1] lo = lower, up = upper
    cdef int status
    with nogil:
        status = two_ball_bounds_loop(d1, d2, vn, r1, r2, phi_norm, lo, up)
    return lower, upper, status


def dome_bounds(centre_dot, v_dot_u, vnorm, double radius, double u_norm,
                double d_prime, double vu_error=0.0, double u_sq_rel=0.0):
    """(lower, upper, status) over {u'w <= d} cap B(o, r); see
    ``dome_bounds_loop``."""
    if not (vu_error >= 0.0 and u_sq_rel >= 0.0):
        raise ValueError("vu_error and u_sq_rel must be >= 0")
    cdef const double[::1] cd = _f64(centre_dot)
    cdef const double[::1] vu = _f64(v_dot_u)
    cdef const double[::1] vn = _f64(vnorm)
    lower = np.empty(cd.shape[0])
    upper = np.empty(cd.shape[0])
    cdef double[::1] lo = lower, up = upper
    cdef int status
    with nogil:
        status = dome_bounds_loop(cd, vu, vn, radius, u_norm, d_prime, lo, up, vu_error,
                                  u_sq_rel)
    return lower, upper, status
