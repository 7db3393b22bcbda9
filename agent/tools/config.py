"""``load_tools``: tools from YAML, in verl's tool-config format plus function tools by module path.

Format (one file; verl's ``initialize_tools_from_config`` format for class entries)::

    tools:
      - class_name: judgebox.agent.tools.code_interpreter.CodeInterpreterTool   # a BaseTool subclass
        config: {type: native, clamp: {timeout: 30}}                   # its config (dict)
        tool_schema: {type: function, function: {...}}                # optional: the class's own otherwise
      - function: my_package.tools.word_count    # a @function_tool, or a plain typed, documented function
        name: count_words                        # optional: rename
        process: true                            # optional: run in a killable worker process
        config: {clamp: {limit: 100}}            # optional

``config.type`` may be ``native`` (verl's only type) or absent. Every mistake is a
:class:`ToolConfigError` naming the file and the entry (``tools[1]``): an unknown key, a class or
function that cannot be imported, a class that is not a :class:`BaseTool`, a bad schema, and a tool
name used twice (naming both entries, across all the files given).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Union

import yaml

from judgebox.agent.tools.base import BaseTool
from judgebox.agent.tools.function import FunctionTool

__all__ = ["ToolConfigError", "build_tool", "load_tools"]

_CLASS_KEYS = {"class_name", "config", "tool_schema"}
_FUNCTION_KEYS = {"function", "name", "process", "config"}


class ToolConfigError(ValueError):
    """A tool config file is wrong; the message names the file, the entry and the fix."""


def _import(dotted: str) -> Any:
    """The object at ``package.module.attr`` (the longest importable module prefix wins)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as e:
            if e.name and not ".".join(parts[:cut]).startswith(e.name):
                raise  # the module exists but one of its own imports is missing
            continue
        for attr in parts[cut:]:
            target = getattr(target, attr)
        return target
    raise ModuleNotFoundError(f"no module found in {dotted!r}")


def build_tool(entry: Any, where: str) -> BaseTool:
    """The tool of one ``tools:`` entry; ``where`` names it in errors (``"file.yaml tools[0]"``)."""
    if not isinstance(entry, dict):
        raise ToolConfigError(f"{where}: must be a mapping with class_name or function, got {entry!r}")
    kind_keys = {"class_name", "function"} & set(entry)
    if len(kind_keys) != 1:
        raise ToolConfigError(f"{where}: give exactly one of class_name (a BaseTool class) or function "
                              f"(a function tool), got {sorted(kind_keys) or 'neither'}")
    allowed = _CLASS_KEYS if "class_name" in entry else _FUNCTION_KEYS
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ToolConfigError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    config = entry.get("config") or {}
    if not isinstance(config, dict):
        raise ToolConfigError(f"{where}: config must be a mapping, got {config!r}")
    if config.get("type", "native") != "native":
        raise ToolConfigError(f"{where}: config.type {config['type']!r} is not supported; use native or omit it")
    dotted = entry.get("class_name") or entry["function"]
    try:
        target = _import(str(dotted))
    except (ImportError, AttributeError) as e:
        raise ToolConfigError(f"{where}: cannot import {dotted!r}: {e}") from None
    try:
        if "class_name" in entry:
            if not (isinstance(target, type) and issubclass(target, BaseTool)):
                raise ToolConfigError(f"{where}: {dotted!r} is not a subclass of judgebox.agent.tools.BaseTool")
            return target(config=config, tool_schema=entry.get("tool_schema"))
        fn = target.fn if isinstance(target, FunctionTool) else target
        if not callable(fn):
            raise ToolConfigError(f"{where}: {dotted!r} is not a function")
        if isinstance(target, FunctionTool) and set(entry) <= {"function"}:
            return target
        schema = target.tool_schema if isinstance(target, FunctionTool) else None
        return FunctionTool(fn, name=entry.get("name"), schema=schema,
                            process=bool(entry.get("process", getattr(target, "process", False))),
                            config={**getattr(target, "config", {}), **config})
    except ToolConfigError:
        raise
    except Exception as e:  # noqa: BLE001 - a bad schema / config raised by the tool: name the entry
        raise ToolConfigError(f"{where}: {dotted!r} could not be built: {type(e).__name__}: {e}") from None


def load_tools(path: Union[str, os.PathLike], *more_paths: Union[str, os.PathLike]) -> list[BaseTool]:
    """The tools declared in one or more YAML files, in order.

    Raises:
        ToolConfigError: a file that is not a ``tools:`` list, or any bad entry (see module docstring).
        OSError: a file that cannot be read.
    """
    tools: list[BaseTool] = []
    seen: dict[str, str] = {}
    for p in (path, *more_paths):
        p = Path(p)
        try:
            doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        except yaml.YAMLError as e:
            raise ToolConfigError(f"{p}: not valid YAML: {e}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("tools"), list):
            raise ToolConfigError(f"{p}: the top level must be a mapping with a 'tools:' list")
        if set(doc) - {"tools"}:
            raise ToolConfigError(f"{p}: unknown top-level key(s) {sorted(set(doc) - {'tools'})}; only 'tools' is allowed")
        for i, entry in enumerate(doc["tools"]):
            where = f"{p} tools[{i}]"
            tool = build_tool(entry, where)
            source = f"{where} ({entry.get('class_name') or entry.get('function')})"
            if tool.name in seen:
                raise ToolConfigError(f"tool name {tool.name!r} is declared twice: {seen[tool.name]} and {source}; "
                                      "rename one (function entries take name:)")
            seen[tool.name] = source
            tools.append(tool)
    return tools
