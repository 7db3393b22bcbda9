"""BUG-048: the C++ standard. C++20 code compiles by default (gnu++20); ``TestSpec.cpp_std`` and the
request's ``cpp_std`` extension (embedded and over HTTP) choose another standard, and a value that is
not a g++ ``-std`` value is refused naming the field (real runs in the embedded sandbox and a live server)."""

import pytest

from judgebox.reward import StdioCase, TestSpec, Verdict, judge

CPP20 = "#include <cstdio>\n#include <map>\nint main(){ std::map<int,int> m; printf(\"%d\\n\", (int)m.contains(1)); }\n"


def cpp_spec(**kw):
    return TestSpec(kind="stdio", language="cpp", stdio=[StdioCase(stdin="", expected="0\n")], **kw)


def test_bug_048_cpp20_code_is_accepted_by_default():
    """BUG-048: C++20 code compiles with the default gnu++20."""
    assert judge(cpp_spec(), CPP20).verdict == Verdict.accepted


def test_bug_048_spec_and_request_choose_another_standard(run_code):
    """``TestSpec.cpp_std`` and the request's ``cpp_std`` extension (embedded and HTTP) choose the
    standard; a value that is not a g++ -std value is refused naming the field."""
    assert judge(cpp_spec(cpp_std="c++17"), CPP20).verdict == Verdict.compile_error
    resp = run_code({"code": CPP20, "language": "cpp", "cpp_std": "c++17"})
    assert resp.compile_result.return_code != 0 and "contains" in resp.compile_result.stderr
    assert run_code({"code": CPP20, "language": "cpp"}).run_result.stdout == "0\n"
    with pytest.raises(ValueError, match="cpp_std"):
        TestSpec(kind="stdio", cpp_std="c++17; rm -rf /")


def test_bug_048_bad_cpp_std_is_http_422_naming_the_field(live_server):
    import httpx

    r = httpx.post(f"{live_server}/run_code", json={"code": CPP20, "language": "cpp", "cpp_std": "-O0"}, timeout=60)
    assert r.status_code == 422 and "cpp_std" in r.text
