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
DS-1000 harnesses and SandboxFusion's runner tests import); ``bigcodebench`` (BigCodeBench's
evaluation libraries) and ``sandboxfusion`` (SandboxFusion's own program runtime), each as far as it
installs on this machine's Python 3.11, what is left out in ``exclusions`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The package kinds a profile lists (``Profile`` fields; ``judgebox runtime build --languages``).
KINDS = ("python", "node", "debian")
#: The Debian packages of Go's and Java's test libraries (testify on ``GOPATH``, JUnit 4, Hamcrest
#: and javatuples on the class path), which every profile that runs Go or Java tests needs.
TEST_LIBRARIES = ("golang-github-stretchr-testify-dev", "junit4", "libhamcrest-java", "libjavatuples-java")


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
        """The package kinds the profile has: a subset of :data:`KINDS`."""
        return tuple(k for k in KINDS if getattr(self, k))


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
        node=("lodash@4.17.21", "tsx@4.7.1",  # tsx: the typescript language, as SandboxFusion runs it
              # the jest language: Jest with Babel's env and TypeScript presets, SandboxFusion's locked versions
              "jest@29.7.0", "babel-jest@29.7.0", "@jest/globals@29.7.0", "@babel/core@7.24.5",
              "@babel/preset-env@7.24.5", "@babel/preset-typescript@7.24.6"),
        debian=TEST_LIBRARIES,
    ),
    Profile(
        "bigcodebench",
        # BigCodeBench's evaluation list (Requirements/requirements-eval.txt, commit 47eff25) as it
        # installs on Python 3.11, checked here on 2026-12-02 (71 of 71 import)
        python=(
            "beautifulsoup4==4.8.2", "blake3==0.4.1", "chardet==5.2.0", "cryptography==38.0.0",
            "datetime==5.5", "Django==4.2.7", "dnspython==2.6.1", "docxtpl==0.11.5", "Faker==20.1.0",
            "Flask-Mail==0.9.1", "flask==3.0.3", "flask_login==0.6.3", "flask_restful==0.3.10",
            "flask_wtf==1.2.1", "folium==0.16.0", "gensim==4.3.2", "geopandas==0.13.2", "geopy==2.4.1",
            "holidays==0.29", "keras==2.12.0", "Levenshtein==0.25.0", "librosa==0.10.1", "lxml==4.9.3",
            "matplotlib==3.7.0", "mechanize==0.4.9", "natsort==7.1.1", "networkx==2.8.8", "nltk==3.8",
            "numba==0.57.1", "numpy==1.23.5", "opencv-python-headless==4.9.0.80", "openpyxl==3.1.2",
            "pandas==2.0.3", "Pillow==10.3.0", "prettytable==3.10.0", "psutil==5.9.5", "pycryptodome==3.14.1",
            "pyfakefs==5.4.1", "pyquery==1.4.3", "pytesseract==0.3.10", "pytest==8.2.0",
            "python-dateutil==2.9.0", "python-docx==1.1.0", "python_http_client==3.3.7", "pytz==2023.3.post1",
            "PyYAML==6.0.1", "requests==2.31.0", "requests_mock==1.11.0", "rsa==4.9", "scikit-image==0.20.0",
            "scikit-learn==1.3.1", "scipy==1.9.3", "seaborn==0.13.2", "selenium==4.15.0", "sendgrid==6.11.0",
            "shapely==2.0.4", "soundfile==0.12.1", "statsmodels==0.14.0", "sympy==1.12", "tensorflow==2.12.1",
            "textblob==0.18.0", "texttable==1.7.0", "Werkzeug==3.0.1", "wikipedia==1.4.0", "wordcloud==1.9.3",
            "wordninja==2.0.0", "WTForms==3.1.2", "xlrd==2.0.1", "xlwt==1.3.0", "xmltodict==0.13.0",
        ),
        debian=("tesseract-ocr",),
        exclusions={
            "numpy, scipy, scikit-image, numba, tensorflow, keras, networkx": "their pins have no Python 3.11 "
            "wheel: the nearest that install together are used (numpy 1.23.5, scipy 1.9.3, scikit-image 0.20.0, "
            "numba 0.57.1, tensorflow 2.12.1, keras 2.12.0, networkx 2.8.8)",
            "python-Levenshtein-wheels": "installs the same module as Levenshtein==0.25.0 and overwrites it",
            "NLTK stopwords and punkt (tasks 332, 376, 633, 635, 849; 334, 383, 940, 1109)": "downloaded at run "
            "time from a host that is not reachable here",
            "task 1005": "fetches a real URL; wikipedia tasks call its network API",
        },
    ),
    Profile(
        "sandboxfusion",
        # SandboxFusion's program runtime (runtime/python/requirements.txt, runtime/node/package.json,
        # commit 469de08) as it installs here, checked on 2026-12-02: 101 of 102 Python packages
        # import, 17 of 18 npm packages
        python=(
            "absl-py==2.1.0", "antlr4-python3-runtime==4.13.1", "APScheduler==3.10.4", "arch==6.3.0",
            "astor==0.8.1", "beautifulsoup4==4.12.3", "bs4==0.0.2", "catboost==1.2.3", "colorama==0.4.4",
            "coverage==7.4.0", "cryptography==42.0.5", "cvxpy==1.4.3", "datasketch==1.6.4", "Django==5.0.1",
            "docker==7.0.0", "faiss-cpu==1.7.4", "Faker==25.1.0", "fastdtw==0.3.4", "Flask-Caching==2.1.0",
            "Flask-Limiter==3.5.0", "Flask-RESTful==0.3.10", "Flask-SQLAlchemy==3.1.1", "Flask-Testing==0.8.1",
            "Flask-WTF==1.2.1", "Flask==3.0.1", "folium==0.16.0", "gensim==4.3.2", "GitPython==3.1.41",
            "gmpy2==2.1.5", "gql==3.5.0", "graphene==3.3", "graphql-core==3.2.3", "grpcio-tools==1.60.0",
            "jsonlines==4.0.0", "jupyter==1.0.0", "jupyter_client==8.6.2", "kaleido==0.2.1", "kneed==0.8.5",
            "lightgbm==4.3.0", "lxml==5.1.0", "matplotlib==3.8.2", "mongomock==4.1.2", "nameko==2.14.1",
            "nltk==3.8.1", "numba==0.58.1", "numpy==1.26.3", "opencv-python==4.9.0.80", "openpyxl==3.1.2",
            "pandas==2.2.0", "pandasql==0.7.3", "pika==1.3.2", "pillow==10.2.0", "plotly==5.18.0",
            "pmdarima==2.0.4", "psutil==5.9.8", "pulp==2.8.0", "pyberny==0.6.3", "pycryptodome==3.20.0",
            "pycryptodomex==3.20.0", "pydantic==2.6.4", "PyJWT==2.8.0", "pymongo==4.6.1", "PyMuPDF==1.24.3",
            "PyPDF2==3.0.1", "PyQt5==5.15.10", "pyscf==2.4.0", "pytest-cov==5.0.0", "pytest-mock==3.12.0",
            "pytest-qt==4.3.1", "pytest==7.4.4", "python-docx==1.1.2", "pyzbar==0.1.9", "rdkit==2023.9.4",
            "redis==5.0.1", "requests-toolbelt==1.0.0", "requests==2.31.0", "ruptures==1.1.9",
            "scikit-image==0.22.0", "scikit-learn==1.4.0", "scipy==1.11.4", "seaborn==0.13.2",
            "setuptools==80.10.2", "shapely==2.0.2", "statsmodels==0.14.1", "tabulate==0.9.0",
            "tensorflow==2.14.1", "textblob==0.18.0.post0", "toml==0.10.2", "torch==2.13.0",
            "torchinfo==1.8.0", "torchsummary==1.5.1", "tree-sitter-languages==1.9.1", "tree-sitter==0.20.4",
            "uvloop==0.19.0", "Werkzeug==3.0.1", "WTForms==3.1.2", "xarray==2023.6.0", "xgboost==2.0.3",
            "xlrd==2.0.1", "XlsxWriter==3.1.9", "xlwt==1.3.0", "yolk==0.4.3",
        ),
        node=(
            "@babel/core@7.29.16", "@babel/preset-env@7.29.14", "@babel/preset-typescript@7.29.16",
            "@jest/globals@29.7.0", "@testing-library/dom@10.4.2", "@testing-library/jest-dom@6.9.1",
            "babel-jest@29.7.0", "commander@12.1.0", "jest@29.7.0", "jest-json-reporter@1.2.2", "js-md5@0.7.3",
            "jsdom@24.1.3", "lodash@4.18.1", "random-seed@0.3.0", "seedrandom@3.0.5", "tsx@4.7.1",
            "typescript@5.3.3",
        ),
        debian=(*TEST_LIBRARIES, "libzbar0"),
        exclusions={
            "torch==2.1.2 and the CUDA runtime (torchvision, torchaudio)": "GPU builds: torch 2.13.0 CPU instead",
            "Flask-GraphQL==2.0.0": "does not import on Python >= 3.10 (collections.MutableMapping)",
            "NLTK data (punkt, stopwords)": "downloaded at install from a host that is not reachable here",
            "puppeteer": "downloads a browser at install",
            "Go modules (go.mod: go 1.22, otel, zap, gorm, ...)": "the Go module proxy is not reachable; "
            "Go 1.23 comes from bookworm-backports and testify from Debian",
            "junit-platform-console-standalone 1.8.2, junit-jupiter-api 5.11.0": "Maven Central is not reachable; "
            "JUnit 4 and JUnit 5 (junit5: Platform 1.9.1, Jupiter 5.9.2) come from Debian",
            "Lean 4 and mathlib": "fetched from GitHub at install",
        },
    ),
)}
