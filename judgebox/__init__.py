"""judgebox: run untrusted model-written code and turn the result into a reward.

One namespace, one layer per subpackage (each imports only those below it):

- :mod:`judgebox.integrations`: verl, TRL and OpenRLHF entry points;
- :mod:`judgebox.agent`: the tool agent loop, tools, parsers and model backends;
- :mod:`judgebox.reward`: test specifications, verdicts, checkers, harnesses, loaders, pass@k;
- :mod:`judgebox.sandbox`: the execution engine, its isolation, the HTTP server and client.

``judgebox`` itself is the command line (:mod:`judgebox.cli`).
"""
