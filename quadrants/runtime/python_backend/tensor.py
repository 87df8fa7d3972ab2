"""`PyTensor`: the python backend's fields and ndarrays, a torch.Tensor subclass (Quadrants' `_py_tensor` API).

A tensor made by `create` keeps its batch (index) dimensions apart from its element dimensions: `.shape` is the
batch shape, `.size()` the whole torch shape, and `_tc` / `_T_tc` / `_np` / `_T_np` are the views Quadrants'
fields and ndarrays have (itself; the first two batch axes swapped to the front; their numpy views). Indexing
accepts what kernels index with: a vector index (`a[I]`, from `qd.grouped`), `x[None]` of a 0-d field, and
`x[0]` of a 0-d tensor (its value). Iterating a 1-D tensor yields Python numbers (so `(1, *J)` indexes numpy).

Consumes shapes and torch dtypes; produces tensors. Imported only while the python backend runs (torch is needed).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
import torch

from quadrants.types import python_values
from quadrants.types.compound import MatrixType


def _plain(t: Any) -> Any:
    """A PyTensor as a plain torch.Tensor sharing its storage (anything else unchanged)."""
    return torch.Tensor._make_subclass(torch.Tensor, t) if isinstance(t, PyTensor) else t


def _index(key: Any) -> Any:
    """A kernel's index as torch takes it: vectors and 1-D tensors become tuples of ints, `None` the empty index."""
    if key is None:
        return ()
    if hasattr(key, "__qd_matrix__") or (isinstance(key, torch.Tensor) and key.ndim == 1):
        return tuple(int(k) for k in np.asarray(key).reshape(-1))
    if isinstance(key, list) and len(key) == 1:
        return key[0]
    if isinstance(key, tuple):
        return tuple(int(k) if isinstance(k, torch.Tensor) and k.ndim == 0 else k for k in key)
    return key


def _value(v: Any) -> Any:
    """A value to store, as torch takes it: numpy arrays and vectors as tensors, numpy scalars as numbers."""
    if isinstance(v, np.ndarray):
        return torch.from_numpy(v)
    if isinstance(v, np.generic):
        return v.item()
    if hasattr(v, "__qd_matrix__"):
        return torch.as_tensor(np.asarray(v))
    return v


class PyTensor(torch.Tensor):
    """A torch tensor with Quadrants' field/ndarray surface (see the module docstring)."""

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if any(not issubclass(t, PyTensor) and t is not torch.Tensor for t in types):
            # another subclass takes part: let it decide, seeing plain tensors where ours were
            tree_map = torch.utils._pytree.tree_map
            return func(*tree_map(_plain, args), **tree_map(_plain, kwargs))
        return super().__torch_function__(func, types, args, kwargs)

    @classmethod
    def create(cls, shape: tuple[int, ...], dtype: Any, batch_ndim: int | None = None) -> PyTensor:
        """A zeroed tensor of `shape` whose first `batch_ndim` axes (default: all) are its index space."""
        made = cls(torch.zeros(size=tuple(shape), dtype=dtype))
        made._setup_views(len(shape) if batch_ndim is None else batch_ndim)
        return made

    def _setup_views(self, batch_ndim: int) -> None:
        """The views a Quadrants field/ndarray has (set here, not in a constructor: torch builds subclass
        instances in C++, and a PyTensor made by an operation is a plain value without them)."""
        self._tc = self
        self._T_tc = self.movedim(batch_ndim - 1, 0) if batch_ndim > 1 else self
        self._np = self.numpy()
        self._T_np = self._T_tc.numpy()
        self._batch_shape = self.size()[:batch_ndim]
        self.grad = None
        self.dual = None

    @property
    def shape(self) -> Any:  # type: ignore[override]
        batch = getattr(self, "_batch_shape", None)
        return self.size() if batch is None else batch

    def get_shape(self) -> Any:
        return self.size()

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        key = _index(key)
        if key == 0 and not isinstance(key, tuple) and self.dim() == 0:
            return self.item()  # a 0-d field read as x[0]: its value (a snapshot, not a view)
        return super().__getitem__(key)

    def __setitem__(self, key: Any, v: Any) -> None:
        key, v = _index(key), _value(v)
        try:
            super().__setitem__(key, v)
        except Exception as e:  # torch's message does not say which store failed
            raise type(e)(f"PyTensor.__setitem__({key!r}, {v!r} (type={type(v).__name__})): {e}") from e

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        for k in range(self.size()[0]):
            item = super().__getitem__(k)
            if item.dim() != 0:
                yield item
                continue
            value = item.item()
            yield int(value) if isinstance(value, float) and value.is_integer() else value

    def transpose(self, *dims: Any) -> Any:  # type: ignore[override]
        """`m.transpose()` of a 2-D tensor is the matrix transpose, as for `qd.Matrix`; torch's with dims."""
        if dims:
            return super().transpose(*dims)
        if self.dim() != 2:
            raise ValueError(f"transpose() without dims needs a 2-D tensor, got {self.dim()}-D")
        return super().transpose(0, 1)

    # ---- the Python-scope surface of fields and ndarrays ------------------------------------------------

    def fill(self, v: Any) -> None:
        self.fill_(v)

    def from_numpy(self, arr: Any) -> None:
        self.copy_(torch.from_numpy(np.asarray(arr)))

    def to_numpy(self) -> np.ndarray:
        return self.numpy().copy()

    def to_torch(self, device: Any = None) -> torch.Tensor:
        return _plain(self).clone() if device is None else _plain(self).to(device)

    @property
    def x(self) -> Any:
        return self[0]

    @property
    def y(self) -> Any:
        return self[1]

    @property
    def z(self) -> Any:
        return self[2]

    def __getattr__(self, name: str) -> Any:
        """A `qd.Matrix` method torch lacks (`normalized`, `cross`, `outer_product`, ...) on a copy as a Matrix."""
        if not name.startswith("_"):
            method = getattr(_matrix_class(), name, None)
            if callable(method):
                return partial(method, python_values.wrap_matrix(self.detach().numpy().copy()))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


create_tensor = PyTensor.create


def _matrix_class() -> type:
    return type(python_values.wrap_matrix(np.zeros(1)))


def allocate(dtype: Any, shape: Any) -> PyTensor:
    """`qd.field` / `qd.ndarray` on the python backend: `dtype` a resolved primitive or vector/matrix type,
    `shape` None (a 0-d field), an int or a tuple. The element's axes follow the index axes."""
    batch = () if shape is None else (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    element: tuple[int, ...] = ()
    if isinstance(dtype, MatrixType):
        element, dtype = tuple(dtype.shape), dtype.dtype
    return PyTensor.create((*batch, *element), torch_dtype(dtype), batch_ndim=len(batch))


def torch_dtype(prim: Any) -> Any:
    """The torch dtype of a primitive type (the one torch gives its numpy type)."""
    return torch.from_numpy(np.zeros(0, prim.np_dtype)).dtype
