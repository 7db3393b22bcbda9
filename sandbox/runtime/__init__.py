"""Program runtimes: the libraries a dataset's harness gives its programs, declared as profiles
(:mod:`.profiles`), built outside the server's environment (:mod:`.build`) and chosen per server
(:mod:`.store`)."""

from .profiles import PROFILES, Profile
from .store import BUILD_COMMAND, HOST, Runtime, find_runtime

__all__ = ["BUILD_COMMAND", "HOST", "PROFILES", "Profile", "Runtime", "find_runtime"]
