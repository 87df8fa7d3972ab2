"""How much scratch each of `qd.algorithms`' device-wide ops needs: host-side integer arithmetic.

The ops work in a staircase of levels of 256-element blocks (`_staircase.py`): level 0 is the input, level k + 1
holds one partial per block of level k, so level k has ceil(n / 256**k) entries and `log256_max_n` levels cover
any n up to 256**log256_max_n. Scratch holds levels 1 .. log256_max_n back to back, which for a capacity N is a
little over N / 255 slots; a count n <= N needs no more (every level only shrinks with n). The sort also keeps one
256-digit histogram per input block, scanned by a staircase of its own one level deeper.

Every helper returns at least 1 (a count that sizes an allocation directly), takes the depth explicitly or derives
the smallest one from N, and refuses a depth above 4: 256**4 = 2**32 already exceeds what an i32 index addresses.
"""

from __future__ import annotations

BLOCK = 256
MAX_DEPTH = 4


def depth_for(n: int) -> int:
    """The smallest log256_max_n whose capacity 256**d covers n (at least 1)."""
    d = 1
    while BLOCK**d < n:
        d += 1
    return d


def check_depth(log256_max_n: int) -> int:
    if not isinstance(log256_max_n, int) or isinstance(log256_max_n, bool) or not 1 <= log256_max_n <= MAX_DEPTH:
        raise ValueError(f"log256_max_n must be an int from 1 to {MAX_DEPTH} (256**{MAX_DEPTH} = 2**32 already "
                         f"exceeds an i32 index), got {log256_max_n!r}")  # fmt: skip
    return log256_max_n


def level_count(n: int, k: int) -> int:
    """Entries of level k for a count n: ceil(n / 256**k) (level 0 is the input itself)."""
    return -(-n // BLOCK**k) if n > 0 else 0


def staircase_slots(n: int, depth: int) -> int:
    """Slots that levels 1 .. depth of a count n take."""
    return sum(level_count(n, k) for k in range(1, depth + 1))


def _resolve(n: int, log256_max_n: int | None) -> tuple[int, int]:
    n = int(n)
    if n < 0:
        raise ValueError(f"the element count must be >= 0, got {n}")
    return n, check_depth(depth_for(n) if log256_max_n is None else log256_max_n)


def reduce_scratch_slots(n: int, log256_max_n: int | None = None) -> int:
    """Scratch slots `reduce_{add,min,max}` needs for up to n elements (u32 for 4-byte dtypes, u64 for 8-byte)."""
    n, depth = _resolve(n, log256_max_n)
    return max(1, staircase_slots(n, depth))


def exclusive_scan_scratch_slots(n: int, log256_max_n: int | None = None) -> int:
    """Scratch slots `exclusive_scan_{add,min,max}` needs (u32 for 4-byte dtypes, u64 for 8-byte)."""
    return reduce_scratch_slots(n, log256_max_n)


def select_scratch_slots(n: int) -> int:
    """u32 scratch slots `select` needs for up to n elements, whatever log256_max_n it is compiled for."""
    n, _ = _resolve(n, None)
    return max(1, staircase_slots(n, MAX_DEPTH))


def reduce_by_key_scratch_slots(n: int) -> int:
    """u32 scratch slots `reduce_by_key_add` needs for up to n elements, whatever its log256_max_n."""
    return select_scratch_slots(n)


def sort_histogram_slots(n: int) -> int:
    """The sort's per-block digit histograms: 256 counters for each 256-element block."""
    return BLOCK * level_count(n, 1)


def sort_scratch_slots(n: int, log256_max_n: int | None = None) -> int:
    """u32 scratch slots `sort` needs for up to n keys: the histograms and their staircase (one level deeper, as
    there are 256 counters per block)."""
    n, depth = _resolve(n, log256_max_n)
    hist = sort_histogram_slots(n)
    return max(1, hist + staircase_slots(hist, depth + 1))
