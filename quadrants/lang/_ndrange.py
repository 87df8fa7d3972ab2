"""`quadrants.lang._ndrange._Ndrange`: Quadrants' module path of the object `qd.ndrange(...)` returns (its
`axes` attribute, its Python-scope `grouped()`); the class is the frontend's (frontend/intrinsics.py)."""

from quadrants.frontend.intrinsics import _NdRange as _Ndrange  # noqa: F401
