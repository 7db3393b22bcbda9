"""Public names imported on first use (PEP 562), so importing a package stays light."""

from __future__ import annotations

import importlib
from typing import Any, Callable

from judgebox.extras import require


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` whose public names live in other modules.

    Args:
        package: the package's ``__name__``.
        exports: public name -> the module that defines it; a name whose module is
            ``f"{package}.{name}"`` is that module itself.

    Returns:
        ``(__getattr__, __dir__)`` to assign at the package's top level. ``__getattr__`` raises
        ``AttributeError`` for any other name and caches what it imported in the package.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = require(module)  # a missing module an extra brings names the extra
        value = loaded if module == f"{package}.{name}" else getattr(loaded, name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(exports))

    return __getattr__, __dir__
