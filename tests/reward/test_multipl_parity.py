"""MultiPL-E verdicts agree with MultiPL-E's own evaluator and with SandboxFusion, the evaluator that
published the rows; a completion that restates the function keeps the prompt's declarations in every
language (issue 12, item 2).

The parity test judges SandboxFusion's own MultiPL-E samples (real data: ``$JUDGEBOX_DATA_DIR``,
the ``data_dir`` fixture, skipped without it). Every other test uses our own MultiPL-E rows
(``tests/fixtures/data/sandboxfusion-samples/humaneval-<lang>.jsonl``, from ``tests/fixtures/rows.py``).
"""

import json
from pathlib import Path

import pytest

from judgebox.reward import Verdict, judge, judge_many
from judgebox.reward.loaders import load_dataset
from judgebox.reward.loaders.multiple import to_problem
from tests.fixtures import DATA as OWN_ROWS
from tests.fixtures import rows as fixture_rows
from tests.reward.multipl_reference import why_not_a_continuation

#: SandboxFusion's own /submit verdicts, produced by tests/bench/sandboxfusion_multipl_verdicts.py.
RECORDED = json.loads((Path(__file__).parent / "data" / "sandboxfusion_multipl_verdicts.json").read_text())
#: MultiPL-E's own evaluator's verdicts (its eval_<lang>.py rules), produced by
#: tests/bench/multiple_evaluator_verdicts.py: ``program`` on the program judgebox judges for each
#: answer, ``generation`` on the answer read as MultiPL-E's generation step reads a completion.
MULTIPLE = json.loads((Path(__file__).parent / "data" / "multiple_evaluator_verdicts.json").read_text())

#: Rows where MultiPL-E's evaluator, given the answer as a continuation of the prompt, passes while
#: judgebox (judging the answer as written) does not, and why.
R_GO_UNUSED_IMPORT = ("the answer's own import block imports a package the answer never uses: as written it does not "
                      "compile (Go refuses an unused import), while a continuation of the prompt takes the prompt's imports")
#: Rows where MultiPL-E's evaluator, on the very program judgebox judges, gives another verdict, and why.
R_CPP_OPENSSL = ("the answer computes MD5 with OpenSSL: judgebox links -lcrypto -lssl (as SandboxFusion's C++ runner "
                 "does); MultiPL-E's `g++ F.cpp -o F -std=c++17` links no library, so no answer can pass it there")
R_RENAMED_FUNCTION = ("the answer names its function otherwise than the prompt (Racket: `split-words` for "
                      "`split_words`, `list_sort` for `sorted_list_sum`): as written it does not define the function "
                      "the tests call, while a continuation of the prompt puts its body under the prompt's own header")
R_TS_NODE_TYPES = ("the answer imports Node's `crypto`: MultiPL-E's `tsc --target esnext F.ts` has no Node type "
                   "declarations (@types/node), so the type check fails (TS2792) and the answer with it; judgebox, "
                   "as SandboxFusion, runs TypeScript with tsx, which strips types without checking them")
R_CPP_TESTS_APART = ("the answer's own `using namespace std;` makes the tests' `auto candidate = search;` name "
                     "std::search too, so the one program of the answer and the tests does not compile (SandboxFusion, "
                     "MultiPL-E); judgebox compiles the tests apart from the answer (the split harness: the prompt has "
                     "no such line), and the answer's function passes them")
#: Rows whose tests do not compile with any answer: judged apart from the answer (the split harness),
#: that is the tests' fault, ``test_data_error`` (never scored); in one program it was every answer's
#: ``compile_error``. Both fail the row, as SandboxFusion and MultiPL-E do.
TESTS_DO_NOT_COMPILE: dict[str, dict[str, str]] = {"go": {"HumanEval_87_get_row": (
    "the tests pass [][]interface{} rows where the prompt declares lst [][]int")}}
PROGRAM_DIFFERS: dict[str, dict[str, str]] = {"cpp": {"HumanEval_162_string_to_md5": R_CPP_OPENSSL,
                                                      "HumanEval_69_search": R_CPP_TESTS_APART},
                                              "ts": {"HumanEval_162_string_to_md5": R_TS_NODE_TYPES}}
STRICTER: dict[str, dict[str, str]] = {
    "go": {"HumanEval_56_correct_bracketing": R_GO_UNUSED_IMPORT, "HumanEval_67_fruit_distribution": R_GO_UNUSED_IMPORT,
           "HumanEval_112_reverse_delete": R_GO_UNUSED_IMPORT},
    "rkt": {"HumanEval_125_split_words": R_RENAMED_FUNCTION, "HumanEval_149_sorted_list_sum": R_RENAMED_FUNCTION},
}

# Why judgebox's verdict differs from SandboxFusion's on a row. SandboxFusion's freeform MultiPL-E
# grader (sandbox/datasets/multiple.py) runs its import header + the answer + the tests: for C++,
# Java, Rust and bash it first cuts the answer at its first stop token wherever it is; for Go and JS
# it keeps the whole answer, with the answer's own main and tests. judgebox judges the function the
# prompt asks for, with its helpers, against the benchmark's tests (reward/loaders/multiple.py).
R_FIRST_STOP = ("SandboxFusion cuts the answer at its first stop token (`\\n}`; Java `\\n    }\\n`) wherever it is: a helper "
                "defined before the function ends the program there, so the function or a helper is missing "
                "and it does not compile; judgebox keeps the helpers and the function passes the tests")
R_USING_STD = ("SandboxFusion puts `using namespace std;` before every C++ answer, so the tests' "
               "`auto candidate = unique;` (max_element) names std::unique too and does not compile; the "
               "prompt has no such line, judgebox adds none, and the function passes the tests")
R_GO_OWN_TEST_NAME = ("the answer's own TestXxx after the function has the harness's name: SandboxFusion "
                      "compiles both (redeclared); judgebox drops the answer's own tests as MultiPL-E's stop "
                      "token `\\nfunc` does, and the function passes the benchmark's tests")
R_GO_OWN_TEST_FAILS = ("the answer's own test after the function fails (its own expected values are wrong) "
                       "while the benchmark's test passes; SandboxFusion runs both, judgebox (as MultiPL-E, "
                       "stop token `\\nfunc`) only the benchmark's")
R_GO_OWN_CODE_BROKEN = ("the answer's own code after the function does not compile (a truncated main, a "
                        "test using an unimported package or an ill-typed map literal, a TestMain); judgebox "
                        "drops it as MultiPL-E's stop token `\\nfunc` does, and the function passes")
# For Ruby, PHP, Perl, Lua, R and Racket SandboxFusion runs the answer's first code block whole (no
# stop-token cut), then the tests, and accepts exit status 0.
R_PHP_CLOSING_TAG = ("the answer's code ends with PHP's closing tag `?>`: SandboxFusion appends the tests after it, "
                     "so PHP echoes them as text and never runs them (exit 0: accepted whatever the function "
                     "returns); judgebox drops the tag (it keeps the function and the definitions after it), as "
                     "MultiPL-E's stop token `\\n?>` does, runs the tests, and the answer fails them (a wrong "
                     "value, or an error)")
R_RACKUNIT_EXIT_0 = ("SandboxFusion accepts a Racket run's exit status 0, and rackunit reports a failed (or raising) "
                     "check on stderr and goes on, exiting 0: the answer fails the tests yet is accepted; judgebox "
                     "fails it, as MultiPL-E does (its eval_racket.py fails a run that writes to stderr)")
R_OWN_DEMO_FAILS = ("SandboxFusion runs the answer's own example code after the function (it keeps the whole "
                    "answer here), and that code fails: {}; judgebox drops it, as MultiPL-E's stop tokens do, "
                    "and the function passes the tests")
R_RB_REQUIRE_AFTER = ("the answer calls `to_set` and writes `require 'set'` only after the function, among its "
                      "example code: judgebox keeps only definitions after the function (MultiPL-E's stop token "
                      "`\\n#` cuts there too), so on Ruby 3.1 (no Set autoload before 3.2) the tests raise "
                      "NoMethodError; SandboxFusion runs the whole answer, require included")
R_RB_SLOW = ("the answer is slow (it searches every path: 48 s of wall time on this machine): SandboxFusion's own "
             "20 s limit timed it out too; the recorder's retry with a 60 s limit accepted it; judgebox's 15 s "
             "limit (MultiPL-E's 5 s) times it out")

R_D_IMPORT_HELPER = ("SandboxFusion puts `import std.array; import std.algorithm;` before every D answer (its "
                     "IMPORT_HELPER); the answer uses split/filter/array/min/max/sort/canFind/swap without importing "
                     "them, and MultiPL-E's prompt imports only std.math and std.typecons: judgebox, as MultiPL-E's "
                     "own evaluator, adds nothing, so it does not compile")

#: Rows where judgebox's verdict differs from SandboxFusion's, and why.
KNOWN: dict[str, dict[str, str]] = {
    "ts": {},
    "d": {t: R_D_IMPORT_HELPER for t in (
        "HumanEval_6_parse_nested_parens", "HumanEval_7_filter_by_substring", "HumanEval_9_rolling_max",
        "HumanEval_29_filter_by_prefix", "HumanEval_30_get_positive", "HumanEval_36_fizz_buzz",
        "HumanEval_40_triples_sum_to_zero", "HumanEval_42_incr_list", "HumanEval_64_vowels_count",
        "HumanEval_114_minSubArraySum", "HumanEval_144_simplify", "HumanEval_157_right_angle_triangle",
        "HumanEval_159_eat")},
    "cpp": {
        "HumanEval_69_search": R_CPP_TESTS_APART,
        "HumanEval_34_unique": R_USING_STD,
        "HumanEval_35_max_element": R_USING_STD,
        "HumanEval_39_prime_fib": R_FIRST_STOP,
        "HumanEval_72_will_it_fly": R_FIRST_STOP,
        "HumanEval_75_is_multiply_prime": R_FIRST_STOP,
        "HumanEval_82_prime_length": R_FIRST_STOP,
        "HumanEval_94_skjkasdkd": R_FIRST_STOP,
        "HumanEval_95_check_dict_case": R_FIRST_STOP,
        "HumanEval_96_count_up_to": R_FIRST_STOP,
        "HumanEval_104_unique_digits": R_FIRST_STOP,
        "HumanEval_106_f": R_FIRST_STOP,
        "HumanEval_107_even_odd_palindrome": R_FIRST_STOP,
        "HumanEval_112_reverse_delete": R_FIRST_STOP,
        "HumanEval_117_select_words": R_FIRST_STOP,
        "HumanEval_118_get_closest_vowel": R_FIRST_STOP,
        "HumanEval_124_valid_date": R_FIRST_STOP,
        "HumanEval_125_split_words": R_FIRST_STOP,
        "HumanEval_126_is_sorted": R_USING_STD,
        "HumanEval_129_minPath": R_FIRST_STOP,
        "HumanEval_139_special_factorial": R_FIRST_STOP,
        "HumanEval_143_words_in_sentence": R_FIRST_STOP,
        "HumanEval_146_specialFilter": R_FIRST_STOP,
        "HumanEval_148_bf": R_FIRST_STOP,
        "HumanEval_150_x_or_y": R_FIRST_STOP,
    },
    "go": {
        "HumanEval_0_has_close_elements": R_GO_OWN_TEST_FAILS,
        "HumanEval_2_truncate_number": R_GO_OWN_TEST_FAILS,
        "HumanEval_3_below_zero": R_GO_OWN_TEST_FAILS,
        "HumanEval_4_mean_absolute_deviation": R_GO_OWN_TEST_FAILS,
        "HumanEval_5_intersperse": R_GO_OWN_TEST_NAME,
        "HumanEval_20_find_closest_elements": R_GO_OWN_TEST_FAILS,
        "HumanEval_23_strlen": R_GO_OWN_TEST_NAME,
        "HumanEval_25_factorize": R_GO_OWN_TEST_NAME,
        "HumanEval_28_concatenate": R_GO_OWN_TEST_NAME,
        "HumanEval_33_sort_third": R_GO_OWN_TEST_FAILS,
        "HumanEval_34_unique": R_GO_OWN_TEST_NAME,
        "HumanEval_36_fizz_buzz": R_GO_OWN_TEST_FAILS,
        "HumanEval_39_prime_fib": R_GO_OWN_TEST_FAILS,
        "HumanEval_44_change_base": R_GO_OWN_TEST_FAILS,
        "HumanEval_46_fib4": R_GO_OWN_TEST_NAME,
        "HumanEval_47_median": R_GO_OWN_TEST_NAME,
        "HumanEval_49_modp": R_GO_OWN_TEST_NAME,
        "HumanEval_53_add": R_GO_OWN_TEST_NAME,
        "HumanEval_55_fib": R_GO_OWN_TEST_NAME,
        "HumanEval_57_monotonic": R_GO_OWN_TEST_NAME,
        "HumanEval_58_common": R_GO_OWN_TEST_NAME,
        "HumanEval_62_derivative": R_GO_OWN_TEST_NAME,
        "HumanEval_64_vowels_count": R_GO_OWN_TEST_FAILS,
        "HumanEval_68_pluck": R_GO_OWN_TEST_NAME,
        "HumanEval_69_search": R_GO_OWN_TEST_NAME,
        "HumanEval_73_smallest_change": R_GO_OWN_TEST_FAILS,
        "HumanEval_75_is_multiply_prime": R_GO_OWN_TEST_FAILS,
        "HumanEval_81_numerical_letter_grade": R_GO_OWN_TEST_FAILS,
        "HumanEval_82_prime_length": R_GO_OWN_TEST_FAILS,
        "HumanEval_84_solve": R_GO_OWN_TEST_NAME,
        "HumanEval_85_add": R_GO_OWN_TEST_NAME,
        "HumanEval_89_encrypt": R_GO_OWN_CODE_BROKEN,
        "HumanEval_91_is_bored": R_GO_OWN_TEST_FAILS,
        "HumanEval_94_skjkasdkd": R_GO_OWN_CODE_BROKEN,
        "HumanEval_95_check_dict_case": R_GO_OWN_CODE_BROKEN,
        "HumanEval_97_multiply": R_GO_OWN_TEST_NAME,
        "HumanEval_106_f": R_GO_OWN_TEST_NAME,
        "HumanEval_107_even_odd_palindrome": R_GO_OWN_TEST_FAILS,
        "HumanEval_111_histogram": R_GO_OWN_TEST_NAME,
        "HumanEval_114_minSubArraySum": R_GO_OWN_TEST_FAILS,
        "HumanEval_117_select_words": R_GO_OWN_TEST_FAILS,
        "HumanEval_118_get_closest_vowel": R_GO_OWN_TEST_FAILS,
        "HumanEval_119_match_parens": R_GO_OWN_TEST_FAILS,
        "HumanEval_120_maximum": R_GO_OWN_TEST_NAME,
        "HumanEval_121_solution": R_GO_OWN_TEST_NAME,
        "HumanEval_123_get_odd_collatz": R_GO_OWN_TEST_FAILS,
        "HumanEval_131_digits": R_GO_OWN_TEST_NAME,
        "HumanEval_135_can_arrange": R_GO_OWN_TEST_FAILS,
        "HumanEval_142_sum_squares": R_GO_OWN_TEST_FAILS,
        "HumanEval_144_simplify": R_GO_OWN_TEST_NAME,
        "HumanEval_147_get_max_triples": R_GO_OWN_TEST_FAILS,
        "HumanEval_149_sorted_list_sum": R_GO_OWN_TEST_FAILS,
        "HumanEval_151_double_the_difference": R_GO_OWN_CODE_BROKEN,
        "HumanEval_152_compare": R_GO_OWN_TEST_NAME,
        "HumanEval_159_eat": R_GO_OWN_TEST_NAME,
        "HumanEval_161_solve": R_GO_OWN_TEST_NAME,
    },
    "java": {
        "HumanEval_107_even_odd_palindrome": R_FIRST_STOP,
        "HumanEval_156_int_to_mini_roman": R_FIRST_STOP,
    },
    "js": {},
    "rs": {
        "HumanEval_59_largest_prime_factor": R_FIRST_STOP,
        "HumanEval_75_is_multiply_prime": R_FIRST_STOP,
        "HumanEval_82_prime_length": R_FIRST_STOP,
        "HumanEval_94_skjkasdkd": R_FIRST_STOP,
        "HumanEval_107_even_odd_palindrome": R_FIRST_STOP,
        "HumanEval_116_sort_array": R_FIRST_STOP,
        "HumanEval_119_match_parens": R_FIRST_STOP,
        "HumanEval_127_intersection": R_FIRST_STOP,
        "HumanEval_143_words_in_sentence": R_FIRST_STOP,
        "HumanEval_150_x_or_y": R_FIRST_STOP,
    },
    "sh": {},
    "rb": {
        "HumanEval_112_reverse_delete": R_RB_REQUIRE_AFTER,
        "HumanEval_129_minPath": R_RB_SLOW,
        "HumanEval_153_Strongest_Extension": R_OWN_DEMO_FAILS.format(
            "`Strongest_Extension.call(...)` reads the capitalized method name as a constant, NameError"),
    },
    "php": {t: R_PHP_CLOSING_TAG for t in (
        "HumanEval_17_parse_music", "HumanEval_19_sort_numbers", "HumanEval_23_strlen",
        "HumanEval_41_car_race_collision", "HumanEval_47_median", "HumanEval_49_modp", "HumanEval_77_iscube",
        "HumanEval_83_starts_one_ends", "HumanEval_91_is_bored", "HumanEval_99_closest_integer",
        "HumanEval_100_make_a_pile", "HumanEval_101_words_string", "HumanEval_103_rounded_avg",
        "HumanEval_115_max_fill", "HumanEval_127_intersection", "HumanEval_130_tri", "HumanEval_132_is_nested",
        "HumanEval_133_sum_squares", "HumanEval_134_check_if_last_char_is_a_letter", "HumanEval_137_compare_one",
        "HumanEval_139_special_factorial", "HumanEval_140_fix_spaces", "HumanEval_148_bf",
        "HumanEval_151_double_the_difference", "HumanEval_160_do_algebra")},
    "pl": {},
    "lua": {
        "HumanEval_76_is_simple_power": R_OWN_DEMO_FAILS.format(
            "`is_simple_power(3, 1)` loops forever (n = 1 never grows), a time limit"),
        "HumanEval_87_get_row": R_OWN_DEMO_FAILS.format("`require('inspect')`, a module that is not installed"),
        "HumanEval_105_by_length": R_OWN_DEMO_FAILS.format("`vim.inspect(...)`: `vim` (Neovim's API) is nil in Lua"),
        "HumanEval_111_histogram": R_OWN_DEMO_FAILS.format("`vim.inspect(...)`: `vim` (Neovim's API) is nil in Lua"),
        "HumanEval_112_reverse_delete": R_OWN_DEMO_FAILS.format(
            "`vim.inspect(...)`: `vim` (Neovim's API) is nil in Lua"),
    },
    "r": {
        "HumanEval_79_decimal_to_binary": R_OWN_DEMO_FAILS.format(
            "a demo call runs before the answer defines its helper `as.binary`: could not find function"),
    },
    "rkt": {
        **{t: R_RACKUNIT_EXIT_0 for t in (
            "HumanEval_3_below_zero", "HumanEval_9_rolling_max", "HumanEval_16_count_distinct_characters",
            "HumanEval_29_filter_by_prefix", "HumanEval_33_sort_third", "HumanEval_47_median",
            "HumanEval_64_vowels_count", "HumanEval_74_total_match", "HumanEval_77_iscube", "HumanEval_78_hex_key",
            "HumanEval_92_any_int", "HumanEval_95_check_dict_case", "HumanEval_96_count_up_to",
            "HumanEval_102_choose_num", "HumanEval_108_count_nums", "HumanEval_110_exchange",
            "HumanEval_112_reverse_delete", "HumanEval_113_odd_count", "HumanEval_117_select_words",
            "HumanEval_118_get_closest_vowel", "HumanEval_127_intersection", "HumanEval_131_digits",
            "HumanEval_132_is_nested", "HumanEval_140_fix_spaces", "HumanEval_146_specialFilter",
            "HumanEval_155_even_odd_count", "HumanEval_161_solve")},
        "HumanEval_22_filter_integers": R_OWN_DEMO_FAILS.format(
            "`(list ())` in a demo call is an empty application, a syntax error of the whole module"),
        "HumanEval_81_numerical_letter_grade": R_OWN_DEMO_FAILS.format(
            "a demo call of `grade_equation`, an unbound identifier (a compile error of the module)"),
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", sorted(KNOWN))
def test_gpt_solution_verdicts_agree_with_sandboxfusion(data_dir, monkeypatch, lang):
    """Every handed row's gpt_solution: judgebox's pass/fail equals SandboxFusion's accepted, except
    exactly the rows of KNOWN, each with its reason; no verdict is an infrastructure failure.
    (Where SandboxFusion judges the answer's own tests and main too, Go, or loses its helpers, C++ and
    Rust, fewer than 99 % agree: judgebox keeps MultiPL-E's rule there, see the reasons.)"""
    if not (data_dir / "sandboxfusion-samples" / f"humaneval-{lang}.jsonl").is_file():
        pytest.skip(f"no humaneval-{lang}.jsonl in {data_dir}/sandboxfusion-samples (SandboxFusion's "
                    "sandbox/tests/datasets/samples/Multi-PLE/ has it)")
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(data_dir))
    problems = load_dataset(f"multipl-e-{lang}")[0]
    pairs = [p.candidate(p.columns["gpt_solution"]) for p in problems]
    judgements = judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)
    for _ in range(2):  # an infrastructure failure says nothing about the program: judge it again
        again = [i for i, j in enumerate(judgements) if j.verdict == Verdict.infra_error]
        for i, j in zip(again, judge_many([pairs[i][0] for i in again], [pairs[i][1] for i in again])):
            judgements[i] = j
    broken = TESTS_DO_NOT_COMPILE.get(lang, {})
    assert [j.verdict for p, j in zip(problems, judgements)
            if j.verdict in (Verdict.infra_error, Verdict.test_data_error) and p.task_id not in broken] == []
    assert {p.task_id: j.verdict for p, j in zip(problems, judgements) if p.task_id in broken} == \
        dict.fromkeys(broken, Verdict.test_data_error)
    ours = {p.task_id: j.passed for p, j in zip(problems, judgements)}
    theirs = RECORDED["verdicts"][lang]
    assert set(ours) == set(theirs)
    differ = {t: ours[t] for t in ours if ours[t] != theirs[t]}
    assert differ == {t: not theirs[t] for t in KNOWN[lang]}
    # MultiPL-E's own evaluator on the same programs: the same verdict on every row but PROGRAM_DIFFERS
    program = MULTIPLE["program"][lang]
    assert {t for t in ours if ours[t] != program[t]} == set(PROGRAM_DIFFERS.get(lang, {}))
    assert sum(ours[t] == program[t] for t in ours) >= 0.98 * len(ours)  # C++: 159 of 161
    # ... and on each answer read as a continuation of the prompt: where they differ, the answer is not
    # one (it adds code before the function or a helper after it, renames a parameter, or a stop token
    # cuts its body), or the answer as written does not compile (STRICTER)
    rows = {r["task_id"]: r for r in map(json.loads, (data_dir / "sandboxfusion-samples" /
                                                        f"humaneval-{lang}.jsonl").open())}
    generation = MULTIPLE["generation"][lang]
    unexplained = {t for t in ours if ours[t] and not generation[t] and why_not_a_continuation(rows[t]) is None}
    assert unexplained == set()
    assert {t for t in ours if generation[t] and not ours[t]} == set(STRICTER.get(lang, {}))


@pytest.mark.slow
@pytest.mark.parametrize("lang", fixture_rows.LANGS)
def test_our_rows_accept_a_right_answer_and_judge_each_gpt_solution(monkeypatch, lang):
    """Our MultiPL-E rows, through the manifest as the parity test reads SandboxFusion's: each row's
    tests accept a right continuation of its prompt, and each gpt_solution (a chat answer restating
    the program) gets its known verdict (only JB_2_count_upper's answer is wrong); never an
    infrastructure or test-data failure."""
    monkeypatch.setenv("JUDGEBOX_DATA_DIR", str(OWN_ROWS))
    problems = load_dataset(f"multipl-e-{lang}")[0]
    pairs = [p.candidate(fixture_rows.MULTIPL_REFERENCE[lang][p.task_id]) for p in problems]
    pairs += [p.candidate(p.columns["gpt_solution"]) for p in problems]
    judgements = judge_many([s for s, _ in pairs], [c for _, c in pairs], concurrency=2)
    n = len(problems)
    assert {p.task_id: j.verdict.value for p, j in zip(problems, judgements[:n])} == \
        {p.task_id: "accepted" for p in problems}, [j.message for j in judgements[:n]]
    assert {p.task_id: j.verdict.value for p, j in zip(problems, judgements[n:])} == fixture_rows.GPT_VERDICTS[lang]


def row(lang: str, task_id: str) -> dict:
    path = OWN_ROWS / "sandboxfusion-samples" / f"humaneval-{lang}.jsonl"
    return next(r for r in map(json.loads, path.open()) if r["task_id"] == task_id)


def restated(lang: str, task_id: str, completion: str, prompt_edit: dict[str, str] | None = None):
    """The code judgebox builds for ``completion`` on a row (its prompt edited by replacing each key
    of ``prompt_edit`` with its value) and the judgement of that code."""
    data = row(lang, task_id)
    for old, new in (prompt_edit or {}).items():
        assert old in data["prompt"], f"the edit does not apply to {task_id}'s prompt: {old!r}"
        data["prompt"] = data["prompt"].replace(old, new)
    problem = to_problem(data, 0, f"multipl-e-{lang}")
    spec, code = problem.candidate(completion)
    return code, judge(spec, code)


CPP_BODY = ("    for (size_t i = 0; i < numbers.size(); i++) for (size_t j = i + 1; j < numbers.size(); j++)\n"
            "        if (abs(numbers[i] + numbers[j] - target) == 0) return true;\n    return false;\n}\n")


def test_cpp_restated_function_keeps_the_prompt_includes_and_using():
    """The prompt declares `#include<vector>`, `#include<cmath>` and `using namespace std;`; a
    completion restating the function uses `vector` and `abs` unqualified and declares none of them."""
    edit = {"#include<bits/stdc++.h>\n": "#include<vector>\n#include<cmath>\nusing namespace std;\n",
            "(std::vector<long> numbers": "(vector<long> numbers"}
    completion = "```cpp\nbool has_pair_sum(vector<long> numbers, long target) {\n" + CPP_BODY + \
                 "int main() { return 0; }\n```"
    code, j = restated("cpp", "JB_0_has_pair_sum", completion, edit)
    assert code == ("#include<assert.h>\n#include<vector>\n#include<cmath>\nusing namespace std;\n"
                    "bool has_pair_sum(vector<long> numbers, long target) {\n" + CPP_BODY[:-3])
    assert j.verdict == Verdict.accepted, j.message


JAVA_BODY = ("        for (int i = 0; i < numbers.size(); i++) for (int j = i + 1; j < numbers.size(); j++)\n"
             "            if (numbers.get(i) + numbers.get(j) == target) return true;\n"
             "        return false;\n")
JAVA_HEADER = "    public static boolean hasPairSum(ArrayList<Long> numbers, long target) {\n"
JAVA_IMPORTS = ("import java.util.*;\nimport java.lang.reflect.*;\nimport org.javatuples.*;\nimport java.security.*;\n"
                "import java.math.*;\nimport java.io.*;\nimport java.util.stream.*;\n")


def test_java_restated_class_without_imports_gets_the_prompt_imports():
    """`ArrayList` comes from the prompt's `import java.util.*;`, which the completion dropped."""
    completion = "```java\nclass Problem {\n" + JAVA_HEADER + JAVA_BODY + "    }\n}\n```"
    code, j = restated("java", "JB_0_has_pair_sum", completion)
    assert code == JAVA_IMPORTS + "class Problem {\n" + JAVA_HEADER + JAVA_BODY[:-1]
    assert j.verdict == Verdict.accepted, j.message


def test_java_restated_bare_method_gets_the_prompt_class_and_imports():
    """A completion that restates only the method: the tests close the prompt's class, so it is opened."""
    code, j = restated("java", "JB_0_has_pair_sum", "```java\n" + JAVA_HEADER + JAVA_BODY + "    }\n```")
    assert code == JAVA_IMPORTS + "class Problem {\n" + JAVA_HEADER + JAVA_BODY[:-1]
    assert j.verdict == Verdict.accepted, j.message


RS_BODY = ("    let mut longest = 0;\n    for key in dict.keys() {\n        longest = longest.max(key.len() as isize);\n    }\n"
           "    longest\n}\n")
RS_HEADER = "fn longest_key(dict: HashMap<String, String>) -> isize {\n"


def test_rust_restated_function_gets_the_prompt_use_line():
    """`HashMap` (the signature and the tests) comes from the prompt's `use std::collections::HashMap;`."""
    code, j = restated("rs", "JB_3_longest_key", "```rust\n#![allow(unused)]\n" + RS_HEADER + RS_BODY + "```")
    assert code == "#![allow(unused)]\nuse std::collections::HashMap;\n" + RS_HEADER + RS_BODY[:-3]
    assert j.verdict == Verdict.accepted, j.message


def test_rust_use_lines_the_program_has_are_not_repeated():
    """A second `use` of HashMap is error E0252: a program importing it in a group gets no other."""
    own = "use std::collections::{HashSet, HashMap};\n"
    code, j = restated("rs", "JB_3_longest_key", "```rust\n" + own + RS_HEADER + RS_BODY + "```")
    assert code == own + RS_HEADER + RS_BODY[:-3]
    assert j.verdict == Verdict.accepted, j.message


def test_rust_group_use_of_the_prompt_adds_only_the_missing_names():
    edit = {"use std::collections::HashMap;": "use std::collections::{HashMap, HashSet as Set};"}
    own = "use std::collections::HashMap;\n"
    code, j = restated("rs", "JB_3_longest_key", own + RS_HEADER + RS_BODY, edit)
    assert code == "use std::collections::HashSet as Set;\n" + own + RS_HEADER + RS_BODY[:-3]
    assert j.verdict == Verdict.accepted, j.message


GO_FUNC = ("func has_pair_sum(numbers []int, target int) bool {\n"
           "    sort.Ints(numbers)\n    for i, j := 0, len(numbers)-1; i < j; {\n"
           "        if s := numbers[i] + numbers[j]; s == target { return true } else if s < target { i++ } else { j-- }\n"
           "    }\n    return false\n}\n")


def test_go_restated_function_gets_the_prompt_imports_and_keeps_its_own():
    """The tests use the prompt's "testing" and "fmt"; the program keeps its own "sort" and its
    "strings" (used only by its dropped main) becomes a blank import."""
    completion = ("```go\npackage has_pair_sum_test\n\nimport (\n    \"sort\"\n    \"strings\"\n)\n\n" + GO_FUNC +
                  "\nfunc main() { println(strings.ToUpper(\"x\")) }\n```")
    code, j = restated("go", "JB_0_has_pair_sum", completion)
    assert code == ('package has_pair_sum_test\nimport "fmt"\nimport "testing"\n\nimport (\n    "sort"\n'
                    '    _ "strings"\n)\n\n' + GO_FUNC)
    assert j.verdict == Verdict.accepted, j.message


JS_FUNC = ("function has_pair_sum(numbers, target){\n"
           "  return !util.types.isProxy(numbers) && numbers.some((a, i) => numbers.slice(i + 1).some(b => "
           "a + b === target));\n}\n")
JS_EDIT = {"//Check whether": "const util = require('node:util');\n//Check whether"}


def test_js_restated_function_gets_the_prompt_require_binding():
    """The prompt binds `util` with `require`; the restated function uses it and does not bind it."""
    code, j = restated("js", "JB_0_has_pair_sum", "```javascript\n" + JS_FUNC + "```", JS_EDIT)
    assert code == "const util = require('node:util');\n" + JS_FUNC
    assert j.verdict == Verdict.accepted, j.message


def test_js_require_binding_the_program_has_is_not_repeated():
    """A second `const util` is a SyntaxError: a program that binds `util` itself gets no other."""
    own = "const util = require('util');\n"
    code, j = restated("js", "JB_0_has_pair_sum", own + JS_FUNC, JS_EDIT)
    assert code == own + JS_FUNC
    assert j.verdict == Verdict.accepted, j.message


def test_js_helpers_defined_after_the_function_are_kept_and_demo_calls_dropped():
    """JB_3_squares_and_cubes's gpt_solution calls `square` and `cube`, defined after the function
    (as a SandboxFusion sample's may); judgebox keeps them (MultiPL-E's stop token `\\nfunction ` would
    drop them) and drops the demo call."""
    data = row("js", "JB_3_squares_and_cubes")
    spec, code = to_problem(data, 0, "multipl-e-js").candidate(data["gpt_solution"])
    assert code.endswith("function cube(k) {\n    return k * k * k;\n}\n") and "console.log" not in code
    assert judge(spec, code).verdict == Verdict.accepted


@pytest.mark.slow
def test_cpp_helper_after_the_function_is_placed_before_it_and_main_dropped():
    """The tests close the function (`}` starts them), so a later helper goes before the function."""
    helper = "bool pair_hits(long a, long b, long t) {\n    return a + b == t;\n}\n"
    body = ("    for (size_t i = 0; i < numbers.size(); i++) for (size_t j = i + 1; j < numbers.size(); j++)\n"
            "        if (pair_hits(numbers[i], numbers[j], target)) return true;\n    return false;\n")
    header = "bool pair_hits(long a, long b, long t);\nbool has_pair_sum(std::vector<long> numbers, long target) {\n"
    completion = "```cpp\n" + header + body + "}\n\n" + helper + "\nint main() {\n    return 1;\n}\n```"
    code, j = restated("cpp", "JB_0_has_pair_sum", completion)
    assert code == ("#include<assert.h>\n#include<bits/stdc++.h>\nbool pair_hits(long a, long b, long t);\n"
                    + helper + header.split("\n", 1)[1] + body[:-1])
    assert j.verdict == Verdict.accepted, j.message


CPP_FORGERIES = [
    "#undef assert\n#define assert(x) ((void)0)\n    return 0;\n",                  # the trial's finding 3
    "%:define assert(x) 1\n    return 0;\n",                                          # a digraph directive
    "#def\\\nine candidate(...) 1\n    return 0;\n",                                  # a spliced directive
    "    return 0;\n}\nextern \"C\" void __assert_fail(const char*, const char*, unsigned int, const char*) noexcept {}\n"
    "long unused_(long x) {\n    return x;\n",                                        # assert's failure made to return
]


@pytest.mark.slow
@pytest.mark.parametrize("completion", CPP_FORGERIES)
def test_cpp_solution_cannot_redefine_the_tests_assert(completion):
    """MultiPL-E's C++ program is one unit: a solution redefining `assert` (plainly, by a digraph or a
    spliced line) or `candidate`, or supplying its own `__assert_fail`, made `add` returning 0
    accepted. The solution's macros that the tests name are #undef'd before the tests and `assert` is
    judgebox's own, ending a failed run by __builtin_trap(): a failed assert is a wrong answer."""
    code, j = restated("cpp", "JB_1_add", completion)
    assert (j.verdict, j.passed) == (Verdict.wrong_answer, False), (code, j.message)
    assert restated("cpp", "JB_1_add", "    return x + y;\n")[1].verdict == Verdict.accepted


@pytest.mark.parametrize("completion", [
    "  return 0;\n}\nrequire('node:assert').deepEqual = () => {};\n",                # the trial's finding 3
    "  return 0;\n}\nfunction require() { return { deepEqual() {} }; }\n",           # a hoisted require
])
def test_js_solution_cannot_patch_or_replace_the_tests_assert(completion):
    """The tests' require() is the module's own, taken before the solution runs, and the assert
    module is frozen: patching it or declaring a `function require` no longer passes `add` -> 0."""
    code, j = restated("js", "JB_1_add", completion)
    assert not j.passed, (code, j.message)
    assert restated("js", "JB_1_add", "  return x + y;\n}\n")[1].verdict == Verdict.accepted


@pytest.mark.parametrize("lang, wrong, crash, gold", [
    ("cpp", "    return x - y;\n", "    return std::vector<long>{}.at(x + 7);\n", "    return x + y;\n"),
    ("java", "        return x - y;\n", "        long[] none = new long[0];\n        return none[(int) x + 7];\n", "        return x + y;\n"),
    ("go", "    return x - y\n}\n", "    return []int{}[x+7]\n}\n", "    return x + y\n}\n"),
    ("rs", "    x - y\n}\n", "    let v: Vec<isize> = Vec::new();\n    v[(x + 7) as usize]\n}\n", "    x + y\n}\n"),
    ("js", "  return x - y;\n}\n", "  return null.x;\n}\n", "  return x + y;\n}\n"),
])
@pytest.mark.slow
def test_multipl_failed_assertion_is_a_wrong_answer_and_a_crash_a_runtime_error(lang, wrong, crash, gold):
    """The trial's finding 6: a MultiPL-E program whose tests' assertion fails was runtime_error in
    every language (Python's is wrong_answer; verl's check_correctness said -2, not False). The
    harnesses now tell a failed assertion (wrong_answer) from a crash of the solution (runtime_error)."""
    verdicts = [restated(lang, "JB_1_add", c)[1].verdict for c in (wrong, crash, gold)]
    assert verdicts == [Verdict.wrong_answer, Verdict.runtime_error, Verdict.accepted]


@pytest.mark.parametrize("completion", [
    "    echo 0\n}\nset() { :; }\nf() {\n    :\n",                                  # set -e made a no-op
    "    echo 0\n}\nshopt -s expand_aliases\nalias '[['='true || [['\nf() {\n    :\n",  # [[ aliased away
])
def test_bash_solution_cannot_reach_the_tests_shell(completion):
    """A bash solution shared the tests' shell: a function named `set` (so `set -e` did nothing) or an
    alias for `[[` made `add` printing 0 accepted, judged as verl or TRL judge a completion (the spec
    and the code as they are; `problem.candidate` would cut the code after the function). The
    solution now runs in a subshell per call."""
    spec = to_problem(row("sh", "JB_1_add"), 0, "multipl-e-sh").spec
    j = judge(spec, completion)
    assert (j.verdict, j.passed) == (Verdict.runtime_error, False), j.message
    assert judge(spec, "    echo $(( $1 + $2 ))\n").verdict == Verdict.accepted


def test_cpp_harness_puts_the_programs_include_block_first_so_it_can_be_precompiled():
    """The harness's own includes and nonce reader follow the program's opening ``#include`` block:
    MultiPL-E's ``<assert.h>`` + ``<bits/stdc++.h>`` opening then has a precompiled header."""
    from judgebox.reward.harness.multipl import build_program
    from judgebox.sandbox.speedups.pch import lead_headers
    program = build_program("cpp", "#include<assert.h>\n#include<bits/stdc++.h>\nlong f() { return 1; }\n",
                            "int main() {\n    assert(f() == 1);\n}\n")
    assert program.startswith("#include<assert.h>\n#include<bits/stdc++.h>\n#include <iostream>\n")
    assert program.index("judgebox_nonce_") < program.index("long f()")  # the reader is still first to run
    assert lead_headers(program) == ("assert.h",)


#: answers that define a helper whose name starts with the function's (or ends with it, in R) before
#: the function itself, which then calls the helper
HELPER_FIRST = {
    "pl": "```perl\nsub add_helper {\n    my ($a, $b) = @_;\n    return $a + $b;\n}\n\nsub add {\n    my ($x, $y) = @_;\n"
          "    return add_helper($x, $y);\n}\n```",
    "rkt": "```racket\n(define (add-helper x y)\n  (+ x y))\n\n(define (add x y)\n  (if (= y 0) x (add-helper x y)))\n```",
    "r": "```r\nmy_add <- function(x, y) {\n  x + y\n}\n\nadd <- function(x, y) {\n  if (y == 0) return(x)\n  my_add(x, y)\n}\n```",
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", HELPER_FIRST)
def test_the_function_is_found_by_its_whole_name_not_a_longer_helpers(lang):
    """The prompt's header is matched as a whole word: ``sub add_helper``, ``(define (add-helper`` and
    ``my_add <- function(`` are not ``add`` (they were taken for it, and the real function, left after
    it, was dropped: a right answer failed)."""
    spec, code = to_problem(row(lang, "JB_1_add"), 0, f"multipl-e-{lang}").candidate(HELPER_FIRST[lang])
    assert judge(spec, code).verdict == Verdict.accepted, code


@pytest.mark.slow
def test_scala_answer_indented_by_two_keeps_its_inner_blocks_and_a_comment_names_no_object():
    """A restated Scala answer indented by two spaces runs to its function's own closing brace (the
    stop token ``\\n    }\\n`` would cut it at its first inner block), and the word ``object`` in a
    prompt comment is not taken for the object whose tests run (SandboxFusion's samples: 12 answers
    were cut, ``HumanEval_72_will_it_fly`` named ``object q``)."""
    r = row("scala", "JB_0_has_pair_sum")
    r = {**r, "prompt": r["prompt"].replace("    // Check whether", "    // For the object list, check whether")}
    answer = ("```scala\nobject Problem {\n  def hasPairSum(numbers : List[Long], target : Long) : Boolean = {\n"
              "    for (i <- numbers.indices) {\n      for (j <- i + 1 until numbers.length) {\n"
              "        if (numbers(i) + numbers(j) == target) return true\n      }\n    }\n    false\n  }\n}\n```")
    problem = to_problem(r, 0, "multipl-e-scala")
    spec, code = problem.candidate(answer)
    assert code.endswith("    }\n    false") and spec.prefix == ""
    assert judge(spec, code).verdict == Verdict.accepted
    assert judge(spec, code.replace("== target", "!= target")).verdict == Verdict.wrong_answer
