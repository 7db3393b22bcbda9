"""The program runtime profiles: what a dataset's harness gives its programs, written down as data.

A profile names, per language, the packages programs may import, with the versions we chose (facts:
names and versions; no file is copied from another project):

- ``python``: pip requirements, installed into a virtual environment of the runtime (the server's
  own minor version of Python, so the fork-server and the harness runner run there unchanged);
- ``node``: npm packages, installed into the runtime's ``node_modules`` (``NODE_PATH`` of programs);
- ``debian``: Debian packages the runtime relies on, installed by ``scripts/install.sh``: named, not
  locked (the archive keeps one version), their versions reported. Go libraries come this way
  (``golang-*-dev`` puts their sources under ``/usr/share/gocode``, which programs get on
  ``GOPATH``; the Go module proxy is not reachable here), and Java jars (``/usr/share/java``, on the
  class path; Maven Central is not reachable here).

Profiles: ``default`` (what the HumanEval, MBPP, APPS, LiveCodeBench, MultiPL-E, HumanEval-X and
DS-1000 harnesses and SandboxFusion's runner tests import). The ``bigcodebench`` and
``sandboxfusion`` profiles of the SandboxFusion drop-in issue are not written yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    """One runtime profile (see the module docstring). ``exclusions``: what the profile leaves out
    on purpose, and why (``{what: why}``)."""

    name: str
    python: tuple[str, ...] = ()
    node: tuple[str, ...] = ()
    debian: tuple[str, ...] = ()
    exclusions: dict[str, str] = field(default_factory=dict)

    def languages(self) -> tuple[str, ...]:
        """The package kinds the profile has: a subset of ``("python", "node", "debian")``."""
        return tuple(k for k in ("python", "node", "debian") if getattr(self, k))


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile(
        "default",
        python=(
            # data science, as DS-1000 and most BigCodeBench tasks import them
            "numpy==2.2.6", "pandas==2.3.3", "scipy==1.15.3", "matplotlib==3.10.7", "scikit-learn==1.7.2",
            # maths and algorithms, as competitive and HumanEval-style solutions import them
            "sympy==1.14.0", "networkx==3.5", "sortedcontainers==2.4.0",
            # the pytest language, and the Jupyter kernel of /run_jupyter and sessions
            "pytest==8.4.2", "ipykernel==7.4.0",
        ),
        node=("lodash@4.17.21",),
        debian=("golang-github-stretchr-testify-dev", "junit4", "libhamcrest-java", "libjavatuples-java"),
    ),
)}
