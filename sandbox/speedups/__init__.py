"""What makes runs cheaper without changing a verdict: the Python fork-server (:mod:`.forkserver`
and its program :mod:`.zygote`), the compile cache (:mod:`.compile_cache`), and prebuilt artifacts
(:mod:`.prebuilt`: precompiled C++ headers :mod:`.pch`, javac's class-data archive :mod:`.jvm`).

Layer rule: imports only :mod:`judgebox.sandbox.isolation` (and the base modules) of judgebox.
"""
