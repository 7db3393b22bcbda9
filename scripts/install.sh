#!/usr/bin/env bash
# Install everything judgebox's tests use on a fresh Debian 12 machine (run as root):
# language toolchains, nginx (the gateway in client tests), Docker engine + debootstrap (container
# tests), libseccomp2 (the sandbox's syscall filter) and util-linux (setpriv, for the fail-closed
# test), libssl-dev (C++ programs that use OpenSSL, as MultiPL-E/SandboxFusion link them), the toolchains of
# ruby, php, perl (+ Test::Deep, Data::Compare), lua (+ LuaUnit), R, racket and D (gdc) (MultiPL-E's tests in those languages),
# Icarus Verilog, Scala 2.11, Kotlin, JUnit 5, GoogleTest and SQLite (SandboxFusion's scala, kotlin_script, junit, gtest
# and sql languages), chromium
# (the headless browser the report tests open `judgebox report` pages in, through Playwright), the Debian
# packages of the `default` program runtime (Go's testify, JUnit 4, Hamcrest, javatuples), judgebox
# itself with its test extras, and then the `default` program runtime (the libraries programs may
# import, with tsx and Jest for the typescript and jest languages; built once into $JUDGEBOX_CACHE/runtimes,
# default /var/cache/judgebox, outside the clone).
#
#   bash scripts/install.sh           everything the tests use (~5 min on a fresh machine here, apt ~2.5 of them)
#   bash scripts/install.sh --light   the languages RL code datasets use most (Python, C++, Java, Node.js, Go,
#                                     Rust) and judgebox: no test-only tools (chromium, Docker, nginx) and none
#                                     of MultiPL-E's and SandboxFusion's other toolchains; enough for
#                                     `judgebox eval`/`rollout` on those languages, not for the test suite
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
light=0
if [ "${1:-}" = "--light" ]; then light=1; fi
# the sandbox itself (procps, iproute2, util-linux: setpriv; libseccomp2: its syscall filter) and the
# six most used languages, with the Debian parts of the `default` runtime they read
packages=(g++ libssl-dev default-jdk-headless libjavatuples-java junit4 libhamcrest-java nodejs golang-go
          golang-github-stretchr-testify-dev procps iproute2 util-linux libseccomp2)
if [ "$light" = 0 ]; then
  packages+=(nginx-light docker.io docker-compose debootstrap chromium ruby php-cli libtest-deep-perl lua5.4 lua-unit
             r-base-core racket gdc iverilog libdata-compare-perl scala kotlin junit5 libgtest-dev sqlite3)
fi
need=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
command -v rustc >/dev/null 2>&1 || need+=(rustc)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Go >= 1.22 (a loop variable per iteration, as SandboxFusion's runtime/go/go.mod asks with go 1.22;
# it applies to judgebox's GO111MODULE=off builds too): Debian 12's is 1.19, bookworm-backports has 1.23.
if ! go version 2>/dev/null | grep -Eq 'go1\.(2[2-9]|[3-9][0-9])'; then
  echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/judgebox-backports.list
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -t bookworm-backports golang-go >/dev/null
fi
if [ "$light" = 1 ]; then python3 -m pip install -q -e .; else python3 -m pip install -q -e ".[test]"; fi
python3 -m judgebox.cli runtime build --profile default >/dev/null
# the compile speed-ups of the default workdir root (Go >= 1.20 compiles its standard library into the
# shared build cache: about 40 s of CPU once, instead of in the first minutes of the tests)
python3 -m judgebox.cli runtime prebuild >/dev/null
