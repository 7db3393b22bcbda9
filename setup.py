"""Where the files go (the metadata and extras are in pyproject.toml).

judgebox installs one top-level name, ``judgebox``. The repository keeps its folders as designed and
the build maps each into the namespace:

============================  ==========================
repository folder             installs as
============================  ==========================
``judgebox/``                 ``judgebox`` (the CLI)
``sandbox/``                  ``judgebox.sandbox``
``reward/``                   ``judgebox.reward``
``agent/``                    ``judgebox.agent``
``integrations/``             ``judgebox.integrations``
``datasets/``, ``configs/``   ``judgebox.datasets``, ``judgebox.configs`` (data: manifests, recipes)
============================  ==========================

From a checkout, ``pip install -e .`` makes the same names importable (setuptools maps them).
"""

from setuptools import find_namespace_packages, find_packages, setup

#: repository folder -> package it installs as (code)
CODE_DIRS = {"judgebox": "judgebox", "sandbox": "judgebox.sandbox", "reward": "judgebox.reward",
             "agent": "judgebox.agent", "integrations": "judgebox.integrations"}
#: repository folder -> package it installs as (data, no code)
DATA_DIRS = {"datasets": "judgebox.datasets", "configs": "judgebox.configs"}

package_dir: dict[str, str] = {}


def mapped(folders: dict[str, str], find) -> list[str]:
    """The packages of each repository folder (``find`` lists its subpackages), entered in ``package_dir``."""
    out = []
    for src, pkg in folders.items():
        for sub in ["", *find(src)]:
            name = f"{pkg}.{sub}" if sub else pkg
            package_dir[name] = f"{src}/{sub.replace('.', '/')}" if sub else src
            out.append(name)
    return out


packages = mapped(CODE_DIRS, find_packages)
data = mapped(DATA_DIRS, find_namespace_packages)

setup(
    packages=packages + data,
    package_dir=package_dir,
    package_data={**{pkg: ["*.yaml", "*.yml", "*.json"] for pkg in data},
                  "judgebox.report": ["assets/*"],  # the report page's template, script and style
                  "judgebox.reward.harness.split": ["*.hpp", "*.java", "*.rs", "*.go", "*.js"]},  # the split harnesses' runtimes
)
