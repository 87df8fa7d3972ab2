"""The import path real Quadrants' fastcache documentation gives (see docs/fastcache.md):
`from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE`.

Annotate a dataclass member with `dataclasses.field(metadata={FIELD_METADATA_CACHE_VALUE: True})` to compile its
value into kernels (and, with fastcache, into the cache key) instead of passing it as a runtime argument.
"""

FIELD_METADATA_CACHE_VALUE = "qd_cache_value"
