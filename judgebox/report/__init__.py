"""``judgebox report``: one self-contained HTML page for an eval or a rollout.

:func:`write_report` reads a results jsonl (``judgebox eval``), a trajectories jsonl
(``judgebox rollout``) or a verl rollout dump (:mod:`judgebox.report.records`, each record's fields
checked by :mod:`judgebox.report.validate`, a summary by :mod:`judgebox.report.summary`), and writes a page
with the overview (pass@k, verdicts, unscorable samples apart from wrong answers, stop reasons, tool
calls, timing, per-language splits, every summary field), a per-problem drill-down (prompt, code
judged, each test's verdict, expected vs actual diff, stderr tail, harness isolation), a trajectory
viewer (policy vs observation tokens from ``response_mask``, logprob shading, tool calls with their
observations, final answer, reward, stop reason) and, with a second run, the per-problem differences
(regressions first). The page fetches nothing: open it from disk or an artifact store.

Modules: ``records`` (read), ``validate`` (field checks), ``summary`` (the summary, checked),
``overview`` (the numbers, the comparison), ``samples`` (one record's view, the bounded diff),
``tokens`` (token texts), ``build`` (the page). It lives above :mod:`judgebox.agent` (it reads
agent records) beside the CLI.
"""

from judgebox.report.build import build_page, write_report
from judgebox.report.records import Records, read_records
from judgebox.report.summary import read_summary

__all__ = ["Records", "build_page", "read_records", "read_summary", "write_report"]
