"""Immutable values of named fields, for the types every process makes at start-up.

``@dataclass(frozen=True, slots=True)`` would say the same in fewer lines, but making each such
class costs ~0.3 ms at import (it generates and compiles its methods); across the core's wire types
that was several ms of every server's cold start. A :class:`Value` subclass lists its fields in
``__slots__`` and sets them once in ``__init__`` with :data:`set_field`.
"""

from __future__ import annotations

from typing import Any

#: How an immutable value sets its fields, once, in ``__init__``.
set_field = object.__setattr__


class Value:
    """An immutable value of named fields (its ``__slots__``), equal to another of its class with
    equal fields. Unhashable: the fields may be mutable (dicts)."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and the values may be mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"
