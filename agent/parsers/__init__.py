"""Tool-call parsers: one module per model output format, in a registry users extend.

``get_parser("hermes").parse(text) -> ParsedTurn`` (``.calls``, ``.content``, ``.reasoning``,
``.errors``, ``.metrics``); never raises. Built in: ``hermes``, ``qwen3_coder``, ``llama3_json``,
``gpt-oss``. A new format is one module with a ``ToolCallParser`` subclass decorated
``@register_parser("name")``.
"""

from judgebox.agent.parsers import gpt_oss, hermes, llama3_json, qwen3_coder  # noqa: F401  (register the formats)
from judgebox.agent.parsers.base import (
    PARSER_METRICS,
    ParsedToolCall,
    ParsedTurn,
    Segment,
    ToolCallParser,
    get_parser,
    parser_names,
    register_parser,
)

__all__ = [
    "PARSER_METRICS",
    "ParsedToolCall",
    "ParsedTurn",
    "Segment",
    "ToolCallParser",
    "get_parser",
    "parser_names",
    "register_parser",
]
