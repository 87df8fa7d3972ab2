"""No class of the frontend has more than 40 methods, counting those it inherits from frontend classes (issue 9:
the constructs live in modules of free functions, not in one visitor class assembled from mixins)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import quadrants.frontend

MAX_METHODS = 40


def _methods(cls: type) -> set[str]:
    names: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("quadrants.frontend"):
            continue
        for name, value in vars(base).items():
            if isinstance(value, (types.FunctionType, staticmethod, classmethod, property)):
                names.add(name)
    return names


def test_no_frontend_class_has_more_than_40_methods() -> None:
    too_big = []
    for info in pkgutil.iter_modules(quadrants.frontend.__path__):
        module = importlib.import_module(f"quadrants.frontend.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and len(_methods(cls)) > MAX_METHODS:
                too_big.append(f"{module.__name__}.{cls.__qualname__}: {len(_methods(cls))} methods")
    assert not too_big
