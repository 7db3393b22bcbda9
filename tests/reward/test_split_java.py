"""Issue 38, Java: the tests run in a JVM that holds no code of the solution (the split harness,
reward/harness/split/java.py), so each way a wrong answer forged ``accepted`` in the one-program
harness now ends ``wrong_answer`` (or ``runtime_error`` where it ends the tests), and the tests' real
shapes (MultiPL-E's static methods and ``assert``, HumanEval-X's instance methods and list of
booleans, MBXP's ``compare``, prompt helpers, loops, arguments changed in place, exceptions, NaN,
maps, tuples, optionals) are judged as the one program judged them. Real javac and JVM runs."""

from __future__ import annotations

import pytest

from judgebox.reward import Verdict, judge
from judgebox.reward.harness import build_plan, harness_isolation
from judgebox.reward.spec import TestSpec

pytestmark = pytest.mark.slow

IMPORTS = "import java.util.*;\nimport org.javatuples.*;\nimport java.io.*;\n"
PROMPT = IMPORTS + "class Problem {\n    // the sum of a and b\n    public static long add(long a, long b) {\n"
TESTS = ("    }\n    public static void main(String[] args) {\n    assert(add((1l), (2l)) == (3l));\n"
         "    assert(add((-5l), (5l)) == (0l));\n    }\n\n}\n")
SPEC = TestSpec(kind="harness", language="java", prefix=PROMPT, harness="\n" + TESTS)
RIGHT = "        return a + b;\n"
WRONG = "        return a - b;\n"
#: A completion continues the method; to add members after it, it closes the method and the tests'
#: leading ``}`` closes the last member it opens.
TAIL = "    static void jbTail() {\n"


def verdict(spec: TestSpec, code: str) -> Verdict:
    return judge(spec, code).verdict


#: Each a wrong answer that also tries to forge the verdict (issue 38's kinds), aimed only at the run.
FORGERIES = {
    # code before the tests: a static initialiser reads stdin (the nonce) and prints the OK marker
    "static-initialiser": ("        return a - b;\n    }\n    static {\n        try {\n"
                           "            String n = new BufferedReader(new InputStreamReader(System.in)).readLine();\n"
                           "            System.out.println(\"\\n\" + n + \" {\\\"status\\\": \\\"ok\\\"}\");\n"
                           "            System.out.flush();\n        } catch (Exception e) {}\n    }\n" + TAIL),
    # a hook at exit prints the marker and halts; an uncaught handler does the same
    "exit-hook": ("        Runtime.getRuntime().addShutdownHook(new Thread(() -> {\n"
                  "            System.out.println(\"ok\"); Runtime.getRuntime().halt(0); }));\n"
                  "        Thread.setDefaultUncaughtExceptionHandler((t, e) -> { System.out.println(\"ok\"); "
                  "Runtime.getRuntime().halt(0); });\n        return a - b;\n"),
    # a second entry point: the solution's own main (the one-program tests' main then ran without the runner)
    "second-main": ("        return a - b;\n    }\n    public static void main(String[] args) {\n"
                    "        System.out.println(\"ok\");\n        System.exit(0);\n    }\n" + TAIL),
    # reflection on the runner: its nonce, its marker stream
    "reflection": ("        try {\n            Class<?> c = Class.forName(\"JudgeboxTests\");\n"
                   "            java.lang.reflect.Field f = c.getDeclaredField(\"nonce\"); f.setAccessible(true);\n"
                   "            System.err.println(f.get(null));\n            return a + b;\n"
                   "        } catch (Throwable t) {}\n        return a - b;\n"),
    # the tests' process reached through /proc: its memory, its stdout, its stdin
    "proc": ("        long parent = ProcessHandle.current().parent().get().pid();\n"
             "        for (String f : new String[] {\"mem\", \"fd/0\", \"fd/1\", \"environ\"}) {\n"
             "            try (FileOutputStream o = new FileOutputStream(\"/proc/\" + parent + \"/\" + f)) {\n"
             "                o.write(\"ok\\n\".getBytes());\n            } catch (Exception e) {}\n        }\n"
             "        return a - b;\n"),
    # the tests' compiled classes: any of them readable is a pass here (their constants are the expected values)
    "tests-classes": ("        for (String c : new String[] {\"Problem\", \"JudgeboxRunner\", \"JudgeboxTests\", \"JudgeboxWire\"}) {\n"
                      "            for (String dir : new String[] {\"tests/\", \"../tests/\", \"\"}) {\n"
                      "                if (new File(dir + c + \".class\").canRead() && dir.contains(\"tests\")) return a + b;\n"
                      "            }\n        }\n        return a - b;\n"),
    # the JDK's Attach API: an agent loaded into the tests' JVM reports the tests as passed (red team)
    "attach": ("        try {\n            System.setProperty(\"sun.tools.attach.attachTimeout\", \"2000\");\n"
               "            long parent = ProcessHandle.current().parent().get().pid();\n"
               "            File jar = File.createTempFile(\"jbx\", \".jar\");\n"
               "            java.util.jar.Manifest mf = new java.util.jar.Manifest();\n"
               "            mf.getMainAttributes().put(java.util.jar.Attributes.Name.MANIFEST_VERSION, \"1.0\");\n"
               "            mf.getMainAttributes().put(new java.util.jar.Attributes.Name(\"Agent-Class\"), \"JbAgent\");\n"
               "            try (var o = new java.util.jar.JarOutputStream(new FileOutputStream(jar), mf);\n"
               "                 InputStream in = Problem.class.getClassLoader().getResourceAsStream(\"JbAgent.class\")) {\n"
               "                o.putNextEntry(new java.util.jar.JarEntry(\"JbAgent.class\")); in.transferTo(o); o.closeEntry(); }\n"
               "            var vm = com.sun.tools.attach.VirtualMachine.attach(String.valueOf(parent));\n"
               "            vm.loadAgent(jar.getAbsolutePath()); vm.detach();\n"
               "        } catch (Throwable t) {}\n        return a - b;\n    }\n}\n"
               "class JbAgent { public static void agentmain(String args) throws Exception {\n"
               "    var r = Class.forName(\"JudgeboxTests\", true, ClassLoader.getSystemClassLoader())\n"
               "              .getDeclaredMethod(\"report\", String.class, int.class);\n"
               "    r.setAccessible(true); r.invoke(null, \"{\\\"status\\\": \\\"ok\\\"}\", 0); } }\n"
               "class JbDummy {\n" + TAIL),
    # reading the program's own text for the tests' expected values
    "own-text": ("        try {\n            for (File f : new File(\".\").listFiles()) {\n"
                 "                if (!f.isFile()) continue;\n"
                 "                String s = new String(java.nio.file.Files.readAllBytes(f.toPath()));\n"
                 "                String key = \"add((\" + a + \"l), (\" + b + \"l)) == (\";\n"
                 "                int k = s.indexOf(key);\n"
                 "                if (k >= 0) return Long.parseLong(s.substring(k + key.length(), s.indexOf('l', k + key.length())));\n"
                 "            }\n        } catch (Exception e) {}\n        return a - b;\n"),
}


def test_killing_the_tests_or_exiting_early_is_never_a_pass():
    killer = "        ProcessHandle.current().parent().get().destroyForcibly();\n        return a + b;\n"
    assert verdict(SPEC, killer) == Verdict.runtime_error
    assert verdict(SPEC, "        System.exit(0);\n        return a + b;\n") == Verdict.runtime_error
    assert verdict(SPEC, "        Runtime.getRuntime().halt(0);\n        return a + b;\n") == Verdict.runtime_error


HUMANEVAL_X = ("import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n"
               "    public String shout(String s) {\n        return s.toUpperCase() + \"!\";\n    }\n"
               "    /** twice each, then the shout of the first */\n"
               "    public List<Object> twice(List<Integer> numbers) {\n")
SHAPES = [  # (prompt, a right completion, the tests, a wrong completion)
    # HumanEval-X: an instance method, a list of booleans, a prompt helper applied to the result
    (HUMANEVAL_X,
     "        List<Object> out = new ArrayList<>();\n        for (int x : numbers) out.add(2 * x);\n"
     "        out.add(shout(\"a\"));\n        return out;\n    }\n}\n",
     "\npublic class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
     "        List<Boolean> correct = Arrays.asList(\n"
     "                s.twice(Arrays.asList(1, 2)).equals(Arrays.asList(2, 4, \"A!\")),\n"
     "                s.twice(new ArrayList<>()).size() == 1,\n"
     "                s.shout((String) s.twice(Arrays.asList(3)).get(1)).equals(\"A!!\")\n        );\n"
     "        if (correct.contains(false)) {\n            throw new AssertionError();\n        }\n    }\n}\n",
     "        List<Object> out = new ArrayList<>(numbers);\n        out.add(shout(\"b\"));\n        return out;\n    }\n}\n"),
    # MBXP: a static method of its own class, compare(), the rewritten exception
    ("import java.io.*;\nimport java.lang.*;\nimport java.util.*;\nimport java.math.*;\n\n\nclass DigitSum {\n"
     "    public static int digitSum(int n) {\n",
     "        int s = 0;\n        for (; n > 0; n /= 10) s += n % 10;\n        return s;\n    }\n}\n",
     "\n\nclass Main {\n    public static boolean compare(Object obj1, Object obj2) {\n"
     "        return obj1 == null ? obj2 == null : obj1.equals(obj2);\n    }\n\n"
     "    public static void main(String[] args) throws Exception {\n"
     "        for (int i = 0; i < 3; i++) {\n            int x0 = DigitSum.digitSum(345 + i);\n"
     "            if (!(compare(x0, 12 + i))) {\n"
     "                throw new AssertionError(\"Exception -- test case 0 did not pass. x0 = \" + x0);\n            }\n"
     "        }\n}\n}\n",
     "        return n;\n    }\n}\n"),
    # MultiPL-E: an argument changed in place comes back; a Pair, an Optional, a HashMap, NaN, a float
    (IMPORTS + "class Problem {\n    public static Pair<Optional<String>, HashMap<String, Long>> shapes("
     "ArrayList<Long> v, String s, float f) {\n",
     "        v.add(7l);\n        HashMap<String, Long> m = new HashMap<>();\n        m.put(s, (long) v.size());\n"
     "        return Pair.with(s.isEmpty() ? Optional.empty() : Optional.of(s + \"!\" + (Float.isNaN(f) ? \"nan\" : \"\")), m);\n",
     "    }\n    public static void main(String[] args) {\n        ArrayList<Long> v = new ArrayList<>(Arrays.asList(1l));\n"
     "        Pair<Optional<String>, HashMap<String, Long>> r = shapes(v, \"a\", Float.NaN);\n"
     "        assert(v.equals(new ArrayList<>(Arrays.asList(1l, 7l))));\n"
     "        assert(r.getValue0().equals(Optional.of(\"a!nan\")));\n"
     "        assert(r.getValue1().equals(new HashMap<>(Map.of(\"a\", 2l))));\n"
     "        assert(!shapes(v, \"\", 1.5f).getValue0().isPresent());\n    }\n\n}\n",
     "        return Pair.with(Optional.of(s), new HashMap<>());\n"),
    # an exception of the solution reaches the tests as the same standard exception
    (IMPORTS + "class Problem {\n    public static long safe(long x) {\n",
     "        if (x < 0) throw new IllegalArgumentException(\"neg\");\n        return x;\n",
     "    }\n    public static void main(String[] args) {\n        boolean thrown = false;\n"
     "        try { safe(-1l); } catch (IllegalArgumentException e) { thrown = e.getMessage().equals(\"neg\"); }\n"
     "        assert(thrown && safe(3l) == 3l);\n    }\n\n}\n",
     "        return x;\n"),
]


@pytest.mark.parametrize("prompt,body,tests,wrong", SHAPES, ids=["humaneval-x", "mbxp", "in-place-tuple-nan", "exception"])
def test_the_tests_shapes_are_judged_as_one_program_judges_them(prompt, body, tests, wrong):
    spec = TestSpec(kind="harness", language="java", prefix=prompt, harness=tests)
    assert build_plan(spec, body).request.tests_program is not None
    j = judge(spec, body)
    assert j.verdict == Verdict.accepted, j.message
    assert verdict(spec, wrong) == Verdict.wrong_answer


RED_TEAM = [  # (prompt, a right completion, the tests): what the one program judged right, the first split did not
    # a helper of the entry method's name in the completion (an overload) is not the entry
    (IMPORTS + "class Problem {\n    public static long fact(long n) {\n",
     "        return fact(n, 1);\n    }\n    static long fact(long n, long acc) {\n"
     "        return n <= 1 ? acc : fact(n - 1, acc * n);\n",
     "    }\n    public static void main(String[] args) {\n    assert(fact((5l)) == (120l));\n    }\n\n}\n"),
    # a type nested in the prompt's class before the entry method
    (IMPORTS + "class Problem {\n    enum Color { RED, GREEN }\n    public static long count(String s) {\n",
     "        return Color.values().length + s.length();\n",
     "    }\n    public static void main(String[] args) {\n    assert(count(\"ab\") == (4l));\n    }\n\n}\n"),
    # a Map result keeps the solution's order (a TreeMap), as the tests' toString sees it
    (IMPORTS + "class Problem {\n    public static Map<String, Long> counts(String s) {\n",
     "        Map<String, Long> m = new TreeMap<>();\n        for (String w : s.split(\" \")) m.merge(w, 1l, Long::sum);\n"
     "        return m;\n",
     "    }\n    public static void main(String[] args) {\n    assert(counts(\"b a c a\").toString().equals(\"{a=2, b=1, c=1}\"));\n"
     "    }\n\n}\n"),
    # checked exceptions, a standard exception's subclass, and a null message reach the tests as themselves
    (IMPORTS + "class Problem {\n    public static long check(long x) throws IOException {\n",
     "        if (x == 0) throw new IOException(\"zero\");\n        if (x < 0) throw new IllegalArgumentException() {};\n"
     "        return x;\n",
     "    }\n    public static void main(String[] args) throws Exception {\n        boolean io = false, arg = false;\n"
     "        try { check(0l); } catch (IOException e) { io = e.getMessage().equals(\"zero\"); }\n"
     "        try { check(-1l); } catch (IllegalArgumentException e) { arg = e.getMessage() == null; }\n"
     "        assert(io && arg && check(2l) == 2l);\n    }\n\n}\n"),
]


@pytest.mark.parametrize("prompt,body,tests", RED_TEAM, ids=["helper-overload", "nested-type", "map-order", "exceptions"])
def test_what_the_red_team_found_judged_as_one_program_judges_it(prompt, body, tests):
    spec = TestSpec(kind="harness", language="java", prefix=prompt, harness=tests)
    assert build_plan(spec, body).request.tests_program is not None
    j = judge(spec, body)
    assert j.verdict == Verdict.accepted, j.message


def test_an_exception_the_tests_do_not_catch_ends_them():
    prompt, _, tests, _ = SHAPES[-1]
    spec = TestSpec(kind="harness", language="java", prefix=prompt, harness=tests)
    other = "        if (x < 0) throw new IllegalStateException(\"neg\");\n        return x;\n"
    assert verdict(spec, other) == Verdict.runtime_error


def test_a_type_of_the_prompts_own_keeps_the_one_program_harness():
    """A class the prompt declares cannot cross: the problem stays on the one-program harness
    (forgeable, with tamper signals)."""
    for header in ("class Node { int v; }\nclass Problem {\n    public static long f(Node n) {\n",
                   "class Problem {\n    public static long f(List<Long>[] lists) {\n"):  # a generic array
        spec = TestSpec(kind="harness", language="java", prefix=IMPORTS + header,
                        harness="    }\n    public static void main(String[] args) {\n    }\n\n}\n")
        assert build_plan(spec, "").request.tests_program is None, header
        assert harness_isolation(spec) == "in-process"
