"""LiveCodeBench ``code_generation`` rows (HF ``livecodebench/code_generation_lite``):
``question_id``, ``question_content``, ``starter_code``, ``public_test_cases`` (JSON list),
``private_test_cases`` (JSON list, or base64 of zlib of a pickled JSON string), ``metadata`` (JSON
with ``func_name`` for functional problems). There are no reference solutions. The spec's prelude is
LiveCodeBench's ``import_string`` (:mod:`judgebox.reward.preludes`), for stdin and functional problems.

The pickled payload is decoded with an unpickler that refuses every global (only str/bytes/list/dict
and numbers can come out), so a crafted dataset file cannot run code on the host.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib
from typing import Any

from judgebox.reward.preludes import PRELUDES
from judgebox.reward.spec import TestDataError

from .cases import decode_json, lcb_spec
from .problem import Problem, guarded_spec, text_columns


class _DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a dataset file")


def decode_compressed(value: str, what: str) -> Any:
    """JSON text, or base64(zlib(pickle(obj))) as LiveCodeBench/SandboxFusion ship it.

    Returns:
        the decoded object; a pickled JSON string is parsed too.

    Raises:
        TestDataError: neither form decodes, or the pickle refers to a class or function.
    """
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    try:
        obj = _DataOnlyUnpickler(io.BytesIO(zlib.decompress(base64.b64decode(value)))).load()
    except (binascii.Error, zlib.error, pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise TestDataError(f"{what} is neither JSON nor base64+zlib+pickle ({exc})") from None
    return decode_json(obj, what)


def to_problem(row: dict[str, Any], index: int, data_source: str) -> Problem:
    """One LiveCodeBench row; unusable test data becomes ``data_error``."""
    def build():
        metadata = decode_json(row.get("metadata") or "{}", "metadata")
        tests = list(decode_compressed(row["public_test_cases"], "public_test_cases"))
        if row.get("private_test_cases"):
            tests += decode_compressed(row["private_test_cases"], "private_test_cases")
        return lcb_spec(tests, metadata.get("func_name"), checker="lcb", prelude=PRELUDES["livecodebench"])

    spec, error = guarded_spec(build)
    prompt = row.get("question_content", "")
    if row.get("starter_code"):
        prompt += "\n\n" + row["starter_code"]
    return Problem(task_id=str(row.get("question_id", index)), prompt=prompt, spec=spec,
                   data_error=error, data_source=data_source,
                   columns=text_columns(row, {"question_content", "starter_code",
                                              "public_test_cases", "private_test_cases", "metadata"}))
