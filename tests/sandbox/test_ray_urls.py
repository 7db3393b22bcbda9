"""``ray://`` wherever a sandbox URL goes: what is refused before any cluster is reached (a ``ray://``
URL beside HTTP ones, a malformed one, Ray missing), named by the argument or variable it came from."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from judgebox.cli import UsageError, main
from judgebox.cli.sandboxes import checked_client
from judgebox.sandbox import SandboxClient, SandboxRequestError
from judgebox.sandbox.ray.cluster import parse_ray_url


def test_a_ray_url_beside_http_urls_is_refused_naming_where_it_came_from(monkeypatch):
    with pytest.raises(SandboxRequestError, match="endpoints: a ray:// URL cannot be mixed"):
        SandboxClient(["ray://", "http://127.0.0.1:9"])
    monkeypatch.setenv("JUDGEBOX_SANDBOX_URL", "http://127.0.0.1:9,ray://")
    with pytest.raises(SandboxRequestError, match="JUDGEBOX_SANDBOX_URL: a ray:// URL cannot be mixed"):
        SandboxClient()


def test_eval_and_rollout_name_the_flag_of_a_mixed_sandbox_url():
    with pytest.raises(UsageError, match="^--sandbox-url: a ray:// URL cannot be mixed"):
        checked_client(["ray://", "http://127.0.0.1:9"])


@pytest.mark.parametrize("url, address", [("ray://", None), ("ray://10.0.0.5:6379", "10.0.0.5:6379"),
                                          ("ray://head:6379/run_code", "head:6379")])
def test_a_ray_url_names_the_cluster_address(url, address):
    assert parse_ray_url(url) == address


@pytest.mark.parametrize("url", ["ray://head", "ray://head:port", "ray://head:6379/x"])
def test_a_malformed_ray_url_is_refused(url):
    with pytest.raises(SandboxRequestError, match="ray://HOST:PORT"):
        parse_ray_url(url)


def test_ray_url_without_ray_installed_names_the_extra():
    script = ("import sys; sys.modules['ray'] = None\n"  # `import ray` now fails as when it is not installed
              "from judgebox.sandbox import SandboxClient, SandboxRequestError\n"
              "try:\n    SandboxClient('ray://')\nexcept SandboxRequestError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'pip install "judgebox[ray]"' in out.stdout


@pytest.mark.parametrize("fields, named", [({"resource": "CPU"}, "resource='CPU'"), ({"resource": ""}, "resource=''"),
                                           ({"cpus_per_executor": 0}, "cpus_per_executor=0"),
                                           ({"per_node": 0}, "per_node=0")])
def test_a_bad_pool_config_is_refused_naming_the_field(fields, named):
    from judgebox.sandbox.ray import PoolConfig

    with pytest.raises(ValueError, match=re.escape(named)):
        PoolConfig(**fields)


def test_ray_up_refuses_a_bad_resource_before_reaching_a_cluster(capsys, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")  # nothing there: the flag is refused first
    with pytest.raises(SystemExit) as exit_:
        main(["ray", "up", "--resource", "GPU"])
    assert exit_.value.code == 1
    assert "judgebox ray up: resource='GPU': name a custom resource" in capsys.readouterr().err
