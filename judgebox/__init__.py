"""The ``judgebox`` command line: one entry point over the sandbox, reward and agent packages."""
