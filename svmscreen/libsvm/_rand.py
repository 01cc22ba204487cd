"""C ``rand()`` as glibc implements it, for LIBSVM's reproducible shuffles.

LIBSVM shuffles with ``rand() % n`` and never calls ``srand``, so on glibc its
cross-validation folds (``-v``) and the internal 5-fold CV of ``-b 1`` follow
the sequence of ``srand(1)``.  This module reproduces that sequence exactly:
glibc's TYPE_3 additive feedback generator (``random_r.c``), 31 words of
state, r_i = r_{i-3} + r_{i-31} (mod 2^32), output r_i >> 1, seeded by the
Park-Miller recurrence 16807 r (mod 2^31 - 1) and warmed up by 310 discarded
draws.

The state is process-global, as C's: ``srand(seed)`` resets it, and every
shuffle advances it, so a script that trains the same models in the same
order as a C program (or libsvm-official in a fresh process) draws the same
numbers.
"""

__all__ = ["GlibcRandom", "srand", "rand", "default_generator"]

_DEG = 31          # words of state (TYPE_3)
_SEP = 3           # distance between the two taps
_MASK = 0xFFFFFFFF


class GlibcRandom:
    """glibc's ``random()``/``rand()`` generator with its own state.

    Parameters
    ----------
    seed : int, default 1
        As ``srand(seed)``; 0 is replaced by 1, as glibc does.
    """

    __slots__ = ("_state", "_front", "_rear")

    def __init__(self, seed=1):
        self.seed(seed)

    def seed(self, seed=1):
        """Reset the state as ``srand(seed)``."""
        seed = int(seed) & _MASK
        if seed == 0:
            seed = 1
        # glibc stores the seed in an int32 and iterates on a signed long.
        word = seed - (1 << 32) if seed >= (1 << 31) else seed
        state = [word & _MASK]
        for _ in range(1, _DEG):
            # word = 16807 * word % 2147483647 without overflow (Schrage),
            # with C's truncating division.
            hi = word // 127773 if word >= 0 else -(-word // 127773)
            lo = word - hi * 127773
            word = 16807 * lo - 2836 * hi
            if word < 0:
                word += 2147483647
            state.append(word & _MASK)
        self._state = state
        self._front = _SEP
        self._rear = 0
        for _ in range(10 * _DEG):
            self.rand()

    def rand(self):
        """The next value in [0, 2^31 - 1], as C ``rand()``."""
        state = self._state
        f = self._front
        r = self._rear
        value = (state[f] + state[r]) & _MASK
        state[f] = value
        self._front = f + 1 if f + 1 < _DEG else 0
        self._rear = r + 1 if r + 1 < _DEG else 0
        return value >> 1

    def shuffle_indices(self, perm, start=0, stop=None):
        """LIBSVM's in-place shuffle of ``perm[start:stop]`` (a list):
        for each i, swap element i with i + rand() % (remaining)."""
        if stop is None:
            stop = len(perm)
        rand = self.rand
        count = stop - start
        for i in range(count):
            j = i + rand() % (count - i)
            perm[start + i], perm[start + j] = perm[start + j], perm[start + i]
        return perm


default_generator = GlibcRandom(1)


def srand(seed=1):
    """Seed the generator LIBSVM's shuffles use, as C ``srand(seed)``.

    Every ``-b 1`` training and every ``-v`` cross-validation draws from it;
    it starts as ``srand(1)`` when svmscreen is imported, as an unseeded C
    program's ``rand()`` does.
    """
    default_generator.seed(seed)


def rand():
    """The next value of the shared generator, as C ``rand()``."""
    return default_generator.rand()
