"""A package's public names imported on first use (PEP 562): ``import journaltools`` and the light modules of a
package must not pay for what only some callers use (pyarrow and pandas take ten times a command's start)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], public: Sequence[str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``homes`` is imported from its module when
    first asked for and kept in ``namespace`` (the package's globals), so it is looked up once."""

    def getattr_(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(public)

    return getattr_, dir_
