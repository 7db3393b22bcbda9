"""Reference pages generated from the code when the docs are built: the settings (the pydantic
settings models), the ``judgebox`` command line (its argparse parser) and the HTTP API (the server's
OpenAPI schema). Written to ``docs/reference/_generated/`` (not committed)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import typing
from typing import Any

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(HERE, "reference", "_generated")


def _type(annotation: Any) -> str:
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if typing.get_origin(annotation) is typing.Union:
        return " or ".join(_type(a) for a in typing.get_args(annotation) if a is not type(None)) + " (optional)"
    return getattr(annotation, "__name__", str(annotation))


def settings_page() -> str:
    from judgebox.sandbox.client.settings import ClientSettings
    from judgebox.sandbox.config import SandboxSettings

    out = ["# Settings\n",
           "Generated from the settings models: every field can be given as a constructor argument,",
           "as an environment variable, and (sandbox settings) as a `judgebox serve` flag. Units: seconds for",
           "times, MiB for `*_MB`, bytes for `*_bytes`.\n"]
    for model, title, flags in ((SandboxSettings, "Sandbox (`SandboxSettings`, `LocalSandbox(**overrides)`, `judgebox serve`)", True),
                                (ClientSettings, "Client (`ClientSettings`, `SandboxClient(**overrides)`)", False)):
        prefix = model.model_config.get("env_prefix", "")
        out += [f"## {title}\n", "| field | environment | " + ("flag | " if flags else "") + "type | default | meaning |",
                "|---|---|" + ("---|" if flags else "") + "---|---|---|"]
        for name, field in model.model_fields.items():
            default = "computed" if field.default_factory is not None else f"`{field.default!r}`"
            env = f"`{prefix}{name.upper()}`"
            alias = getattr(field.validation_alias, "choices", None)
            if alias:
                env = ", ".join(f"`{a}`" for a in alias if a != name)
            flag = f"`--{name.replace('_', '-')}` | " if flags else ""
            desc = (field.description or "").replace("|", "\\|")
            out.append(f"| `{name}` | {env} | {flag}{_type(field.annotation)} | {default} | {desc} |")
        out.append("")
    return "\n".join(out)


def cli_page() -> str:
    from judgebox.cli import build_parser

    parser = build_parser()
    out = ["# Command line\n", "Generated from `judgebox`'s argument parser (`judgebox <command> --help`).\n",
           "```text", parser.format_help().rstrip(), "```\n"]

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out.extend([f"## `{path} {name}`\n", "```text", sub.format_help().rstrip(), "```\n"])
                    walk(sub, f"{path} {name}")

    walk(parser, "judgebox")
    return "\n".join(out)


def _schema_type(schema: dict, defs: dict) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_schema_type(s, defs) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}), defs)}"
    if schema.get("type") == "object" and "additionalProperties" in schema:
        return f"map to {_schema_type(schema['additionalProperties'], defs) if isinstance(schema['additionalProperties'], dict) else 'any'}"
    if "enum" in schema:
        return " \\| ".join(f"`{e}`" for e in schema["enum"])
    return schema.get("type", "any")


def http_page() -> str:
    from judgebox.integrations.openrlhf import create_router
    from judgebox.sandbox import LocalSandbox, SandboxClient
    from judgebox.sandbox.config import SandboxSettings
    from judgebox.sandbox.server import create_app

    # the schema only: minimal isolation needs no privilege, and nothing is warmed up; its start-up
    # notes (what minimal isolation leaves off on this host) say nothing about the docs, so they are muted
    log = logging.getLogger("judgebox")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        settings = SandboxSettings(isolation="minimal", zygote=False, prebuilt_artifacts=False, compile_cache_MB=0)
        app = create_app(settings)
        # as `judgebox serve` does: OpenRLHF's remote reward route on the same server
        app.include_router(create_router(SandboxClient("", local=LocalSandbox(settings)), concurrency=1))
        schema = app.openapi()
    finally:
        log.setLevel(level)
    defs = schema.get("components", {}).get("schemas", {})
    out = ["# HTTP API\n", "Generated from `judgebox serve`'s OpenAPI schema (also served at `GET /openapi.json`",
           "and browsable at `/docs`). SandboxFusion's routes keep SandboxFusion's wire format; the others are",
           "judgebox extensions.\n"]
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            out.append(f"## `{method.upper()} {path}`\n")
            if op.get("summary"):
                out.append(op["summary"] + "\n")
            if op.get("description"):
                out.append(op["description"].strip() + "\n")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                out.append(f"Request body: `{_schema_type(body, defs)}`.\n")
            ok = op.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {}).get("schema")
            if ok:
                out.append(f"Response: `{_schema_type(ok, defs)}`.\n")
    out.append("## Models\n")
    for name, model in sorted(defs.items()):
        out += [f"### `{name}`\n"]
        if model.get("description"):
            out.append(model["description"].strip() + "\n")
        props = model.get("properties", {})
        if props:
            required = set(model.get("required", []))
            out += ["| field | type | required | default | meaning |", "|---|---|---|---|---|"]
            for field, spec in props.items():
                default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
                desc = (spec.get("description") or "").replace("\n", " ").replace("|", "\\|")
                out.append(f"| `{field}` | {_schema_type(spec, defs)} | {'yes' if field in required else ''} | "
                           f"{default} | {desc} |")
            out.append("")
    return "\n".join(out)


def datasets_page() -> str:
    from judgebox.reward.loaders import list_manifests

    out = ["# Datasets\n", "Generated from the manifests in `datasets/` (`judgebox datasets` lists them with what is",
           "found locally). *Needs*: the program runtime profile whose libraries the dataset's harness gives",
           "programs (`judgebox runtime build --profile NAME`; `default` is what `scripts/install.sh` builds), the",
           "libraries checked before scoring, and the official import block (`prelude`). Limits: seconds per test",
           "case and MiB (empty: the spec's defaults, 10 s and 1,024 MiB).\n",
           "| dataset | format | language | limits | needs | description | how to get it |",
           "|---|---|---|---|---|---|---|"]
    for m in list_manifests():
        limits = " ".join(x for x in (f"{m.run_timeout:g} s" if m.run_timeout else "",
                                      f"{m.memory_limit_MB} MiB" if m.memory_limit_MB else "") if x)
        needs = ", ".join(x for x in (f"runtime `{m.runtime}`", *(f"`{lib}`" for lib in m.libraries),
                                      f"prelude `{m.prelude}`" if m.prelude else "") if x)
        cells = [f"`{m.name}`", f"`{m.format}`", m.language or "", limits, needs, m.description, m.source]
        out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(out) + "\n"


def write_pages(app=None) -> None:
    os.makedirs(OUT, exist_ok=True)
    for name, make in (("settings.md", settings_page), ("cli.md", cli_page), ("http-api.md", http_page),
                       ("datasets.md", datasets_page)):
        text = make()
        path = os.path.join(OUT, name)
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True}
