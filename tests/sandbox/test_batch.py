"""``POST /run_tests_batch`` and ``SandboxClient.run_tests_batch``: real ``judgebox serve`` processes on
loopback. A batch answers like one ``/run_tests`` per item (same results, order kept); a bad or
overloaded item is that item's ``BatchItemError`` while the others run; only the batch's size is
refused whole (422 naming the limit and its setting); a server without the route (SandboxFusion)
is served one ``run_tests`` per item.
"""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest

from judgebox.sandbox import BatchItemError, LocalSandbox, RunStatus, RunTestsResponse, SandboxClient
from judgebox.sandbox.models import RunTestsBatchResponse
from tests.conftest import HTTP_TIMEOUT

pytestmark = pytest.mark.timeout(300)

SQUARE = "n = int(input())\nprint(n * n)"
CASES = [{"stdin": "2\n"}, {"stdin": "3\n"}]
CPP = "#include <iostream>\nint main(){long n; std::cin >> n; std::cout << %s << std::endl; %s}"
#: right, wrong, crashing and not compiling programs in two languages
MIXED = [
    {"code": SQUARE, "language": "python", "cases": CASES},
    {"code": "n = int(input())\nprint(n + n)", "language": "python", "cases": CASES},
    {"code": "raise SystemExit(3)", "language": "python", "cases": CASES},
    {"code": "print(", "language": "python", "cases": CASES},
    {"code": CPP % ("n * n", ""), "language": "cpp", "cases": CASES},
    {"code": CPP % ("n + n", ""), "language": "cpp", "cases": CASES},
    {"code": CPP % ("n", "int *p = nullptr; return *p;"), "language": "cpp", "cases": CASES},
    {"code": "int main( {", "language": "cpp", "cases": CASES},
]
SLEEP = {"code": "import time\ntime.sleep(1.5)\nprint('done')", "language": "python", "run_timeout": 10,
         "cases": [{"stdin": ""}]}
FAST = {"backoff_initial": 0.1, "backoff_max": 1.0, "backoff_jitter": 0.1}


def shape(r):
    """What must not differ between a batch item and its single call (timings and paths may)."""
    if isinstance(r, BatchItemError):
        return ("error", r.index, r.status_code)
    return (r.status, r.compile_result and (r.compile_result.status, r.compile_result.return_code),
            [x and (x.status, x.return_code, x.stdout) for x in r.run_results])


def metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def post_batch(url: str, requests: list) -> httpx.Response:
    return httpx.post(f"{url}/run_tests_batch", json={"requests": requests}, timeout=180)


def test_batch_equals_single_calls_in_order_over_http(live_server):
    """Mixed python/cpp programs (right, wrong, crashing, not compiling): the batch's results, in
    order, are those of one /run_tests each; the raw answer parses as RunTestsBatchResponse."""
    with SandboxClient(live_server) as client:
        singles = [client.run_tests(r) for r in MIXED]
        batch = client.run_tests_batch(MIXED)
        assert client.endpoints[0]["supports_batch"] is not False
    raw = post_batch(live_server, MIXED)
    assert raw.status_code == 200
    assert [shape(r) for r in batch] == [shape(r) for r in singles]
    assert [shape(r) for r in RunTestsBatchResponse.model_validate(raw.json()).results] == [shape(r) for r in singles]
    assert [r.status for r in singles] == [RunStatus.Success, RunStatus.Success, RunStatus.Failed, RunStatus.Failed] * 2


def test_batch_equals_single_calls_embedded(local_sandbox):
    """The embedded sandbox's batch gives the results of one run_tests each, in order."""
    assert [shape(r) for r in local_sandbox.run_tests_batch(MIXED)] == [shape(local_sandbox.run_tests(r)) for r in MIXED]


def test_bad_item_is_answered_with_its_index_and_the_others_run(live_server):
    """An unknown language and a missing ``cases``: those items are 422 errors carrying their index
    and naming the field; the items around them ran."""
    requests = [MIXED[0], {"code": "x", "language": "nope", "cases": CASES}, MIXED[4], {"code": "x", "language": "python"}]
    raw = post_batch(live_server, requests)
    assert raw.status_code == 200
    results = RunTestsBatchResponse.model_validate(raw.json()).results
    assert [type(r) for r in results] == [RunTestsResponse, BatchItemError, RunTestsResponse, BatchItemError]
    assert (results[1].index, results[1].status_code) == (1, 422) and "language" in results[1].detail
    assert (results[3].index, results[3].status_code) == (3, 422) and "cases" in results[3].detail
    assert results[0].status == results[2].status == RunStatus.Success
    with SandboxClient(live_server) as client:  # the client answers a bad item itself, with the same index
        got = client.run_tests_batch(requests)
    assert [shape(r) for r in got] == [shape(r) for r in results]


def test_batch_limits_are_422_naming_the_limit_and_the_setting(live_server_factory):
    srv = live_server_factory("--max-batch-items", "2", "--max-batch-bytes", "4096")
    many = post_batch(srv.url, [MIXED[0]] * 3)
    assert many.status_code == 422
    assert "max_batch_items=2" in many.json()["detail"] and "JUDGEBOX_MAX_BATCH_ITEMS" in many.json()["detail"]
    big = post_batch(srv.url, [{**MIXED[0], "code": SQUARE + "\n#" + "x" * 5000}])
    assert big.status_code == 422
    assert "max_batch_bytes=4096" in big.json()["detail"] and "JUDGEBOX_MAX_BATCH_BYTES" in big.json()["detail"]
    assert post_batch(srv.url, [MIXED[0]] * 2).status_code == 200
    # a chunked body has no Content-Length: it is counted as it arrives
    body = httpx.Request("POST", "/", json={"requests": [{**MIXED[0], "code": SQUARE + "\n#" + "x" * 5000}]}).read()
    chunked = httpx.post(f"{srv.url}/run_tests_batch", content=iter([body[:100], body[100:]]),
                         headers={"content-type": "application/json"}, timeout=60)
    assert chunked.status_code == 422 and "max_batch_bytes=4096" in chunked.json()["detail"]
    # the client packs within its own limits, and sends a request too large for a batch alone
    with SandboxClient(srv.url, batch_max_items=2, batch_max_bytes=4096) as client:
        got = client.run_tests_batch([MIXED[0]] * 5 + [{**MIXED[0], "code": SQUARE + "\n#" + "x" * 5000}])
    assert [r.status for r in got] == [RunStatus.Success] * 6
    # a client whose chunks are over the server's limits: the server refuses the chunk as a whole,
    # which is not the items' fault: each goes alone (never a request error, i.e. a masked reward)
    with SandboxClient(srv.url, batch_max_items=8) as client:
        got = client.run_tests_batch([MIXED[0]] * 5)
    assert [r.status for r in got] == [RunStatus.Success] * 5


def test_overload_is_per_item_and_counted_like_single_calls(live_server_factory):
    """One slot, queue_timeout 0.3 s, three 1.5 s items: one runs, the two others are their own 504
    (with retry_after), not the batch's; the metrics count one run and two rejections, as three
    single calls would."""
    srv = live_server_factory("--max-concurrency", "1", "--queue-timeout", "0.3")
    raw = post_batch(srv.url, [SLEEP] * 3)
    assert raw.status_code == 200
    results = RunTestsBatchResponse.model_validate(raw.json()).results
    ran = [r for r in results if isinstance(r, RunTestsResponse)]
    refused = [r for r in results if isinstance(r, BatchItemError)]
    assert len(ran) == 1 and ran[0].run_results[0].stdout == "done\n"
    assert len(refused) == 2 and all(e.status_code == 504 and e.retry_after >= 1 for e in refused)
    assert all(results[e.index] is e for e in refused)
    assert all("queue_timeout=0.3" in e.detail for e in refused)
    page = httpx.get(f"{srv.url}/metrics", timeout=HTTP_TIMEOUT).text
    assert metric(page, 'judgebox_runs_total{language="python",status="Success"}') == 1
    assert metric(page, 'judgebox_rejections_total{reason="queue_timeout"}') == 2
    assert metric(page, 'judgebox_run_seconds_count{language="python"}') == 1
    # the client sends the refused items again until each ran ...
    with SandboxClient(srv.url, max_attempts=6, **FAST) as client:
        assert [shape(r) for r in client.run_tests_batch([SLEEP] * 3)] == [shape(ran[0])] * 3
    # ... and one that never got a slot stays an error, never a verdict
    with SandboxClient(srv.url, max_attempts=1, **FAST) as client:
        once = client.run_tests_batch([SLEEP] * 3)
    assert sorted(type(r).__name__ for r in once) == ["BatchItemError", "BatchItemError", "RunTestsResponse"]
    assert all(r.status_code == 504 and once[r.index] is r for r in once if isinstance(r, BatchItemError))


def test_async_face_gives_the_sync_results(live_server):
    async def batch():
        with SandboxClient(live_server) as client:
            return await client.arun_tests_batch(MIXED[:4])

    with SandboxClient(live_server) as client:
        expected = client.run_tests_batch(MIXED[:4])
    assert [shape(r) for r in asyncio.run(batch())] == [shape(r) for r in expected]


def test_embedded_client_batch_uses_the_engine():
    sandbox = LocalSandbox()
    client = SandboxClient("", local=sandbox)
    got = client.run_tests_batch([MIXED[0], {"code": "x", "language": "python"}])
    assert got[0].status == RunStatus.Success
    assert isinstance(got[1], BatchItemError) and (got[1].index, got[1].status_code) == (1, 422)


def test_an_items_request_error_in_the_engine_keeps_its_status_embedded():
    """Files that do not fit the run's disk quota are the request's fault (422), as over HTTP: an
    embedded batch must not answer them as an engine failure (500, which the judge would take for
    an infrastructure error)."""
    blob = "A" * (3 << 20)  # 2.25 MiB once decoded, over a 1 MiB quota
    big = {**MIXED[0], "disk_limit_MB": 1, "files": {"big.bin": blob}}
    got = LocalSandbox().run_tests_batch([MIXED[0], big])
    assert got[0].status == RunStatus.Success
    assert isinstance(got[1], BatchItemError) and (got[1].index, got[1].status_code) == (1, 422), got[1]


@pytest.mark.parametrize("requests", ["abc", None, 5, MIXED[0]], ids=["str", "none", "int", "one-dict"])
def test_something_other_than_a_list_of_requests_is_a_type_error_naming_the_argument(live_server, requests):
    """A string was iterated into one 422 item per character; ``None`` was a bare "not iterable"."""
    with SandboxClient(live_server) as client:
        with pytest.raises(TypeError, match=r"^requests: a list of run_tests requests .*wrap a single request"):
            client.run_tests_batch(requests)
    with pytest.raises(TypeError, match=r"^requests: a list of run_tests requests"):
        LocalSandbox().run_tests_batch(requests)
    assert [shape(r) for r in LocalSandbox().run_tests_batch(iter([MIXED[0]]))] == \
        [shape(r) for r in LocalSandbox().run_tests_batch([MIXED[0]])]  # any iterable still goes


def test_a_bad_item_is_worded_alike_by_the_server_the_client_and_the_embedded_sandbox(live_server):
    """The client prefixed ``invalid RunTestsRequest:`` and named a non-dict item's field ``''``;
    the embedded sandbox and the server say ``body:``. One wording everywhere."""
    bad = [{"code": "x", "language": "nope", "cases": CASES}, 5, {"language": "python"}]
    server = [r.detail for r in RunTestsBatchResponse.model_validate(post_batch(live_server, bad).json()).results]
    assert server[1].startswith("body: ") and server[2].startswith("code: Field required; cases: Field required")
    with SandboxClient(live_server) as client:
        assert [r.detail for r in client.run_tests_batch(bad)] == server
    assert [r.detail for r in LocalSandbox().run_tests_batch(bad)] == server


# ---------------------------------------------------------------- a batch's memory (issue 37, finding 7)
FLOOD = {"code": "import sys\nc = '\\x01' * 65536\nwhile True:\n    sys.stdout.write(c)\n    sys.stderr.write(c)\n",
         "language": "python", "run_timeout": 0.5, "cases": [{}, {}]}


def sent_bytes(r: RunTestsResponse) -> int:
    """The bytes of JSON text the programs' output of ``r`` takes in an answer."""
    return sum(len(json.dumps(s, ensure_ascii=False).encode()) - 2
               for x in r.run_results if x for s in (x.stdout, x.stderr))


def test_the_response_budget_counts_the_bytes_sent():
    """Finding 7: ``response_limit_bytes`` counted the program's bytes, and each control character
    is 6 bytes of JSON (``\\u0001``): a 1 MiB budget sent 6 MiB. It counts what is sent."""
    r = LocalSandbox(response_limit_bytes=1 << 20).run_tests(FLOOD)
    assert sent_bytes(r) <= 1 << 20 and r.run_results[0].stdout.startswith("\x01")
    assert r.run_results[-1].stderr_truncated


def test_a_batch_holds_a_bounded_answer_and_refused_items_are_sent_again(live_server_factory):
    """Finding 7: every item of a batch held its own budget until the whole answer was built at the
    end (+1 GiB of server memory for 4 items of ``"\\x01"`` floods, +3 GiB for 16;
    ``tests/bench/bench_batch_memory.py``). A batch's answer now holds at most (max_concurrency + 1)
    item budgets: items past it are their own 504 with ``Retry-After`` (not run), which
    ``SandboxClient`` sends again until each has its result."""
    server = live_server_factory("--max-concurrency", "1", "--response-limit-bytes", str(1 << 20),
                                 "--fetch-limit-bytes", "1024")
    with httpx.stream("POST", f"{server.url}/run_tests_batch", json={"requests": [FLOOD] * 8}, timeout=300) as raw:
        body = b"".join(raw.iter_raw())
    assert raw.status_code == 200
    assert len(body) <= 2 * ((1 << 20) + 1024) + (64 << 10)  # was 8 items x 6 MiB
    results = RunTestsBatchResponse.model_validate_json(body).results
    ran = [r for r in results if isinstance(r, RunTestsResponse)]
    refused = [r for r in results if isinstance(r, BatchItemError)]
    assert ran and refused and len(ran) + len(refused) == 8
    assert all(sent_bytes(r) <= 1 << 20 for r in ran)
    assert all(e.status_code == 504 and e.retry_after >= 1 and "max_concurrency + 1" in e.detail for e in refused)
    assert 'judgebox_rejections_total{reason="batch_budget"}' in httpx.get(f"{server.url}/metrics", timeout=HTTP_TIMEOUT).text
    with SandboxClient(server.url, **FAST) as client:
        got = client.run_tests_batch([FLOOD] * 4)
    assert [type(r) for r in got] == [RunTestsResponse] * 4
    assert all(r.run_results[0].stdout.startswith("\x01") and sent_bytes(r) <= 1 << 20 for r in got)
