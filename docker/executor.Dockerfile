# The judgebox executor: a SandboxFusion-compatible server with every language toolchain the
# executor supports. Build from the repository root:
#   docker build -f docker/executor.Dockerfile -t judgebox-executor .
# Build arguments:
#   BASE_IMAGE  any Debian bookworm image whose `python3 -m venv` works (python:3.11-slim-bookworm,
#               or the debootstrap image scripts/docker-setup.sh imports for offline builds).
#   WHEELHOUSE  a folder in the build context; if it holds a judgebox wheel, judgebox and its
#               dependencies install from it with no index (offline); otherwise from PyPI.
#   RUNTIME_WHEELS  a folder in the build context with the wheels and an npm cache of the program
#               runtime's packages (offline); empty: they install from PyPI and npm.
#   EXTRAS      judgebox extras to install too: `ray` for the KubeRay image (configs/k8s/raycluster.yaml,
#               tagged judgebox-executor:ray); empty by default.
#
# Stages: `toolchains` (the Debian packages: ~2.5 GB, rebuilt only when their list changes), `runtime`
# on it (the program runtime: its 179 MB of wheels and npm cache stay in that stage, the final image
# copies only what it installed), then the final image: the runtime copied in, judgebox's venv. A
# source change rebuilds the venv's layer and those after it only.
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE} AS toolchains

ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8
# One layer with every toolchain (Debian packages; the apt lists are dropped to keep it small).
RUN echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/backports.list \
 && apt-get update \
 && apt-get install -y --no-install-recommends -t bookworm-backports golang-go \
 && apt-get install -y --no-install-recommends \
      bash ca-certificates procps iproute2 wget g++ libc6-dev default-jdk-headless nodejs npm rustc \
      golang-github-stretchr-testify-dev junit4 libhamcrest-java libjavatuples-java \
      ruby php-cli perl libtest-deep-perl libdata-compare-perl lua5.4 lua-unit r-base-core racket gdc iverilog \
      scala kotlin junit5 libgtest-dev sqlite3 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb

# iptables: under JUDGEBOX_ISOLATION=minimal the entrypoint cuts the run uids off the network (an
# owner match); a layer of its own, so the toolchain layer above is not rebuilt for it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb

# Programs run as this unprivileged user; the server (root in the container, no extra capabilities)
# switches to it for every run.
RUN groupadd --system --gid 10001 sandbox \
 && useradd --system --uid 10001 --gid sandbox --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin sandbox

# The program runtime (the `default` profile of sandbox/runtime/profiles.py, docs/guides/runtimes.md):
# the Python and Node.js packages programs import, outside the server's venv. Built from its own
# package (standard library only) before judgebox's sources are copied, so this layer is rebuilt only
# when the profile changes.
FROM toolchains AS runtime
ARG RUNTIME_WHEELS=docker/runtime-wheels
COPY ${RUNTIME_WHEELS}/ /tmp/runtime-wheels/
COPY sandbox/runtime/ /tmp/runtime/judgebox_runtime/
RUN if ls /tmp/runtime-wheels/*.whl >/dev/null 2>&1; then \
      export PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/runtime-wheels; fi \
 && if [ -d /tmp/runtime-wheels/npm-cache ]; then \
      export npm_config_cache=/tmp/runtime-wheels/npm-cache npm_config_offline=true; fi \
 && cd /tmp/runtime \
 && python3 -c "from judgebox_runtime.build import build_runtime; from judgebox_runtime.profiles import PROFILES; \
build_runtime(PROFILES['default'])" \
 && cd / && rm -rf /tmp/runtime /tmp/runtime-wheels /root/.npm /root/.cache

# judgebox's venv, from the wheelhouse (offline) or PyPI, in the final image: a builder stage would
# save the wheels' 43 MB layer but copy the 224 MB venv once more at every rebuild (59 s instead of 22 s).
FROM toolchains
COPY --from=runtime /var/cache/judgebox/ /var/cache/judgebox/
ARG WHEELHOUSE=docker/wheelhouse
ARG EXTRAS=
COPY ${WHEELHOUSE}/ /tmp/wheels/
COPY docker/requirements-image.txt /tmp/src/docker/requirements-image.txt
COPY pyproject.toml setup.py README.md /tmp/src/
COPY judgebox /tmp/src/judgebox
COPY sandbox /tmp/src/sandbox
COPY reward /tmp/src/reward
COPY agent /tmp/src/agent
COPY integrations /tmp/src/integrations
COPY datasets /tmp/src/datasets
COPY configs /tmp/src/configs
RUN python3 -m venv /opt/judgebox \
 && if ls /tmp/wheels/judgebox-*.whl >/dev/null 2>&1; then \
      /opt/judgebox/bin/pip install --no-cache-dir --no-index --find-links=/tmp/wheels \
        "judgebox${EXTRAS:+[$EXTRAS]}" -r /tmp/src/docker/requirements-image.txt; \
    else \
      /opt/judgebox/bin/pip install --no-cache-dir "/tmp/src${EXTRAS:+[$EXTRAS]}" -r /tmp/src/docker/requirements-image.txt; \
    fi \
 && rm -rf /tmp/wheels /tmp/src \
 && /opt/judgebox/bin/python -c "import numpy, pytest, judgebox.sandbox.server"

# Programs' Python is the runtime's (found by `judgebox serve`); the server's venv is not theirs.
ENV PATH=/opt/judgebox/bin:$PATH \
    JUDGEBOX_WORKDIR_ROOT=/tmp/judgebox \
    JUDGEBOX_ISOLATION=full \
    OPENBLAS_NUM_THREADS=1
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/opt/judgebox/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/v1/ping', timeout=4)"]
COPY docker/executor-entrypoint.sh /usr/local/bin/judgebox-executor
# Runs `judgebox serve --host 0.0.0.0 --port 8080` after removing the default routes (see the script).
ENTRYPOINT ["/usr/local/bin/judgebox-executor"]
