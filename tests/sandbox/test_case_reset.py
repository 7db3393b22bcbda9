"""Each case of a ``/run_tests`` request starts from the same files (:mod:`sandbox.case_reset`):
nothing an earlier case wrote in the working folder, ``/tmp`` or ``/var/tmp`` is seen by the next,
and what it changed or removed is back. Before, case 1 printed ``seen A``, and a slow program that
saved its progress passed later cases (``pass_rate`` 0.6 instead of 0)."""

from __future__ import annotations

import base64

from reward import StdioCase, TestSpec, compute_score

STATEFUL = ("import os\nfor p in ('state.txt', '/tmp/state.txt', '/var/tmp/state.txt'):\n"
            "    print('seen' if os.path.exists(p) else 'fresh', p)\n"
            "for p in ('state.txt', '/tmp/state.txt', '/var/tmp/state.txt'):\n    open(p, 'a').write(input())\n"
            "os.makedirs('d/e', exist_ok=True)\nprint(open('data.txt').read())\n"
            "open('data.txt', 'w').write('changed'); os.chmod('data.txt', 0o600); os.remove('keep.txt')")
FRESH = "fresh state.txt\nfresh /tmp/state.txt\nfresh /var/tmp/state.txt\norig\n"


def test_every_case_sees_the_request_files_and_nothing_from_earlier_cases(local_sandbox):
    b64 = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
    r = local_sandbox.run_tests({"code": STATEFUL, "language": "python", "files": {"data.txt": b64("orig"),
                                                                                    "keep.txt": b64("")},
                                 "cases": [{"stdin": "A\nA\nA"}, {"stdin": "B\nB\nB"}, {"stdin": "C\nC\nC"}]})
    assert [(x.status.value, x.stdout) for x in r.run_results] == [("Finished", FRESH)] * 3


def test_a_compiled_program_is_restored_for_every_case(local_sandbox):
    code = ('#include <cstdio>\nint main() { FILE *f = fopen("main", "w");\n'  # try to clobber itself
            '  std::puts(f ? "clobbered" : "busy"); if (f) std::fclose(f);\n'
            '  FILE *g = fopen("note.txt", "r"); std::puts(g ? "seen" : "fresh"); if (g) std::fclose(g);\n'
            '  g = fopen("note.txt", "w"); std::fputs("x", g); std::fclose(g); }\n')
    r = local_sandbox.run_tests({"code": code, "language": "cpp", "cases": [{}, {}, {}]})
    assert r.compile_result.return_code == 0, r.compile_result.stderr
    assert [x.stdout.split("\n")[1] for x in r.run_results] == ["fresh"] * 3
    assert all(x.status.value == "Finished" and x.return_code == 0 for x in r.run_results)


def test_saved_progress_earns_no_partial_credit():
    """Needs 1.5 s of CPU at run_timeout=1; with its progress kept between cases it finished later ones."""
    slow = ("import os, time\nt = time.process_time()\ndone = float(open('p.txt').read()) if os.path.exists('p.txt') else 0\n"
            "while done < 1.5:\n    time.sleep(0)\n    done += time.process_time() - t; t = time.process_time()\n"
            "    open('p.txt', 'w').write(str(done))\nprint(input())\n")
    spec = TestSpec(kind="stdio", run_timeout=1, stdio=[StdioCase(stdin=f"{i}\n", expected=f"{i}\n") for i in range(5)])
    score = compute_score("x", f"```python\n{slow}```", spec.model_dump_json(), score_mode="pass_rate")
    assert (score["score"], score["verdict"]) == (0.0, "time_limit_exceeded")
