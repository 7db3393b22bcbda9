"""The tamper scan's rules: per sandbox language, ``(kind, pattern)`` pairs matched against the
solution's text (:func:`judgebox.reward.tamper.scan`).

Each rule names a known mechanism by which a program that shares its tests' process can read the
completion marker's nonce, outlive or pre-empt its tests, or change what they compare. The kinds
(:data:`KINDS`) are stable names; a pattern is a Python regular expression (``re.M``). Rules are
signals, not verdicts: a match says "look here", and a pattern may also match a harmless use (in a
string, a stdio program; comments are blanked first, by each language's :data:`LEXERS`). Sources of the mechanisms: the verdict rules' list of what a
solution can forge (``docs/explanation/verdict-rules.md``) and the attacks of issues 37/38.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

#: kind -> what it means (the report and the docs show these).
KINDS: dict[str, str] = {
    "early_init": "code that runs before the tests' entry point (constructors, .init_array, init(), static initializers)",
    "signal_handler": "a handler for the signals a failed assertion or a crash raises",
    "exit_hook": "code that runs at exit, on a panic or an uncaught exception (shutdown hooks, atexit, panic hooks)",
    "forced_exit": "an exit that skips the tests' own ending (_exit, halt, os.Exit, process.exit, exit)",
    "introspection": "walks frames, the heap, globals or reflection: can find the nonce or the test runner",
    "reads_stdin": "reads standard input, where the harness's nonce arrives",
    "reads_own_program": "reads the program's own text or files (/proc/self, __FILE__, $0, argv[0])",
    "redefines_check": "redefines an assertion, an equality or a comparison helper the tests use",
    "second_entry_point": "declares its own entry point (main) beside the tests'",
    "raw_output": "writes to the real standard output around the harness (saved descriptors, output buffers)",
}

_C_FAMILY = [
    ("early_init", r"__attribute__\s*\(\(\s*(?:__)?constructor|\binit_priority\b|\.(?:pre)?init_array|#\s*pragma\s+init\b"),
    ("signal_handler", r"\b(?:signal|sigaction|sigset|bsd_signal)\s*\(|\bstruct\s+sigaction\b"),
    ("exit_hook", r"\b(?:atexit|at_quick_exit|set_terminate|set_unexpected|__cxa_atexit|on_exit)\s*\(|"
                  r"__attribute__\s*\(\(\s*(?:__)?destructor"),
    ("forced_exit", r"(?<![\w.])(?:std::)?(?:_exit|_Exit|quick_exit|exit|abort|kill|raise)\s*\("),
    ("introspection", r"__builtin_(?:frame|return)_address|\bdlsym\b|\bdlopen\b|\bbacktrace\s*\(|\benviron\b|"
                      r"\bsyscall\s*\("),
    ("reads_stdin", r"(?<![\w.])(?:std::)?cin\b|\b(?:scanf|getchar|gets)\s*\(|\bgetline\s*\(\s*(?:std::)?cin\b|\bstdin\b|"
                    r"\bread\s*\(\s*0\b"),
    ("reads_own_program", r"/proc/self|/proc/\d|\b__FILE__\b|\bargv\s*\[\s*0|\breadlink\s*\("),
    ("redefines_check", r"#\s*define\s+(?:assert|issame|main|candidate|abs|_?_?assert\w*)\b|#\s*undef\b|"
                        r"\b__assert(?:_fail|_rtn|_perror)?\b|\boperator\s*(?:==|!=|<=>)"),
    ("second_entry_point", r"^[ \t]*(?:int|void|auto|signed|long)\s+main\s*\("),
    ("raw_output", r"\bdup[23]?\s*\(|\bfdopen\s*\(|\bfreopen\s*\(|/dev/(?:stdout|fd|tty)|\bwrite\s*\(\s*[12]\s*,"),
]

_JVM_REFLECTION = (r"getDeclared(?:Field|Method|Constructor)s?\b|\bsetAccessible\b|\bisAccessible\b|"
                   r"\bClass\s*\.\s*forName\b|\bgetStackTrace\b|\bStackWalker\b|\bUnsafe\b|java\.lang\.reflect|"
                   r"\bMethodHandles?\b|\bgetClassLoader\b|getAllStackTraces|\.get(?:Field|Method)s?\s*\(")
_JVM_REFLECTION = _JVM_REFLECTION.replace("java\\.lang\\.reflect", "java\\.lang\\.reflect\\.[A-Z]")
_JVM_EXIT_HOOK = r"addShutdownHook|set(?:Default)?UncaughtExceptionHandler|sun\.misc\.Signal\b"
_JVM_EXIT = r"System\s*\.\s*(?:\{[^}\n]*\b)?exit\b|\.\s*halt\s*\(|Runtime\s*\.\s*getRuntime\s*\(\s*\)\s*\.\s*exit"
_JVM_OUTPUT = r"FileDescriptor\s*\.\s*(?:out|err)\b|System\s*\.\s*set(?:Out|Err)\b|/dev/(?:stdout|fd)"

RULES: dict[str, list[tuple[str, str]]] = {
    "python": [
        ("introspection", r"(?<!\w)(?:_getframe|_current_frames|currentframe|getouterframes|getinnerframes|"
                          r"getargvalues|walk_stack|walk_tb|f_locals|f_globals|f_back|f_builtins|f_code|tb_frame|gi_frame|"
                          r"cr_frame|ag_frame|get_objects|get_referrers|get_referents|__subclasses__|__globals__|"
                          r"__import__|__code__|__closure__|__getattribute__|settrace|setprofile|import_module)(?!\w)"),
        ("introspection", r"\bsys\s*\.\s*_getframe|\binspect\s*\.\s*(?:currentframe|stack|getouterframes|trace|"
                          r"getmembers)|\bgc\s*\.\s*get_(?:objects|referrers|referents)|\.f_(?:back|locals|globals|"
                          r"builtins|code)\b|\btb_frame\b|\bctypes\b|__subclasses__|\bimport\s+__main__|\b__main__\s*\.|"
                          r"\bsys\s*\.\s*modules\s*\[|\bsettrace\b|\bsetprofile\b"),
        ("exit_hook", r"\batexit\b|\bsys\s*\.\s*(?:excepthook|unraisablehook)\b|(?<!\w)(?:excepthook|unraisablehook)(?!\w)|\bthreading\s*\.\s*excepthook\b|"
                      r"\baddaudithook\b"),
        ("signal_handler", r"\bsignal\s*\.\s*(?:signal|set_wakeup_fd|setitimer|alarm)\s*\("),
        ("forced_exit", r"\bos\s*\.\s*(?:_exit|kill|killpg|abort)\b|\bsys\s*\.\s*exit\b|(?<![\w.])(?:exit|quit)\s*\(|"
                        r"\bSystemExit\b|\bos\s*\.\s*exec\w*\s*\(|(?<!\w)_exit(?!\w)"),
        ("reads_stdin", r"\bsys\s*\.\s*stdin\b|(?<!\w)stdin(?!\w)|(?<![\w.])input\s*\(|\bopen\s*\(\s*0\b|/dev/stdin|\bos\s*\.\s*read\s*\(\s*0\b|"
                        r"\bfileinput\b"),
        ("reads_own_program", r"\b__file__\b|/proc/self|/proc/\d|\bsys\s*\.\s*argv\b|(?<!\w)argv(?!\w)|\bmain\.py\b|\brunner\.py\b|"
                              r"\.judgebox\b|\bsolution\.py\b"),
        ("redefines_check", r"(?<!\w)__(?:eq|ne)__(?!\w)|\bdef\s+__hash__\b|\bAssertionError\s*=|"
                            r"\bunittest(?:\s*\.\s*\w+)+\s*=(?!=)|\b(?:np|numpy|pd|pandas)\s*\.\s*testing(?:\s*\.\s*\w+)+"
                            r"\s*=(?!=)|\bbuiltins\s*\.\s*\w+\s*=(?!=)|\b__builtins__\b|\bsetattr\s*\(\s*(?:builtins|unittest|"
                            r"np|numpy|pd|pandas)\b"),
        ("raw_output", r"\bos\s*\.\s*(?:write\s*\(\s*[12]\b|dup2?\s*\(|fdopen\s*\()|\bsys\s*\.\s*__stdout__\b|"
                       r"/dev/(?:stdout|fd)|/proc/self/fd"),
    ],
    "cpp": _C_FAMILY,
    "rust": [
        ("early_init", r"\blink_section\b|\.init_array|#\s*\[\s*ctor\b|#\s*\[\s*used\s*\]"),
        ("exit_hook", r"\bpanic\s*::\s*(?:set_hook|take_hook|catch_unwind)|\bset_hook\s*\(|\bcatch_unwind\b|\batexit\b"),
        ("signal_handler", r"\blibc\s*::\s*(?:signal|sigaction)\b|\bsignal_hook\b"),
        ("forced_exit", r"\bprocess\s*::\s*(?:exit|abort)\b|\blibc\s*::\s*(?:_?exit|_Exit|kill|abort|raise)\b"),
        ("introspection", r"\bunsafe\b|\btransmute\b|\bstd\s*::\s*ptr\s*::|\basm!|\bglobal_asm!"),
        ("reads_stdin", r"\bstdin\s*\(|\bio\s*::\s*stdin\b|/dev/stdin|\bStdin\b"),
        ("reads_own_program", r"/proc/self|/proc/\d|\bcurrent_exe\b|\bfile!\s*\(|\binclude_(?:str|bytes)!|\benv\s*::\s*args\b"),
        ("redefines_check", r"macro_rules!\s*(?:assert\w*|debug_assert\w*|panic|unreachable)\b|\bimpl\b[^{\n]*\bPartialEq\b|"
                            r"\bfn\s+(?:eq|ne)\s*\("),
        ("second_entry_point", r"\bfn\s+main\s*\("),
        ("raw_output", r"\bfrom_raw_fd\b|\blibc\s*::\s*(?:write|dup2?)\b|/dev/(?:stdout|fd)"),
    ],
    "java": [
        ("early_init", r"(?<![\w.])static\s*\{"),
        ("exit_hook", _JVM_EXIT_HOOK),
        ("signal_handler", r"sun\.misc\.Signal|\bSignalHandler\b"),
        ("forced_exit", _JVM_EXIT),
        ("introspection", _JVM_REFLECTION),
        ("reads_stdin", r"System\s*\.\s*in\b|\bnew\s+Scanner\s*\(|\bBufferedReader\b|\bSystem\s*\.\s*console\b"),
        ("reads_own_program", r"/proc/self|\.java\"|getProtectionDomain|getCodeSource|\buser\.dir\b"),
        ("redefines_check", r"\bboolean\s+equals\s*\(|\bint\s+hashCode\s*\(|\bextends\s+(?:java\.util\.)?(?:ArrayList|"
                            r"LinkedList|HashMap|TreeMap|HashSet|TreeSet|AbstractList|AbstractMap|AbstractSet|Optional)\b"),
        ("second_entry_point", r"\bstatic\s+void\s+main\s*\("),
        ("raw_output", _JVM_OUTPUT),
    ],
    "kotlin_script": [
        ("exit_hook", _JVM_EXIT_HOOK),
        ("forced_exit", _JVM_EXIT + r"|\bexitProcess\b"),
        ("introspection", _JVM_REFLECTION + r"|::class\b|\bjavaClass\b|\bdeclared(?:Fields|Methods|Members)\b|kotlin\.reflect"),
        ("reads_stdin", r"\breadLine\s*\(|\breadln(?:OrNull)?\s*\(|System\s*\.\s*`?in`?\b"),
        ("reads_own_program", r"/proc/self|\.kts\"|getProtectionDomain"),
        ("redefines_check", r"\bfun\s+(?:assert\w*|check|require)\s*\(|\boverride\s+fun\s+equals\b|\boperator\s+fun\s+equals\b"),
        ("second_entry_point", r"\bfun\s+main\s*\("),
        ("raw_output", _JVM_OUTPUT),
    ],
    "scala": [
        ("exit_hook", _JVM_EXIT_HOOK + r"|\bsys\s*\.\s*addShutdownHook\b"),
        ("forced_exit", _JVM_EXIT + r"|\bsys\s*\.\s*(?:\{[^}\n]*\b)?exit\b|(?<![\w.])exit\s*\("),
        ("introspection", _JVM_REFLECTION + r"|scala\.reflect|\bclassOf\s*\["),
        ("reads_stdin", r"\bStdIn\b|System\s*\.\s*in\b|Source\s*\.\s*stdin|\breadLine\s*\("),
        ("reads_own_program", r"/proc/self|\.scala\"|getProtectionDomain"),
        ("redefines_check", r"\bdef\s+(?:assert\w*|require|assume)\s*[\[(]|\boverride\s+def\s+equals\b|\bdef\s+==|"
                            r"\bimplicit\s+def\b"),
        ("second_entry_point", r"\bdef\s+main\s*\(|\bextends\s+App\b"),
        ("raw_output", _JVM_OUTPUT + r"|Console\s*\.\s*(?:setOut|withOut)\b"),
    ],
    # Go: members are matched whatever their package is called (the harness imports os as judgeboxos);
    # package-level initializers are early_init too (judgebox.reward.tamper.structure)
    "go": [
        ("early_init", r"\bfunc\s+init\s*\(\s*\)"),
        ("exit_hook", r"\.\s*SetFinalizer\b|\brecover\s*\(\s*\)"),
        ("signal_handler", r"\bsignal\s*\.\s*(?:Notify|Ignore)\b|\.\s*(?:Notify|Ignore)\s*\(\s*\w+\s*,\s*\w+\s*\.\s*(?:Interrupt|"
                           r"Kill|SIG\w+)"),
        ("forced_exit", r"\.\s*(?:Exit|Goexit|Kill)\b"),
        ("introspection", r"\bunsafe\b|\breflect\s*\.\s*(?!DeepEqual\b)|\.\s*(?:Caller|Callers|PrintStack)\b|"
                          r"\.\s*Stack\s*\(\s*(?:\)|\w+\s*,)|go:linkname"),
        ("reads_stdin", r"\.\s*Stdin\b|\.\s*Scan(?:f|ln)?\s*\(\s*[^)\s]|\.\s*Read\s*\(\s*0\s*,|/dev/stdin"),
        ("reads_own_program", r"/proc/self|/proc/\d|\.\s*(?:Executable|Args)\b"),
        ("redefines_check", r"go:linkname|\bfunc\s+Test\w*\s*\(|\bfunc\s+\(\s*\w+\s+\*?\w+\s*\)\s+Equal\s*\("),
        ("second_entry_point", r"\bfunc\s+main\s*\(\s*\)|\bfunc\s+TestMain\s*\("),
        ("raw_output", r"\.\s*NewFile\b|\.\s*Write\s*\(\s*[12]\s*,|\.\s*Dup[23]?\b|/dev/(?:stdout|fd)|"
                       r"\.\s*Stdout\s*=(?!=)"),
    ],
    "nodejs": [
        ("exit_hook", r"\bprocess\s*\.\s*(?:on|once|addListener|prependListener)\s*\(\s*['\"`](?:exit|beforeExit|"
                      r"uncaughtException|unhandledRejection)|setUncaughtExceptionCaptureCallback|\bprocess\s*\.\s*exitCode\b"),
        ("signal_handler", r"\bprocess\s*\.\s*(?:on|once|addListener)\s*\(\s*['\"`]SIG"),
        ("forced_exit", r"\bprocess\s*\.\s*(?:exit|kill|abort|reallyExit)\b"),
        ("introspection", r"\bglobalThis\b|(?<![\w.$])global\s*\.|\barguments\s*\.\s*callee\b|"
                          r"\bError\s*\([^()]*\)\s*\.\s*stack\b|\b(?:err|error|exc|exception)\s*\.\s*stack\b|"
                          r"\.stack\s*\.\s*(?:split|match|matchAll|replace|replaceAll|substring|substr|search|trim\w*|"
                          r"charAt|charCodeAt|startsWith|endsWith|to(?:Lower|Upper)Case|padStart|padEnd)\b|"
                          r"\b(?:captureStackTrace|prepareStackTrace|stackTraceLimit)\b|\bprocess\s*\.\s*mainModule\b|"
                          r"\bmodule\s*\.\s*filename\b|\brequire\s*\.\s*(?:cache|main)\b|"
                          r"\bmodule\s*\.\s*(?:parent|children)\b|(?<![\w.$])Function\s*\(|(?<![\w.$])eval\s*\("),
        ("reads_stdin", r"\bprocess\s*\.\s*stdin\b|readFileSync\s*\(\s*(?:0\b|['\"`]/dev/stdin)|\breadline\b"),
        ("reads_own_program", r"\b__filename\b|\b__dirname\b|\bprocess\s*\.\s*argv\b|/proc/self|\bimport\s*\.\s*meta\b"),
        ("redefines_check", r"\bassert(?:\s*\.\s*\w+)*\s*=(?!=)|\b(?:isEqual|deepEqual|deepStrictEqual|strictEqual|equal)"
                            r"\s*=(?!=)|\bObject\s*\.\s*(?:defineProperty|setPrototypeOf|assign)\s*\(\s*(?:assert|global|"
                            r"globalThis|process|require|module|_)\b|\b(?:Object|Array|String|Number|Map|Set)\s*\.\s*"
                            r"prototype\s*\.\s*\w+\s*=(?!=)|\bJSON\s*\.\s*stringify\s*=(?!=)|Symbol\s*\.\s*toPrimitive"),
        ("raw_output", r"\bprocess\s*\.\s*stdout\s*\.\s*(?:write\s*=(?!=)|fd\b|_handle)|\bwriteSync\s*\(\s*[12]\b|"
                       r"/dev/(?:stdout|fd)"),
    ],
    "bash": [
        ("exit_hook", r"(?<![\w-])trap\b"),
        ("forced_exit", r"(?<![\w-])(?:exit|kill|exec|logout)\b"),
        ("introspection", r"\bdeclare\s+-[pfF]|\bcompgen\b|\btypeset\s+-p|^[ \t]*set\s*(?:$|\|)|\$\{![A-Za-z_]\w*[@*]\}|"
                          r"\bFUNCNAME\b|\bBASH_ARGV\b|\bcaller\b"),
        ("reads_stdin", r"/dev/stdin|/proc/self/fd/0"),
        ("reads_own_program", r"\$0\b|\$\{0\}|\bBASH_SOURCE\b|/proc/self|/proc/\$\$"),
        ("redefines_check", r"^[ \t]*(?:alias|unalias)\b|\benable\s+-n\b|^[ \t]*(?:function\s+)?(?:\[\[?|test|echo|printf|"
                            r"return|exit|set|shopt|declare|local|source|eval|command|builtin)\s*\(\s*\)"),
        ("raw_output", r">&\s*[3-9]|/dev/fd/|/proc/self/fd|\bexec\s+[0-9]*[<>]"),
    ],
    "ruby": [
        ("exit_hook", r"\bat_exit\b|\bEND\s*\{|\btrap\s*\(|\bSignal\s*\.\s*trap\b|\bdefine_finalizer\b"),
        ("forced_exit", r"\bexit!|\bProcess\s*\.\s*(?:exit|kill|abort)\b|(?<![\w.:])(?:exit|abort)\b"),
        ("introspection", r"\bglobal_variables\b|\bObjectSpace\b|\bbinding\b|\binstance_variable_get\b|\bcaller\b|"
                          r"\bTracePoint\b|(?<![\w.])eval\s*[\s(]|\b(?:instance|class|module)_eval\b|\bsend\s*\(|"
                          r"\b__send__\b|\blocal_variables\b"),
        ("reads_stdin", r"\bSTDIN\b|\$stdin\b|(?<![\w.])gets\b|\bARGF\b|\breadlines\b"),
        ("reads_own_program", r"\b__FILE__\b|\$0\b|\$PROGRAM_NAME\b|\b__dir__\b|/proc/self|\bDATA\s*\.\s*read\b"),
        ("redefines_check", r"\bdef\s+(?:self\s*\.\s*)?(?:assert\w*|refute\w*|==|eql\?|equal\?|===)|\bTest::Unit\b|"
                            r"\bMinitest\b|\bAssertions\b|^[ \t]*class\s+(?:Integer|String|Array|Hash|Object|Float|NilClass|"
                            r"TrueClass|FalseClass|BasicObject|Kernel|Comparable)\b|\b(?:alias_method|define_method|"
                            r"remove_method|undef_method|prepend)\b"),
        ("raw_output", r"\$stdout\s*=(?!=)|\bSTDOUT\b|\bIO\s*\.\s*new\s*\(\s*[12]\b|\breopen\b|\bsyswrite\b|"
                       r"\bIO\s*\.\s*for_fd\b"),
    ],
    "php": [
        ("exit_hook", r"\bregister_shutdown_function\b|\bset_exception_handler\b|\bset_error_handler\b|\bpcntl_signal\b"),
        ("forced_exit", r"(?<![\w$>])(?:exit|die)\b|\bposix_kill\b|\bposix__?exit\b"),
        ("introspection", r"\$GLOBALS\b|\bdebug_backtrace\b|\bget_defined_(?:vars|functions|constants)\b|\bReflection\w+|"
                          r"(?<![\w$])global\s+\$"),
        ("reads_stdin", r"\bSTDIN\b|php://stdin|\bfgets\s*\(|\bfscanf\s*\(|\breadline\s*\(|\bstream_get_contents\b"),
        ("reads_own_program", r"\b__FILE__\b|\b__DIR__\b|\$argv\b|\$_SERVER\b|/proc/self"),
        ("redefines_check", r"\bassert_options\b|\bini_set\s*\(\s*['\"](?:zend\.)?assert|\bfunction\s+assert\w*\s*\(|"
                            r"(?<![\w$])namespace\s"),
        ("raw_output", r"\bob_(?:end_clean|get_clean|end_flush|get_flush|get_contents|start|clean|flush|get_level)\b|"
                       r"php://(?:stdout|output|fd)|\bSTDOUT\b"),
    ],
    "perl": [
        ("exit_hook", r"\bEND\s*\{|\$SIG\s*\{|__DIE__|__WARN__"),
        ("forced_exit", r"\bPOSIX::_exit\b|\bCORE::exit\b|(?<![\w:$])(?:exit|kill)\b"),
        ("introspection", r"\bPadWalker\b|(?<![\w$])caller\b|%main::|%::|\$main::|\*main::|\bB::|\bDevel::|"
                          r"(?<![\w$])eval\s*[\"']|\bstash\b"),
        ("reads_stdin", r"<STDIN>|<>|\*STDIN\b|\bSTDIN\b"),
        ("reads_own_program", r"\$0\b|\b__FILE__\b|/proc/self|\b__DATA__\b|\b__END__\b"),
        ("redefines_check", r"\bsub\s+(?:\w+::)+\w+|\*(?:\w+::)+\w+\s*=|\bno\s+warnings\b[^;]*\bredefine\b|"
                            r"\bsub\s+(?:eq_deeply|is_deeply|cmp_deeply|is|ok|is_num)\b|\buse\s+overload\b"),
        ("raw_output", r">&\s*(?:STDOUT|1)\b|\*STDOUT\b|\bselect\s*\(|\bsyswrite\b|/dev/(?:stdout|fd)"),
    ],
    "lua": [
        ("exit_hook", r"__gc\b|\bsetmetatable\s*\(\s*_G\b|\bdebug\s*\.\s*sethook\b"),
        ("forced_exit", r"\bos\s*\.\s*exit\b"),
        ("introspection", r"\bdebug\s*\.|\bgetfenv\b|\bsetfenv\b|\b_G\b|\b_ENV\b|\brawget\b|\brawset\b|"
                          r"\bpackage\s*\.\s*loaded\b|(?<![\w.:])load(?:string)?\s*\("),
        ("reads_stdin", r"\bio\s*\.\s*(?:read|stdin|lines\s*\(\s*\))"),
        ("reads_own_program", r"\barg\s*\[\s*0|/proc/self|\bdebug\s*\.\s*getinfo\b"),
        ("redefines_check", r"\blu\s*\.\s*\w+\s*=(?!=)|\bluaunit\b|(?<![\w.:])assert\s*=(?!=)|\bfunction\s+assert\w*\s*\(|"
                            r"__eq\b"),
        ("raw_output", r"\bio\s*\.\s*(?:stdout|output)\b|/dev/(?:stdout|fd)"),
    ],
    "R": [
        ("exit_hook", r"\breg\.finalizer\b|\.Last\b|\bon\.exit\b|\baddTaskCallback\b"),
        ("forced_exit", r"(?<![\w.])(?:quit|q)\s*\(|\bpskill\b"),
        ("introspection", r"\bglobalenv\s*\(|\.GlobalEnv\b|\bsys\.(?:frames?|function|call|calls)\b|\bparent\.frame\b|"
                          r"\benvironment\s*\(|(?<![\w.])ls\s*\(|(?<![\w.])(?:get|mget|exists)\s*\(|(?<![\w.])assign\s*\("),
        ("reads_stdin", r"file\s*\(\s*['\"]stdin|\breadLines\s*\(|(?<![\w.])scan\s*\(|\breadline\s*\("),
        ("reads_own_program", r"\bcommandArgs\b|/proc/self|--file"),
        ("redefines_check", r"\b(?:stopifnot|all\.equal|identical|isTRUE|isFALSE|stop)\s*(?:<<?-|=(?!=))|"
                            r"`(?:==|!=|identical|stopifnot|all\.equal)`\s*<<?-|\b(?:un)?lockBinding\b"),
        ("raw_output", r"\bsink\s*\(|\bstdout\s*\(\s*\)|/dev/(?:stdout|fd)"),
    ],
    "racket": [
        ("exit_hook", r"(?<![\w-])(?:exit-handler|uncaught-exception-handler|error-escape-handler|plumber[\w-]*|"
                      r"make-will-executor|will-register)(?![\w?!*/<>=-])"),
        ("forced_exit", r"\(\s*exit(?![\w?!*/<>=-])"),
        ("introspection", r"(?<![\w-])(?:namespace[\w-]*|current-namespace|module->namespace|eval|"
                          r"variable-reference[\w-]*)(?![\w?!*/<>=-])"),
        ("reads_stdin", r"\(\s*read(?:-line|-char|-bytes|-string)?\s*\)|\bcurrent-input-port\b"),
        ("reads_own_program", r"/proc/self|\bcurrent-command-line-arguments\b|\bsyntax-source\b|\bfind-system-path\b"),
        ("redefines_check", r"\bcurrent-check-handler\b|\bcurrent-check-around\b|\(\s*define\s+\(?\s*(?:check-equal\?|"
                            r"check-true|check-false|check-not-equal\?|check|equal\?|test-case)(?![\w?!*/<>=-])|"
                            r"\bset!\s+(?:check|equal)(?![\w?!*/<>=-])"),
        ("raw_output", r"\bcurrent-output-port\b|/dev/(?:stdout|fd)"),
    ],
    "D_ut": [
        ("early_init", r"\bstatic\s+this\s*\(|\bshared\s+static\s+this\s*\(|crt_constructor"),
        ("exit_hook", r"\bstatic\s+~this\b|\bassertHandler\b|\bRuntime\s*\.\s*\w+|\bmoduleUnitTester\b|"
                      r"\bextendedModuleUnitTester\b|\bcore\.runtime\b"),
        ("forced_exit", r"(?<![\w.])(?:exit|_Exit|abort)\s*\(|\bcore\.stdc\.stdlib\b"),
        ("introspection", r"__traits\b|\bModuleInfo\b|\.tupleof\b|\bcore\.sys\b|\basm\s*\{"),
        ("reads_stdin", r"\bstdin\b|\breadln\b|\breadf\b|\bscanf\b"),
        ("reads_own_program", r"\b__FILE__\b|\b__FILE_FULL_PATH__\b|\bthisExePath\b|/proc/self|\bimport\s*\(\s*\""),
        ("redefines_check", r"\bopEquals\b|\balias\s+assert\b|\bassertHandler\b"),
        ("second_entry_point", r"^[ \t]*(?:void|int)\s+main\s*\("),
        ("raw_output", r"\bstdout\s*\.\s*reopen\b|\bdup2?\s*\(|/dev/(?:stdout|fd)"),
    ],
}
RULES["typescript"] = RULES["nodejs"]
RULES["go_test"] = RULES["go"]
RULES["pytest"] = RULES["python"]



class Lexer(NamedTuple):
    """How a language's comments are found, so that a rule never matches a comment but always matches
    code (:func:`judgebox.reward.tamper.lexer.blank_comments`).

    ``tokens`` is one regular expression whose alternatives are the language's string-like literals
    (kept as they are) and its comments (blanked); the scan takes them left to right, so a comment
    opener inside a literal is part of the literal. Every alternative begins with a literal character
    (the regular-expression engine then only stops where one may begin). A token is a comment when it
    begins with an opener of ``comments`` (``(opener, closer)``; ``""``: it ends at the end of the line).

    The lexer is small, not the language's own, so it may misread a literal it does not know (a
    heredoc, a nested template, a ``%q(...)``). A comment is therefore blanked only where no such
    misreading could hide code in it: real code can follow a comment opener on the comment's line (or
    between a block's ends) only if a literal or comment that really contains the opener ends there,
    by a delimiter. ``closers`` lists those delimiters, ``(text, armed_by, scope)``: a comment whose
    text after its opener contains ``text`` is kept for the scan when ``armed_by`` (a regular
    expression; ``None``: always) occurs before it, on its line (``"line"``, joined over backslash-
    newlines) or anywhere (``"any"``). A block comment on a line that holds a line-comment opener before
    it is kept too. ``triggers``: no trigger in the code, nothing to blank. ``evaluated``: a comment-like
    token (bash's single-quoted text) on a line where this regular expression matches before it is
    code another command runs (``eval '...'``, ``bash -c '...'``) and is kept."""

    tokens: str
    comments: tuple[tuple[str, str], ...]
    closers: tuple[tuple[str, Optional[str], str], ...]
    triggers: tuple[str, ...]
    evaluated: Optional[str] = None


# Quoted literals, unrolled (a run of plain characters, then an escape and another run): single-line
# (a backslash-newline continues them) and multi-line.
_DQ = r'"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"'
_SQ = r"'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'"
_DQ_ML = r'"[^"\\]*(?:\\[\s\S][^"\\]*)*"'
_SQ_ML = r"'[^'\\]*(?:\\[\s\S][^'\\]*)*'"
_BQ_ML = r"`[^`\\]*(?:\\[\s\S][^`\\]*)*`"
_BQ_RAW = r"`[^`]*`"
_BQ_NAME = r"`[^`\n]*`"
_EOL = r"[^\n\r\u2028\u2029]*"
_LINE = r"//" + _EOL
# A block construct left open runs to the end of the code (one pass, not one per opener).
_BLOCK = r"/\*[\s\S]*?(?:\*/|\Z)"
_TRIPLE_DQ = r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:"""|\Z)'
_TRIPLE_SQ = r"'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)"
_TRIPLE_RAW = r'"""[\s\S]*?(?:"""|\Z)'
_C_COMMENTS = (("//", ""), ("/*", "*/"))
#: a line comment that holds a block comment's closer: it may be the rest of a real block comment
_BLOCK_END = ("*/", r"/\*", "any")
_QUOTES_ANY = (('"', '"', "any"), ("'", "'", "any"))
_SLASH_TRIGGERS = ("//", "/*")


def _c_like(*literals: str, closers: tuple = (), comments: tuple = _C_COMMENTS) -> Lexer:
    return Lexer("|".join((_LINE, _BLOCK, *literals)), comments, (*closers, _BLOCK_END), _SLASH_TRIGGERS)


_C_CHAR = "|".join(r"'(?<=%s')[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'" % before
                   for before in (r"[^\w]", r"\bu8", r"\b[uUL]", r"^"))  # not a digit separator (1'000)
_RUST_CHAR = r"'(?:[^'\\\n\r]|\\(?:u\{[0-9a-fA-F_]{1,8}\}|x[0-9a-fA-F]{2}|[^\n]))'"  # not a lifetime ('a)
_JS_REGEX = "|".join(r"/(?<=%s/)(?![*/])(?:[^/\\\[\n\r]|\\.|\[(?:[^\]\\\n\r]|\\.)*\])+/" % before
                     for before in (r"[(,=:\[!&|?{};~^%*+\-<>]", r"[(,=:\[!&|?{};~^%*+\-<>] ", r"\breturn ", r"^"))
_BRACKETS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _delimited(quote_like: str) -> tuple[tuple[str, Optional[str], str], ...]:
    """Closers of Ruby's %q(...)/%w[...] and Perl's q{...}/s|...|...|: any punctuation, armed by the
    quote-like operator before its opening delimiter."""
    return tuple((c, quote_like + re.escape(_BRACKETS.get(c, c)), "any") for c in "!$%&)*+,-./:;<=>?@]^_|}~")


#: an interpolating heredoc runs the commands in it, on a line that may look like a comment
_HEREDOC_RUNS = {"bash": ("$(", "`", "$["), "ruby": ("{",), "perl": ("@{", "${"), "php": ("{$", "${")}
_LINE_DQ = (('"', '"', "line"),)
_LINE_SQ = (("'", "'", "line"),)

#: sandbox language -> its :class:`Lexer`.
LEXERS: dict[str, Lexer] = {
    # Python: the scan lexes with the parser's view where the code parses (judgebox.reward.tamper.python)
    "python": Lexer("|".join((_TRIPLE_SQ, _TRIPLE_DQ, _SQ, _DQ, "#" + _EOL)), (("#", ""),), _QUOTES_ANY, ("#",)),
    "cpp": _c_like(r'R"(?P<d>[^()\\\s"]{0,16})\([\s\S]*?(?:\)(?P=d)"|\Z)', _DQ, _C_CHAR,
                   closers=(*_LINE_DQ, ('"', 'R"', "any"), ("'", r"(?<![\w'])'|\b(?:u8|[uUL])'", "line"))),
    "java": _c_like(_TRIPLE_DQ, _DQ, _SQ, closers=(*_LINE_DQ, ('"', '"""', "any"), *_LINE_SQ, (r"\u", None, "any"))),
    "kotlin_script": _c_like(_TRIPLE_RAW, _DQ, _SQ, _BQ_NAME, closers=(('"', '"', "any"), *_LINE_SQ, ("`", "`", "line"))),
    "scala": _c_like(_TRIPLE_RAW, _DQ, _SQ, _BQ_NAME,
                     closers=(('"', '"', "any"), *_LINE_SQ, ("`", "`", "line"), (r"\u", None, "any"))),
    "go": _c_like(_DQ, _SQ, _BQ_RAW, closers=(*_LINE_DQ, *_LINE_SQ, ("`", "`", "any"))),
    "rust": _c_like(r'r(?<![A-Za-ac-z0-9_]r)(?P<h>#*)"[\s\S]*?(?:"(?P=h)|\Z)', _DQ_ML, _RUST_CHAR,
                    closers=(('"', '"', "any"), *_LINE_SQ)),
    "nodejs": _c_like(_DQ, _SQ, _BQ_ML, _JS_REGEX,
                      closers=(*_LINE_DQ, *_LINE_SQ, ("`", "`", "any"), ("/", "/", "line"))),
    "D_ut": _c_like(r'r(?<!\wr)"[^"]*"', _DQ_ML, _SQ, _BQ_RAW, r"/\+[\s\S]*?(?:\+/|\Z)",
                    closers=(('"', '"', "any"), *_LINE_SQ, ("`", "`", "any"), ("+/", r"/\+", "any"), ("}", r"\bq\{", "any")),
                    comments=(*_C_COMMENTS, ("/+", "+/"))),
    # PHP: a line comment ends at ?> too; #[ opens an attribute
    "php": Lexer("|".join((r"//(?:[^\n\r?]|\?(?!>))*", r"#(?!\[)(?:[^\n\r?]|\?(?!>))*", _BLOCK, _DQ_ML, _SQ_ML, _BQ_ML)),
                 (("//", ""), ("#", ""), ("/*", "*/")),
                 (*_QUOTES_ANY, ("`", "`", "any"), _BLOCK_END, ("\n", "<<<", "any"),
                  *((t, "<<<", "any") for t in _HEREDOC_RUNS["php"])), ("//", "/*", "#")),
    # bash: # opens a comment at the start of a word; $'...' and \x escape; single-quoted text is never
    # expanded (awk's $0 is not the script's), so it is blanked like a comment, unless a command runs it
    "bash": Lexer("|".join((r"#(?<![^\s;|&()<>]#)" + _EOL, _DQ_ML, r"\$'[^'\\]*(?:\\[\s\S][^'\\]*)*'", r"'[^']*'",
                            _BQ_ML, r"\\[\s\S]")),
                  (("#", ""), ("'", "'")),
                  (('"', '"', "any"), ("`", "`", "any"), ("\n", r"<<", "any"), ("\\", r"\$'", "any"),
                   *((t, "<<", "any") for t in _HEREDOC_RUNS["bash"])), ("#", "'"),
                  evaluated=r"(?<![\w-])(?:eval|source|trap|exec|xargs|parallel|(?:ba|da|k|z|fi)?sh)(?![\w-])|"
                            r"(?<![\w.-])\.\s"),
    # Ruby, Perl: # after a space (not ?#, $#, s#a#b#); their other literals are closers
    "ruby": Lexer("|".join((r"#(?<![^\s]#)" + _EOL, r"=(?<![^\n]=)begin\b[\s\S]*?(?:\n=end\b" + _EOL + r"|\Z)", _DQ_ML, _SQ_ML, _BQ_ML)),
                  (("#", ""), ("=begin", "=end")),
                  (*_QUOTES_ANY, ("`", "`", "any"), ("/", "/", "any"), ("\n", r"<<[~-]?['\"\w]", "any"),
                   *((t, r"<<[~-]?['\"\w]", "any") for t in _HEREDOC_RUNS["ruby"]), *_delimited(r"%[qQwWiIrsx]?")),
                  ("#", "=begin")),
    "perl": Lexer("|".join((r"#(?<![^\s]#)" + _EOL, r"=(?<![^\n]=)[A-Za-z]\w*[\s\S]*?(?:\n=cut\b" + _EOL + r"|\Z)", _DQ_ML, _SQ_ML,
                            _BQ_ML)),
                  (("#", ""), ("=", "=cut")),
                  (*_QUOTES_ANY, ("`", "`", "any"), ("/", "/", "any"), ("\n", r"<<\s*['\"~\w]", "any"),
                   *((t, r"<<\s*['\"~\w]", "any") for t in _HEREDOC_RUNS["perl"]),
                   *_delimited(r"(?<![\w$@%&])(?:q[qwrx]?|m|s|tr|y)\s*")), ("#", "\n=")),
    "R": Lexer("|".join(("#" + _EOL, *(r'%s(?<![\w.]%s)"(?P<%s>-*)[(\[{][\s\S]*?[)\]}](?P=%s)"' % (r, r, g, g)
                                      for r, g in (("r", "d"), ("R", "e"))), _DQ_ML, _SQ_ML, _BQ_ML)),
               (("#", ""),), (*_QUOTES_ANY, ("`", "`", "any")), ("#",)),
    "lua": Lexer("|".join((r"--\[(?P<c>=*)\[[\s\S]*?(?:\](?P=c)\]|\Z)", "--" + _EOL,
                           r"\[(?P<s>=*)\[[\s\S]*?(?:\](?P=s)\]|\Z)", _DQ, _SQ)),
                 (("--[", "]"), ("--", "")), (*_QUOTES_ANY, ("]", r"\[=*\[", "any")), ("--",)),
    # Racket: #\; is a character, #; a datum comment (its datum is scanned), |a;b| a symbol
    "racket": Lexer("|".join((r";(?<!#;)" + _EOL, r"#\|[\s\S]*?(?:\|#|\Z)", r"#\\(?:[A-Za-z]+|[\s\S])", _DQ_ML, r"\|[^|]*\|")),
                    ((";", ""), ("#|", "|#")), (('"', '"', "any"), ("|", r"\|", "any")), (";", "#|")),
}
LEXERS["typescript"] = LEXERS["nodejs"]
LEXERS["go_test"] = LEXERS["go"]
LEXERS["pytest"] = LEXERS["python"]
