"""judgebox agent: the vLLM-driven tool agent loop (next phase). Depends on ``reward`` and ``sandbox``."""
