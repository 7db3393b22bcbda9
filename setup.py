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
packages: list[str] = []
for src, pkg in CODE_DIRS.items():
    package_dir[pkg] = src
    packages.append(pkg)
    for sub in find_packages(src):
        package_dir[f"{pkg}.{sub}"] = f"{src}/{sub.replace('.', '/')}"
        packages.append(f"{pkg}.{sub}")
data: list[str] = []
for src, pkg in DATA_DIRS.items():
    package_dir[pkg] = src
    data.append(pkg)
    for sub in find_namespace_packages(src):
        package_dir[f"{pkg}.{sub}"] = f"{src}/{sub.replace('.', '/')}"
        data.append(f"{pkg}.{sub}")

setup(
    packages=packages + data,
    package_dir=package_dir,
    package_data={pkg: ["*.yaml", "*.yml", "*.json"] for pkg in data},
)
