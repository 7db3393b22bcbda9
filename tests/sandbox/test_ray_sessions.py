"""Sessions through ``ray://`` on the shared Ray cluster (``ray_fleet``): a session lives on one
executor actor (its id names the actor) and keeps its state from cell to cell; a session whose node
is removed reports its state lost, as a session on a restarted HTTP server does (``SessionNotFound``),
and is never moved to another executor."""

from __future__ import annotations

import pytest

from judgebox.sandbox import SandboxClient, SessionNotFound

pytestmark = pytest.mark.integration


def test_a_session_keeps_its_state_over_20_cells_on_one_actor(ray_fleet):
    with SandboxClient("ray://") as client, client.create_session() as session:
        executor = session.endpoint.rsplit("#", 1)[1]
        assert session.session_id.startswith(f"{executor}-")
        session.run("total = 0")
        for i in range(1, 21):
            r = session.run(f"total += {i}\nprint(total)")
            assert (r.stdout, r.state) == (f"{i * (i + 1) // 2}\n", "kept")
        live = {e["name"]: e["sessions"] for e in ray_fleet.pool.stats()["executors"]}
        assert live[executor] == 1
        assert [s.session_id for s in client.list_sessions().sessions] == [session.session_id]
    assert sum(e["sessions"] for e in ray_fleet.pool.stats()["executors"]) == 0


def test_a_session_on_a_removed_node_reports_its_state_lost(ray_fleet):
    head = ray_fleet.cluster.head_node.node_id
    with SandboxClient("ray://") as client:
        opened = []
        try:
            while True:  # sessions spread over the executors: open until one is on a worker node
                opened.append(client.create_session())
                node = ray_fleet.executors()[opened[-1].endpoint.rsplit("#", 1)[1]]
                if node != head:
                    break
            session = opened[-1]
            assert session.run("x = 41").state == "kept"
            ray_fleet.remove_worker(node)
            with pytest.raises(SessionNotFound, match="state is lost") as lost:
                session.run("print(x + 1)")
            assert lost.value.session_id == session.session_id
        finally:
            for s in opened:
                s.close()
            ray_fleet.restore()
