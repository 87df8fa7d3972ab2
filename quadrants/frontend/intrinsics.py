"""The kernel language's built-in functions as Python objects: `qd.sin`, `qd.static`, `qd.atomic_add`, ...

Each object carries `__qd_intrinsic__`, the name the frontend dispatches on (see `frontend/calls.py`). Called
from Python scope they compute on Python numbers (or, for the atomics, explain that they only exist inside
kernels). Consumes nothing; produces the objects that `quadrants/__init__.py` exports.
"""

from __future__ import annotations

import builtins
import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.runtime import python_backend
from quadrants.types import python_values

F = Callable[..., Any]


def intrinsic(name: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        fn.__qd_intrinsic__ = name  # type: ignore[attr-defined]
        return fn

    return mark


def _kernel_only(name: str) -> F:
    def fn(*args: Any, **kwargs: Any) -> Any:
        if python_backend.active():  # qd.init(arch=qd.python): kernels run as Python, and these have a meaning there
            from quadrants.runtime.python_backend.ops import IMPLS

            if name in IMPLS:
                return IMPLS[name](*args, **kwargs)
        raise QuadrantsSyntaxError(f"qd.{name}() can only be used inside a kernel or a qd.func")

    fn.__name__ = name
    fn.__qd_intrinsic__ = name  # type: ignore[attr-defined]
    return fn


# ---- compile-time -------------------------------------------------------------------------------------


@intrinsic("static")
def static(x: Any, *xs: Any) -> Any:
    """Evaluate at compile time: `qd.static(expr)`, `if qd.static(cond)`, `for i in qd.static(range(n))`."""
    return (x, *xs) if xs else x


@intrinsic("static_print")
def static_print(*args: Any, **kwargs: Any) -> None:
    print(*args, **kwargs)


@intrinsic("static_assert")
def static_assert(cond: Any, msg: str | None = None) -> None:
    if not cond:
        raise AssertionError(msg or "static assertion failed")


class _NdRange:
    def __init__(self, *dims: Any, axes: Any = None) -> None:
        """Each dimension is `n` or `(begin, end)`: integers, or integer runtime values in a kernel (Quadrants'
        errors otherwise: QuadrantsSyntaxError for another form, QuadrantsTypeError for a non-integer).
        `axes` is the visit order: the canonical axis at each nesting level, outermost first (the loop
        variables stay canonical); the identity is `None`, as Quadrants reports it."""
        self.bounds: list[tuple[Any, Any]] = []
        for d in dims:
            if isinstance(d, (tuple, list)):
                if len(d) != 2:
                    raise QuadrantsSyntaxError("Every argument of ndrange should be a scalar or a tuple/list like "
                                               f"(begin, end), got {tuple(d)!r}")  # fmt: skip
                bounds = (d[0], d[1])
            else:
                bounds = (0, d)
            if any(isinstance(b, _NdRange) for b in bounds):
                raise QuadrantsSyntaxError("Every argument of ndrange should be a scalar or a tuple/list like "
                                           "(begin, end): an ndrange cannot be nested in another")  # fmt: skip
            if any(isinstance(b, (float, np.floating)) for b in bounds):
                raise QuadrantsTypeError("Every argument of ndrange should be an integer scalar or a tuple/list of "
                                         f"(int, int), got {d!r}")  # fmt: skip
            self.bounds.append(bounds)
        self.axes = _check_axes(axes, len(self.bounds))

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        if self.axes is None:
            return itertools.product(*(range(int(b), int(e)) for b, e in self.bounds))
        order = self.axes
        return (_canonical(t, order) for t in itertools.product(*(range(int(self.bounds[a][0]),
                                                                        int(self.bounds[a][1])) for a in order)))  # fmt: skip

    def grouped(self) -> Iterator[Any]:
        """Python scope: each index as a `qd.Vector`, in the visit order."""
        return (python_values.wrap_matrix(np.array(t)) for t in self)


def _canonical(physical: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(axes)
    for p, a in enumerate(axes):
        out[a] = physical[p]
    return tuple(out)


def _check_axes(axes: Any, ndim: int) -> tuple[int, ...] | None:
    """`qd.ndrange(axes=)` checked as Quadrants does; the identity becomes None."""
    if axes is None:
        return None
    axes = tuple(axes)
    if not all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in axes):
        raise QuadrantsTypeError(f"qd.ndrange(axes={axes!r}): entries must be Python ints (axis numbers)")
    if len(axes) != ndim:
        raise QuadrantsSyntaxError(f"qd.ndrange(axes={axes!r}) has {len(axes)} entries but ndrange has {ndim} "
                                   "dimension(s)")  # fmt: skip
    if sorted(int(a) for a in axes) != list(range(ndim)):
        raise QuadrantsSyntaxError(f"qd.ndrange(axes={axes!r}) is not a permutation of 0..{ndim - 1}")
    axes = tuple(int(a) for a in axes)
    return None if axes == tuple(range(ndim)) else axes


@intrinsic("ndrange")
def ndrange(*dims: Any, axes: Any = None) -> _NdRange:
    """Iterate over a multi-dimensional index space: `for i, j in qd.ndrange(n, (1, m))`. `axes=(1, 0)` visits
    axis 1 outermost (to match a `qd.tensor(layout=(1, 0))`); `i, j` stay the canonical indices."""
    return _NdRange(*dims, axes=axes)


class GroupedNdRange:
    """`qd.grouped(qd.ndrange(...))` evaluated as Python (in Python scope, or inside `qd.static(...)`): its
    indices as `qd.Vector`s, as in Quadrants (`offset.cast(qd.f32)`, `x[I]` in a static loop's body)."""

    def __init__(self, inner: _NdRange) -> None:
        self.inner = inner

    def __iter__(self) -> Iterator[Any]:
        for index in self.inner:
            yield python_values.wrap_matrix(np.array(index, dtype=np.int64))


@intrinsic("grouped")
def grouped(x: Any) -> Any:
    """Bind the whole index of an ndrange (or ndarray) loop to one vector: `for I in qd.grouped(...)`."""
    if isinstance(x, _NdRange):
        return GroupedNdRange(x)
    shape = python_backend.index_shape(x)  # a field or ndarray of the python backend: its indices as vectors
    return x if shape is None else GroupedNdRange(_NdRange(*shape))


# ---- math ---------------------------------------------------------------------------------------------


def _math(name: str, py: F) -> F:
    def fn(*args: Any, **kwargs: Any) -> Any:
        if any(hasattr(a, "__qd_matrix__") for a in args):
            return _elementwise(py, args, kwargs)
        return py(*args, **kwargs)

    fn.__name__ = name
    fn.__qd_intrinsic__ = name  # type: ignore[attr-defined]
    return fn


def _elementwise(py: F, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A math function of Python-scope vectors/matrices (and scalars, broadcast): element by element, as in
    Quadrants (`qd.max(4, qd.Vector([3, 4, 5]))` is `[4, 4, 5]`)."""
    arrays = np.broadcast_arrays(*(np.asarray(a) for a in args))
    flat = [py(*(x.item() for x in xs), **kwargs) for xs in zip(*(a.reshape(-1) for a in arrays))]
    return python_values.wrap_matrix(np.array(flat).reshape(arrays[0].shape))


def _round_half_away(x: float) -> float:
    return float(math.floor(x + 0.5)) if x >= 0 else -float(math.floor(-x + 0.5))


sin = _math("sin", math.sin)
cos = _math("cos", math.cos)
tan = _math("tan", math.tan)
asin = _math("asin", math.asin)
acos = _math("acos", math.acos)
atan = _math("atan", math.atan)
tanh = _math("tanh", math.tanh)
atan2 = _math("atan2", math.atan2)
sqrt = _math("sqrt", math.sqrt)
rsqrt = _math("rsqrt", lambda x: 1.0 / math.sqrt(x))
exp = _math("exp", math.exp)
log = _math("log", math.log)
pow = _math("pow", lambda a, b: a**b)  # noqa: A001
floor = _math("floor", lambda x, dtype=None: float(math.floor(x)))
ceil = _math("ceil", lambda x, dtype=None: float(math.ceil(x)))
round = _math("round", lambda x, dtype=None: _round_half_away(x))  # noqa: A001
abs = _math("abs", lambda x: x if x >= 0 else -x)  # noqa: A001
min = _math("min", builtins.min)  # noqa: A001
max = _math("max", builtins.max)  # noqa: A001
select = _math("select", lambda c, a, b: a if c else b)
raw_div = _math("raw_div", lambda a, b: math.trunc(a / b) if isinstance(a, int) and isinstance(b, int) else a / b)
raw_mod = _math(
    "raw_mod", lambda a, b: math.fmod(a, b) if isinstance(a, float) or isinstance(b, float) else int(math.fmod(a, b))
)
popcnt = _math("popcnt", lambda x: bin(x & 0xFFFFFFFF).count("1"))
clz = _math("clz", lambda x: 32 - (x & 0xFFFFFFFF).bit_length())
ffs = _math("ffs", lambda x: (x & -x).bit_length())  # the lowest set bit is the same at any width
logical_not = _math("logical_not", lambda x: int(not x))  # 1 / 0 (a vector: element by element)
zero = _math("zero", lambda x: x * 0)  # a value of x's type and shape: 0
one = _math("one", lambda x: x * 0 + 1)


@intrinsic("cast")
def cast(x: Any, dtype: Any) -> Any:
    """Convert to `dtype` (float to int truncates toward zero; integers wrap)."""
    from quadrants.types.dtypes import to_dtype

    if python_backend.active():
        from quadrants.runtime.python_backend.ops import cast as tensor_cast

        return tensor_cast(x, to_dtype(dtype))
    return to_dtype(dtype)(x)


@intrinsic("bit_cast")
def bit_cast(x: Any, dtype: Any) -> Any:
    import numpy as np

    from quadrants.types.dtypes import to_dtype

    t = to_dtype(dtype)
    return np.array(x).view(t.np_dtype).item()


@intrinsic("random")
def random(dtype: Any = float) -> Any:
    """A uniform random value of `dtype` (floats in [0, 1), integers over the whole range), inside kernels only.

    Quadrants 1.3.3 fails with an IndexError here (Python scope); so does this, with a message that says why."""
    raise IndexError("qd.random() can only be used inside a kernel or a qd.func")


@intrinsic("randn")
def randn(dt: Any = None) -> Any:
    """A standard normal value of `dt` (default: the default float type), inside kernels only (Box-Muller on two
    `qd.random` draws). Quadrants 1.3.3 fails with an AssertionError here (Python scope); so does this."""
    raise AssertionError("qd.randn() can only be used inside a kernel or a qd.func")


# `qd.clock_counter()`: the hardware cycle counter as an i64 (kernel only; see ir.SIMT_OPS)
clock_counter = _kernel_only("clock_counter")

# ---- atomics (kernel only) ----------------------------------------------------------------------------

atomic_add = _kernel_only("atomic_add")
atomic_sub = _kernel_only("atomic_sub")
atomic_min = _kernel_only("atomic_min")
atomic_max = _kernel_only("atomic_max")
atomic_and = _kernel_only("atomic_and")
atomic_or = _kernel_only("atomic_or")
atomic_xor = _kernel_only("atomic_xor")
atomic_exchange = _kernel_only("atomic_exchange")
atomic_cas = _kernel_only("atomic_cas")
# SNode operations (frontend/sparse.py)
activate = _kernel_only("activate")
deactivate = _kernel_only("deactivate")
is_active = _kernel_only("is_active")
append = _kernel_only("append")
length = _kernel_only("length")
rescale_index = _kernel_only("rescale_index")
bit_shr = _kernel_only("bit_shr")
loop_config = _kernel_only("loop_config")
# `while qd.graph_do_while(flag):` (Quadrants: a CUDA graph conditional node): frontend/loops.py
graph_do_while = _kernel_only("graph_do_while")
atomic_mul = _kernel_only("atomic_mul")
stop_grad = _kernel_only("stop_grad")  # autodiff: loads of the field below it get no adjoint
block_local = _kernel_only("block_local")  # a GPU shared-memory hint: no effect on the code
cache_read_only = _kernel_only("cache_read_only")  # a hint that the kernel only reads these fields: none here
no_activate = _kernel_only("no_activate")  # a hint that accesses need not activate cells: they still do here
get_addr = _kernel_only("get_addr")  # the address of a field element, as a u64
# hints about a value, which is what they return: unique across the loop's iterations (Quadrants skips atomics
# on it), within [base + low, base + high) (Quadrants sizes block-local caches by it)
loop_unique = _kernel_only("loop_unique")
volatile_load = _kernel_only("volatile_load")  # a load LLVM keeps where it is (frontend/intrinsic_calls.py)
assume_in_range = _kernel_only("assume_in_range")
# Quadrants' renamed qd.simt operations: old intrinsic name -> (the new one, the warning, given once per process)
DEPRECATED = {
    "simt.subgroup.barrier": ("simt.subgroup.sync", "qd.simt.subgroup.barrier() is deprecated: call "
                              "qd.simt.subgroup.sync() (as block.sync() is named)"),
    "simt.subgroup.memory_barrier": ("simt.subgroup.mem_fence", "qd.simt.subgroup.memory_barrier() is deprecated: "
                                     "call qd.simt.subgroup.mem_fence()"),
    "simt.subgroup.ballot_full_subgroup": ("simt.subgroup.ballot", "qd.simt.subgroup.ballot_full_subgroup() is "
                                           "deprecated: call qd.simt.subgroup.ballot() (operations over the whole "
                                           "subgroup have no suffix, those over tiles end in _tiled)"),
    "simt.block.mem_sync": ("simt.block.mem_fence", "qd.simt.block.mem_sync() is deprecated; use "
                            "qd.simt.block.mem_fence() instead."),
    "simt.grid.memfence": ("simt.grid.mem_fence", "qd.simt.grid.memfence() is deprecated; use qd.simt.grid.mem_fence() "
                           "instead."),
}  # fmt: skip

@intrinsic("outer")
def outer(a: Any, b: Any) -> Any:
    """`qd.outer(a, b)`: the outer product `a b^T` of two per-lane columns, deferred: `tile -= qd.outer(a, b)`
    (frontend/tiles.py) is its use; it composes with nothing (`qd.outer(a, b) + qd.outer(c, d)` is a TypeError)."""
    from quadrants.frontend.tiles import OuterProduct

    return OuterProduct(a, b)


# meshes (frontend/mesh.py): a caching hint, and the patch of the mesh-for's element
mesh_local = _kernel_only("mesh_local")
mesh_patch_idx = _kernel_only("mesh_patch_idx")
