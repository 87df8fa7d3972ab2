"""`qd.algorithms`: device-wide algorithms written in the kernel language (`parallel_sort`)."""

from quadrants.algorithms.sort import parallel_sort

__all__ = ["parallel_sort"]
