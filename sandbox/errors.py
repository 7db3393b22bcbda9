"""One exception hierarchy for talking to sandboxes.

``SandboxInfraError`` and its subclasses mean *the sandbox could not answer*: the program's verdict
is unknown and must not be scored. A program that ran and failed is never an exception: it is a
``RunCodeResponse`` with ``status == "Failed"``.
"""


class SandboxError(Exception):
    """Base class of every judgebox sandbox client error."""


class SandboxInfraError(SandboxError):
    """The sandbox could not run the request (after retries): unreachable, overloaded, 5xx, deadline."""


class SandboxRequestError(SandboxError):
    """The sandbox rejected the request as malformed (HTTP 4xx other than 429): fix the request."""

    def __init__(self, message: str, status_code: int = 422) -> None:
        super().__init__(message)
        self.status_code = status_code
