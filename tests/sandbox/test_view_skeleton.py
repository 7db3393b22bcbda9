"""The read-only skeleton of the filesystem view, shared by every server on one workdir root.

Executors started together on one root (a Ray pool on one host, several ``judgebox serve``) each
find no skeleton and build one; the first rename wins. A later one used to remove the winner's
complete skeleton while the winner's first run was mounting it ("Exception occurred in preexec_fn"
at start, one executor of four dead in CI). These tests replay the loser's steps in order.
"""

from __future__ import annotations

import os

from judgebox.sandbox.isolation.view import _COMPLETE, FilesystemView


def _builds_left(root) -> list[str]:
    return [n for n in os.listdir(root) if n.startswith(".view-build-")]


def test_a_server_that_loses_the_race_leaves_the_winners_skeleton_in_place(tmp_path):
    winner = FilesystemView(str(tmp_path), [])
    inode = os.stat(winner.root).st_ino
    # the second server looked before the winner's rename, so it builds its own and tries to place it
    winner._build()
    assert os.stat(winner.root).st_ino == inode
    assert os.path.isfile(os.path.join(winner.root, _COMPLETE))
    assert os.path.isfile(os.path.join(winner.root, "etc", "hosts"))
    assert _builds_left(tmp_path) == []


def test_a_partial_skeleton_is_replaced_by_a_complete_one(tmp_path):
    first = FilesystemView(str(tmp_path), [])
    os.remove(os.path.join(first.root, _COMPLETE))  # what an interrupted removal leaves
    with open(os.path.join(first.root, "leftover"), "w") as f:
        f.write("x")
    again = FilesystemView(str(tmp_path), [])
    assert again.root == first.root
    assert os.path.isfile(os.path.join(again.root, _COMPLETE))
    assert not os.path.exists(os.path.join(again.root, "leftover"))
    assert _builds_left(tmp_path) == []
