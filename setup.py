"""Where the files go (the metadata and extras are in pyproject.toml).

The Python packages install as they are; the repository's ``datasets/`` (manifests) and ``configs/``
(verl recipes, Kubernetes manifests) are data, not packages, and install inside the judgebox package
as ``judgebox/datasets`` and ``judgebox/configs`` so that a wheel install finds them."""

from setuptools import find_namespace_packages, find_packages, setup

#: repository folder -> package it installs as
DATA_DIRS = {"datasets": "judgebox.datasets", "configs": "judgebox.configs"}

data = {pkg: src for src, pkg in DATA_DIRS.items()}
for src, pkg in DATA_DIRS.items():
    data.update({f"{pkg}.{sub}": f"{src}/{sub.replace('.', '/')}" for sub in find_namespace_packages(src)})

setup(
    packages=find_packages(include=["sandbox*", "reward*", "agent*", "judgebox*"]) + sorted(data),
    package_dir=data,
    package_data={pkg: ["*.yaml", "*.yml", "*.json"] for pkg in data},
)
