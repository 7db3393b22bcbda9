"""load_tools: verl's YAML format plus function tools; every mistake names the file and entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebox.agent.tools import FunctionTool, ToolConfigError, TrajectoryTools, load_tools
from tests.agent.tools.sample_tools import Counter, add

DATA = Path(__file__).parent / "data"


async def test_loads_classes_and_function_tools():
    tools = load_tools(DATA / "tools.yaml")
    assert [t.name for t in tools] == ["counter", "add", "count_words", "add_in_worker"]
    counter, add_tool, count_words, add_in_worker = tools
    assert isinstance(counter, Counter) and counter.config == {"type": "native", "clamp": {"n": 5}}
    assert add_tool is add
    assert isinstance(count_words, FunctionTool) and not count_words.process
    assert count_words.tool_schema.function.parameters["properties"]["text"]["type"] == "string"
    assert add_in_worker.process and add_in_worker.fn is add.fn
    async with TrajectoryTools(tools, timeout_s=30) as tt:
        assert (await tt.call("counter", {"n": 100})).text == "5"  # clamped by config
        assert (await tt.call("count_words", {"text": "a b c"})).text == "3"
        assert (await tt.call("add_in_worker", {"a": 40})).text == "42"
    add_in_worker.close()


def write(tmp_path: Path, text: str, name: str = "tools.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_duplicate_names_across_files_name_both_sources(tmp_path):
    other = write(tmp_path, "tools:\n  - function: tests.agent.tools.sample_tools.word_count\n    name: add\n", "more.yaml")
    with pytest.raises(ToolConfigError) as e:
        load_tools(DATA / "tools.yaml", other)
    assert str(e.value) == (
        f"tool name 'add' is declared twice: {DATA / 'tools.yaml'} tools[1] (tests.agent.tools.sample_tools.add) "
        f"and {other} tools[0] (tests.agent.tools.sample_tools.word_count); rename one (function entries take name:)")


@pytest.mark.parametrize("body, message", [
    ("tools:\n  - class_name: tests.agent.tools.sample_tools.NoSuchTool\n",
     "tools[0]: cannot import 'tests.agent.tools.sample_tools.NoSuchTool'"),
    ("tools:\n  - class_name: no_such_package.Tool\n", "tools[0]: cannot import 'no_such_package.Tool'"),
    ("tools:\n  - class_name: pathlib.Path\n", "tools[0]: 'pathlib.Path' is not a subclass of judgebox.agent.tools.BaseTool"),
    ("tools:\n  - function: tests.agent.tools.sample_tools.add\n  - class_name: tests.agent.tools.sample_tools.Counter\n"
     "    tool_schema: {type: function, function: {name: c, parameters: {type: object, properties: {n: {type: int}}}}}\n",
     "tools[1]: 'tests.agent.tools.sample_tools.Counter' could not be built: ValueError: bad tool_schema: "
     "function.parameters: Value error, parameters is not a valid JSON Schema at properties/n/type"),
    ("tools:\n  - class_name: tests.agent.tools.sample_tools.Counter\n    configs: {}\n",
     "tools[0]: unknown key(s) ['configs']; allowed: ['class_name', 'config', 'tool_schema']"),
    ("tools:\n  - function: tests.agent.tools.sample_tools.add\n    timeout: 3\n",
     "tools[0]: unknown key(s) ['timeout']; allowed: ['config', 'function', 'name', 'process']"),
    ("tools:\n  - name: x\n", "tools[0]: give exactly one of class_name (a BaseTool class) or function"),
    ("tools:\n  - class_name: tests.agent.tools.sample_tools.Counter\n    config: {type: mcp}\n",
     "tools[0]: config.type 'mcp' is not supported; use native or omit it"),
    ("tool:\n  - function: tests.agent.tools.sample_tools.add\n", "the top level must be a mapping with a 'tools:' list"),
    ("tools: []\nfunction_tools: []\n", "unknown top-level key(s) ['function_tools']"),
    ("tools: [\n", "not valid YAML"),
])
def test_mistakes_name_the_file_and_entry(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(ToolConfigError) as e:
        load_tools(path)
    assert str(e.value).startswith(f"{path}")
    assert message in str(e.value)


def test_shipped_code_interpreter_config_loads():
    [tool] = load_tools(Path(__file__).parents[3] / "configs/tools/code_interpreter.yaml")
    assert tool.name == "code_interpreter"
    assert tool.clamp_arguments({"code": "1", "timeout": 600})["timeout"] == 30
    tool.close()
