"""BUG-049: file I/O problems (USACO/Codeforces style). The input is written to the declared input file
and the declared output file is what the checker compares, in Python and C++, with each case starting
from its own files; inconsistent file-I/O data is test_data_error; the loaders (APPS/TACO
``input_output``, verl ground truth, CodeContests rows) read the file names (real runs in the embedded
sandbox and over HTTP)."""

import json

import pytest

from judgebox.reward import StdioCase, TestSpec, Verdict, judge
from judgebox.reward.loaders import load_problems
from judgebox.sandbox import SandboxClient

PAINT = ("with open('paint.in') as f: a, b = map(int, f.read().split())\n"
         "with open('paint.out', 'w') as f: f.write(str(a + b) + '\\n')\n")


def paint_spec(*cases, **kw):
    return TestSpec(kind="stdio", input_file="paint.in", output_file="paint.out",
                    stdio=[StdioCase(stdin=i, expected=o) for i, o in cases], **kw)


def test_bug_049_file_io_problem_is_accepted(live_server):
    """BUG-049: the input is written to paint.in; paint.out is what the checker compares (embedded
    sandbox and over HTTP)."""
    assert judge(paint_spec(("2 3\n", "5\n")), PAINT).verdict == Verdict.accepted
    assert judge(paint_spec(("2 3\n", "5\n"), ("1 1\n", "2\n")), PAINT,
                 client=SandboxClient(live_server)).verdict == Verdict.accepted


def test_bug_049_each_case_gets_its_own_output_file():
    """A case's output file never carries over: a program that writes it only for the first case's
    input fails the second (every case starts from the request's files); a wrong file is
    wrong_answer; stdout is not compared when output_file is declared."""
    once = ("a, b = map(int, open('paint.in').read().split())\nif a + b == 5:\n"
            "    open('paint.out', 'w').write(str(a + b))\n")
    j = judge(paint_spec(("2 3\n", "5\n"), ("1 1\n", "2\n")), once)
    assert [t.verdict for t in j.tests] == [Verdict.accepted, Verdict.wrong_answer]
    assert "did not write the output file" in j.tests[1].stderr
    stdout_only = "a, b = map(int, open('paint.in').read().split()); print(a + b)"
    assert judge(paint_spec(("2 3\n", "5\n")), stdout_only).verdict == Verdict.wrong_answer
    assert judge(TestSpec(kind="stdio", input_file="paint.in", stdio=[StdioCase(stdin="2 3\n", expected="5\n")]),
                 stdout_only).verdict == Verdict.accepted


def test_bug_049_cpp_file_io_and_extra_files():
    """C++ USACO style with freopen; a case's extra files are written next to the program."""
    cpp = ('#include <cstdio>\nint main(){ freopen("paint.in","r",stdin); freopen("paint.out","w",stdout);'
           ' int a,b,c; FILE* g=fopen("bonus.txt","r"); fscanf(g,"%d",&c); scanf("%d %d",&a,&b); printf("%d\\n",a+b+c); }\n')
    spec = TestSpec(kind="stdio", language="cpp", input_file="paint.in", output_file="paint.out",
                    stdio=[StdioCase(stdin="2 3\n", expected="15\n", files={"bonus.txt": "10\n"})])
    assert judge(spec, cpp).verdict == Verdict.accepted


def test_bug_049_inconsistent_file_io_data_is_test_data_error():
    """An output_file with no expected output, file I/O on a non-stdio kind, a path climbing out."""
    assert judge(paint_spec(("2 3\n", "")), PAINT).verdict == Verdict.test_data_error
    assert "stdio[0].expected" in judge(paint_spec(("2 3\n", "")), PAINT).message
    with pytest.raises(ValueError, match="output_file"):
        TestSpec(kind="stdio", output_file="../x.out")
    assert judge(TestSpec(kind="assert", asserts=["assert True"], input_file="a.in"), "").verdict \
        == Verdict.test_data_error


def test_bug_049_loaders_read_file_io_fields(tmp_path):
    """APPS/TACO-style ``input_output`` and verl ground truth carry ``input_file``/``output_file``."""
    spec = TestSpec.from_in_outs({"inputs": ["2 3\n"], "outputs": ["5\n"], "input_file": "paint.in",
                                  "output_file": "paint.out"})
    assert (spec.input_file, spec.output_file) == ("paint.in", "paint.out")
    assert judge(spec, PAINT).verdict == Verdict.accepted


def test_bug_049_codecontests_rows_with_file_io(tmp_path):
    """Codeforces-style rows naming input/output files load as file-I/O specs; "standard input" is stdio."""
    row = {"name": "paint", "description": "d", "input_file": "paint.in", "output_file": "paint.out",
           "public_tests": {"input": ["2 3\n"], "output": ["5\n"]}, "solutions": {"language": [3], "solution": [PAINT]}}
    std = dict(row, name="std", input_file="standard input", output_file="standard output")
    (tmp_path / "cc.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(std) + "\n")
    paint, plain = load_problems(tmp_path / "cc.jsonl", "codecontests")
    assert (paint.spec.input_file, paint.spec.output_file) == ("paint.in", "paint.out")
    assert (plain.spec.input_file, plain.spec.output_file) == (None, None)
    assert judge(*paint.candidate(paint.gold)).verdict == Verdict.accepted
