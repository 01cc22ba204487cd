"""Measurement helpers shared by the benchmarks.

The scripts import this as a sibling module (``python benchmarks/<script>.py``
puts benchmarks/ first on sys.path); tests/test_benchmarks.py imports it the
same way to check it without timing anything.
"""
import argparse

import numpy as np

# The default repeat policy of best_of: small rows, whose arms take a few
# milliseconds, are at the mercy of the machine's noise, so they are run
# again until an arm has been timed for AUTO_BUDGET seconds in all (at most
# AUTO_MAX_ROUNDS rounds); a row with an arm of AUTO_BUDGET seconds or more
# runs once, since its noise is small next to its times and a second run
# would double the cost of the table.
AUTO_BUDGET = 0.5
AUTO_MAX_ROUNDS = 5


def int_at_least(minimum):
    """An argparse type: an integer of at least ``minimum``.

    A count of rows, runs or values of C below its least sensible value
    fails on the command line, naming the option, instead of deep in the
    run (a repeat of 0 left no model to read) or silently (``--rows -5``
    cut the last 5 rows).
    """
    def integer(text):
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    integer.__name__ = "integer"        # argparse's "invalid integer value: 'two'"
    return integer


def positive_float(text):
    """An argparse type: a finite number above 0 (a time limit of 0 or less
    made every fit a timeout, and the table rows of "?")."""
    value = float(text)
    if not 0.0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def round_order(names, k):
    """The order in which the arms run in round ``k``.

    Round ``k`` starts at the ``k``-th arm (cyclically) and walks the list
    forwards in even rounds, backwards in odd ones.  So every arm runs first
    in turn, and an arm follows the arm listed before it in one round and
    the arm listed after it in the next: no arm always runs first, and none
    always inherits the same arm's after-effects (the state of the caches
    and of the allocator, a slow phase of the machine).

    Parameters
    ----------
    names : sequence of str
        The arms, in their listed order.
    k : int
        The round, from 0.

    Returns
    -------
    list of str
        A permutation of ``names``.
    """
    n = len(names)
    step = 1 if k % 2 == 0 else -1
    return [names[(k + step * j) % n] for j in range(n)]


def best_of(runs, repeat=None, budget=AUTO_BUDGET, max_rounds=AUTO_MAX_ROUNDS):
    """Run the arms in interleaved rounds and keep each arm's fastest run.

    Each round runs every arm once, in :func:`round_order`; the minimum over
    rounds is kept because the noise of a shared machine only ever adds time.
    All arms of a row run the same number of rounds, so that none gets the
    advantage of a minimum over more runs.

    Parameters
    ----------
    runs : dict of str to callable
        Per arm, a function of no argument that runs the arm once and
        returns a tuple whose first item is the seconds it measured, or None
        if the arm is unavailable (it is then left out of this and every
        later round, and of the result).
    repeat : int, optional
        Run exactly this many rounds.  None (the default): run rounds until
        some arm has been timed for ``budget`` seconds in all, or
        ``max_rounds`` rounds have run.
    budget : float, default AUTO_BUDGET
        Seconds of one arm after which the default policy stops.
    max_rounds : int, default AUTO_MAX_ROUNDS
        Most rounds of the default policy.

    Returns
    -------
    best : dict of str to tuple
        Per available arm, in the order of ``runs``, the result of its
        fastest run.
    rounds : int
        The number of rounds run.
    """
    if repeat is not None and repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat!r}")
    names = list(runs)
    best, total = {}, dict.fromkeys(names, 0.0)
    rounds = 0
    while names:
        for name in round_order(names, rounds):
            result = runs[name]()
            if result is None:
                names.remove(name)
                best.pop(name, None)
                continue
            total[name] += result[0]
            if name not in best or result[0] < best[name][0]:
                best[name] = result
        rounds += 1
        if not names:
            break
        if repeat is not None:
            if rounds >= repeat:
                break
        elif rounds >= max_rounds or max(total[name] for name in names) >= budget:
            break
    return {name: best[name] for name in runs if name in best}, rounds


def geometric_mean(values):
    """The geometric mean of positive numbers; nan for none."""
    values = np.asarray(values, dtype=float)
    return float(np.exp(np.mean(np.log(values)))) if values.size else float("nan")


def timed_ratio(seconds, reference):
    """The time ratio ``seconds / reference`` of two arms that may have timed out.

    An arm stopped at a time limit still tells something: it had run for so
    long without finishing, so the ratio is bounded on one side.  Dropping
    such rows would leave out exactly the rows where one side is slowest.

    Parameters
    ----------
    seconds, reference : (float, bool)
        Each arm's time and whether it is exact; False: the arm was stopped
        and the time is how long it had run by then, a lower bound.

    Returns
    -------
    ratio : float
        The ratio, or its bound; nan if nothing is known (both stopped, or
        a bound of 0 s).
    relation : {"=", ">", "<", "?"}
        "=": exact; ">": the true ratio is at least ``ratio`` (``seconds``
        is a bound); "<": at most ``ratio`` (``reference`` is a bound); "?":
        no ratio.
    """
    (value, exact), (ref_value, ref_exact) = seconds, reference
    if exact and ref_exact:
        return value / ref_value, "="
    if ref_exact and value > 0:
        return value / ref_value, ">"
    if exact and ref_value > 0:
        return value / ref_value, "<"
    return float("nan"), "?"


def bounded_geometric_means(ratios):
    """Geometric means of time ratios, some of which are one-sided bounds.

    Parameters
    ----------
    ratios : sequence of (float, str)
        ``(ratio, relation)`` pairs as :func:`timed_ratio` returns them.

    Returns
    -------
    exact : float
        Over the exact ratios only (nan if none).
    at_least : float or None
        A lower bound of the geometric mean over the exact ratios and those
        known only to be at least their value (each counted at that value);
        None if there is no such bound ratio.
    at_most : float or None
        Likewise an upper bound, over the exact ratios and those known only
        to be at most their value; None if there is none.

    Notes
    -----
    A lower and an upper bound are never mixed: the geometric mean of a set
    with both kinds is bounded neither way.  Ratios of relation "?" enter
    none of the three.
    """
    def over(relations):
        chosen = [value for value, relation in ratios if relation in relations]
        return geometric_mean(chosen)
    has = {relation for _, relation in ratios}
    return (over("="), over("=>") if ">" in has else None,
            over("=<") if "<" in has else None)


def _status_mb(key):
    """A size line of /proc/self/status (VmRSS, VmHWM), in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    raise OSError(f"no {key} in /proc/self/status")


def _max_rss_mb():
    import resource
    # (kilobytes on Linux, bytes on macOS; only Linux gets here with an
    # exact figure, the other systems' is a bound either way)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def peak_start():
    """Start measuring the peak resident memory of what the process does next.

    The process's high-water mark cannot simply be read before and after:
    whatever came before (loading and parsing a file, say) may have left it
    above the current resident set, and the next step's memory then hides
    under it.  On Linux the mark is reset to the current resident set
    (writing 5 to /proc/self/clear_refs), so the peak read afterwards is
    that of the next step over the memory in use now.

    Returns
    -------
    dict
        ``base_mb``: the resident set now (interpreter, imports, data), the
        baseline of the measurement; ``exact``: whether the mark was reset;
        ``floor_mb``: the high-water mark now, for the fallback.
    """
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return {"base_mb": _status_mb("VmRSS"), "exact": True, "floor_mb": None}
    except OSError:
        floor = _max_rss_mb()
        try:
            base = _status_mb("VmRSS")
        except OSError:
            base = float("nan")
        return {"base_mb": base, "exact": False, "floor_mb": floor}


def peak_growth(start):
    """The peak resident memory since :func:`peak_start`, over its baseline.

    Parameters
    ----------
    start : dict
        What :func:`peak_start` returned.

    Returns
    -------
    growth_mb : float
        The peak resident set since ``start`` minus ``start["base_mb"]``;
        where the high-water mark could not be reset, its growth over the
        mark at ``start`` instead, a lower bound.
    exact : bool
        False for that lower bound.
    """
    if start["exact"]:
        return _status_mb("VmHWM") - start["base_mb"], True
    return max(0.0, _max_rss_mb() - start["floor_mb"]), False
