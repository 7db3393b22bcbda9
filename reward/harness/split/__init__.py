"""Split harnesses: the tests run in a process that holds no code of the solution and call it through
proxies over pipes that carry typed values only (the sandbox's ``tests_program``), so no code of the
solution can report a test as passed. Python's is :func:`judgebox.reward.harness.runner.split_main`;
:mod:`.cpp`, :mod:`.java`, :mod:`.rust`, :mod:`.go` and :mod:`.node` (Node.js and TypeScript) build their
language's two programs, :mod:`.text` reads
their sources."""
