"""Tool schemas and tool responses, in verl's shapes (``verl.tools.schemas``), minus its losses.

verl's ``OpenAIFunctionParametersSchema`` keeps only ``type``/``description``/``enum`` of each
property, so a nested object loses its ``properties``, an array its ``items``, and ``default`` /
``additionalProperties`` vanish. Here ``OpenAIFunctionSchema.parameters`` is the **full JSON Schema,
kept verbatim** (a ``dict``), checked once with ``jsonschema`` when the schema is built. The format
followed is OpenAI's function-calling tool format (``{"type": "function", "function": {name,
description, parameters, strict}}``), the one ``transformers``' ``apply_chat_template(tools=...)``
takes.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["OpenAIFunctionSchema", "OpenAIFunctionToolSchema", "ToolResponse"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI's rule for function names


def _empty_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "required": []}


class OpenAIFunctionSchema(BaseModel):
    """One function: ``name`` (``[A-Za-z0-9_-]{1,64}``), ``description``, ``parameters``, ``strict``.

    ``parameters`` is a JSON Schema (draft 2020-12) whose top level is ``"type": "object"``; it is
    kept exactly as given. A schema that ``jsonschema`` rejects raises ``ValueError`` naming the
    offending keyword.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=_empty_parameters)
    strict: bool = False

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _NAME.match(name):
            raise ValueError(f"function name {name!r} must match [A-Za-z0-9_-]{{1,64}} (OpenAI's rule)")
        return name

    @field_validator("parameters")
    @classmethod
    def _check_parameters(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        if parameters.get("type") != "object":
            raise ValueError(f'parameters must be a JSON Schema with "type": "object", got type '
                             f'{parameters.get("type")!r}')
        try:
            jsonschema.Draft202012Validator.check_schema(parameters)
        except jsonschema.SchemaError as e:
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            raise ValueError(f"parameters is not a valid JSON Schema at {where}: {e.message}") from None
        return parameters


class OpenAIFunctionToolSchema(BaseModel):
    """One tool in OpenAI's format: ``{"type": "function", "function": OpenAIFunctionSchema}``.

    ``to_openai()`` gives the plain dict for ``tokenizer.apply_chat_template(tools=[...])`` and for
    OpenAI-compatible servers.
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["function"] = "function"
    function: OpenAIFunctionSchema

    @property
    def name(self) -> str:
        return self.function.name

    def to_openai(self) -> dict[str, Any]:
        """The tool as a plain dict with exactly the keys it was given (``type`` always; the defaults
        of ``description``, ``parameters`` and ``strict`` are not added): a chat template that writes
        the tools out as JSON renders the user's schema, as ``apply_chat_template(tools=...)`` would.
        ``parameters`` is the full JSON Schema (a copy)."""
        return {"type": "function", **self.model_dump(mode="json", exclude_unset=True, exclude={"type"})}


class ToolResponse(BaseModel):
    """What a tool returns to the model (verl's shape): ``text``, ``image`` and ``video`` lists.

    ``image``/``video`` must be lists (one item per image or video), as in verl.
    """

    text: Optional[str] = None
    image: Optional[list[Any]] = None
    video: Optional[list[Any]] = None

    def is_empty(self) -> bool:
        return not self.text and not self.image and not self.video

    def is_text_only(self) -> bool:
        return bool(self.text) and not self.image and not self.video
