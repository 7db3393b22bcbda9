// judgebox report: our own script (no third-party JS). Every record text goes in with textContent,
// never as markup. Data: <script type="application/octet-stream"> blocks of base64(gzip(JSON)).
"use strict";
(function () {
  const UNSCORED = { infra_error: "infrastructure error: not a wrong answer (re-run to score it)",
                     test_data_error: "test data error: the dataset's tests are unusable, not the solution's fault" };
  const PAGE = 200;
  const cache = new Map();
  let HEAD = null, VOCAB = null;

  async function unpack(id) {
    if (cache.has(id)) return cache.get(id);
    if (!document.getElementById(id) && document.readyState === "loading")  // a block the parser has not reached yet
      await new Promise(resolve => document.addEventListener("DOMContentLoaded", resolve, { once: true }));
    const text = document.getElementById(id).textContent.trim();
    const bin = atob(text), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const value = JSON.parse(await new Response(stream).text());
    cache.set(id, value);
    return value;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v; else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v); else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
    return node;
  }
  const fmt = (x, d = 4) => (x === null || x === undefined) ? "—" : (typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(d)) : String(x));
  const pct = (c, n) => n ? (100 * c / n).toFixed(1) + " %" : "—";

  function table(headers, rows, attrs) {
    const t = el("table", attrs || {});
    t.append(el("tr", {}, ...headers.map(h => el("th", { class: h.num ? "num" : null, text: h.label || h }))));
    for (const r of rows) t.append(r);
    return t;
  }
  function kv(obj, attrs, rowAttr) {
    return table(["", ""], Object.entries(obj).map(([k, v]) =>
      el("tr", { [rowAttr || "data-key"]: k }, el("td", { text: k }),
         el("td", { class: typeof v === "number" ? "num" : null, text: typeof v === "object" && v !== null ? JSON.stringify(v) : fmt(v) }))), attrs);
  }
  function barCell(count, total, cls) {
    return el("td", {}, el("span", { class: "bar " + (cls || ""), style: `width:${Math.round(200 * count / Math.max(total, 1))}px` }));
  }

  function show(id) {
    for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== id;
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.getAttribute("href") === "#" + id);
    document.getElementById("loading").hidden = true;
  }

  function renderOverview() {
    const o = HEAD.overview, s = o.summary || {}, root = document.getElementById("overview");
    root.replaceChildren();
    const cards = el("div", { class: "cards" });
    const card = (label, value, key) => cards.append(el("div", { class: "card", "data-card": key }, el("div", { class: "v", text: fmt(value) }), el("div", { class: "muted", text: label })));
    card("problems", HEAD.problems.length, "problems");
    card("samples", o.n_records, "samples");
    if (s.n_passed !== undefined) card("passed / scored", `${s.n_passed} / ${s.n_scored}`, "passed");
    const unscorable = Object.values(o.unscorable).reduce((a, b) => a + b, 0);
    card("unscorable (not wrong answers)", unscorable, "unscorable");
    if (s.mean_reward !== undefined && s.mean_reward !== null) card("mean reward", s.mean_reward, "mean_reward");
    if (o.mean_score !== undefined) card("mean score", o.mean_score, "mean_score");
    root.append(cards);

    if (s.pass_at_k && Object.keys(s.pass_at_k).length) {
      root.append(el("h2", { text: "pass@k" }));
      const rows = Object.entries(s.pass_at_k).map(([k, v]) => el("tr", { "data-k": k }, el("td", { text: k }), el("td", { class: "num", text: fmt(v) }),
        el("td", { class: "num", text: s.pass_at_k_attempted && s.pass_at_k_attempted[k] !== undefined ? fmt(s.pass_at_k_attempted[k]) : "" })));
      for (const [k, why] of Object.entries(s.pass_at_k_omitted || {})) rows.push(el("tr", { "data-k": k }, el("td", { text: k }), el("td", { text: "not reported: " + why, colspan: 2 })));
      // without the run's summary the page knows only the problems in the file, not the benchmark's
      const whole = o.source.startsWith("the summary") ? "whole benchmark" : "problems in this file (no --summary)";
      root.append(table(["k", { label: whole, num: 1 }, { label: "attempted problems only", num: 1 }], rows, { id: "passk" }));
    }
    root.append(el("h2", { text: "Verdicts" }));
    const total = o.n_records;
    root.append(table(["verdict", { label: "samples", num: 1 }, "", ""], Object.entries(o.verdicts).map(([v, n]) =>
      el("tr", { "data-verdict": v }, el("td", { class: "verdict-" + v, text: v }), el("td", { class: "num count", text: n }),
         barCell(n, total, v === "accepted" ? "ok" : UNSCORED[v] ? "infra" : "bad"),
         el("td", { class: "muted", text: UNSCORED[v] || "" }))), { id: "verdicts" }));
    if (unscorable) {
      root.append(el("h2", { text: "Unscorable samples (left out of pass@k, never counted as wrong)" }));
      root.append(kv(o.unscorable, { id: "unscorable" }, "data-verdict"));
    }
    if (o.stop_reasons) {
      root.append(el("h2", { text: "Trajectories" }));
      root.append(kv(o.stop_reasons, { id: "stop-reasons" }, "data-stop"));
      root.append(kv({ "tool calls per trajectory (histogram)": o.tool_calls, "parse errors": o.parse_errors, "tool errors": o.tool_errors,
                       "tool timeouts": o.tool_timeouts, "policy tokens": o.policy_tokens, "observation tokens": o.observation_tokens }, { id: "agent-counts" }));
    }
    for (const [field, split] of Object.entries(o.splits)) {
      if (!Object.keys(split).length) continue;
      root.append(el("h2", { text: "By " + field }));
      root.append(table([field, { label: "samples", num: 1 }, { label: "scored", num: 1 }, { label: "passed", num: 1 }, { label: "pass rate", num: 1 }, { label: "unscorable", num: 1 }],
        Object.entries(split).map(([k, c]) => el("tr", { ["data-" + field]: k }, el("td", { text: k }), el("td", { class: "num", text: c.samples || 0 }),
          el("td", { class: "num", text: c.scored || 0 }), el("td", { class: "num", text: c.passed || 0 }), el("td", { class: "num", text: pct(c.passed || 0, c.scored || 0) }),
          el("td", { class: "num", text: c.unscorable || 0 })))));
    }
    if (Object.keys(o.elapsed_s).length) {
      root.append(el("h2", { text: "Timing (seconds per sample, judging)" }));
      root.append(kv(o.elapsed_s, { id: "timing" }));
    }
    root.append(el("h2", { text: "Summary fields" }), el("p", { class: "muted", text: "source: " + o.source }));
    root.append(kv(Object.fromEntries(Object.entries(s).filter(([k]) => k !== "pass_at_k")), { id: "summary-fields" }, "data-field"));
    if (o.torn_line) root.append(el("p", { class: "muted", text: `${HEAD.file}:${o.torn_line}: a torn last line (cut by a kill) was skipped` }));
  }

  function problemRow(p) {
    const link = el("a", { href: "#p/" + p.chunk, text: p.task_id });
    return el("tr", { "data-task": p.task_id }, el("td", {}, link), el("td", { class: "num", text: p.samples }), el("td", { class: "num", text: p.n }),
      el("td", { class: "num", text: p.c }), el("td", { class: "num", text: pct(p.c, p.n) }),
      el("td", { class: "num", text: p.reward === null || p.reward === undefined ? "" : fmt(p.reward, 3) }),
      el("td", { text: Object.entries(p.verdicts).map(([v, n]) => `${v} ${n}`).join(", ") }));
  }

  function renderProblems() {
    const root = document.getElementById("problems");
    root.replaceChildren();
    const input = el("input", { type: "search", placeholder: "filter by task id or verdict" });
    let shown = PAGE;
    const t = table(["task", { label: "samples", num: 1 }, { label: "scored", num: 1 }, { label: "passed", num: 1 }, { label: "pass rate", num: 1 }, { label: "mean reward", num: 1 }, "verdicts"], [], { id: "problem-list" });
    const more = el("a", { class: "more" });
    function fill() {
      const q = input.value.trim().toLowerCase();
      const rows = HEAD.problems.filter(p => !q || p.task_id.toLowerCase().includes(q) || Object.keys(p.verdicts).some(v => v.includes(q)));
      while (t.rows.length > 1) t.deleteRow(1);
      for (const p of rows.slice(0, shown)) t.append(problemRow(p));
      more.textContent = rows.length > shown ? `show more (${rows.length - shown} left)` : "";
    }
    input.addEventListener("input", () => { shown = PAGE; fill(); });
    more.addEventListener("click", () => { shown += PAGE; fill(); });
    root.append(el("div", { class: "filter" }, input), t, more);
    fill();
  }

  function pre(text, cls) { return el("pre", { class: cls || null, text: text === null || text === undefined ? "" : String(text) }); }

  function verdictBadge(s) {
    const span = el("span", {}, el("b", { class: "verdict-" + s.verdict, text: s.verdict === null || s.verdict === undefined ? "(no verdict)" : s.verdict }));
    if (UNSCORED[s.verdict]) span.append(el("span", { class: "label infra-label", text: UNSCORED[s.verdict] }));
    return span;
  }

  function testsTable(tests) {
    const wrap = el("div", { class: "tests" });
    wrap.append(table(["test", "verdict", { label: "time (s)", num: 1 }, { label: "CPU (s)", num: 1 }, { label: "exit", num: 1 }, "harness isolation"],
      tests.map(t => el("tr", { "data-test": t.index }, el("td", { text: t.index }), el("td", { class: "verdict-" + t.verdict, text: t.verdict }),
        el("td", { class: "num", text: fmt(t.execution_time, 3) }), el("td", { class: "num", text: fmt(t.cpu_time, 3) }),
        el("td", { class: "num", text: fmt(t.return_code) }), el("td", { text: t.harness_isolation || "" })))));
    for (const t of tests) {
      if (t.verdict === "accepted") continue;
      const box = el("div", { class: "failed-test", "data-test": t.index }, el("h3", { text: `test ${t.index}: ${t.verdict}` }));
      if (t.input) box.append(el("div", { class: "muted", text: "input" }), pre(t.input));
      if (t.diff) {
        const d = el("pre", { class: "diff" });
        for (const [op, line] of t.diff) d.append(el("span", { class: op === "-" ? "d-del" : op === "+" ? "d-add" : op === "…" ? "d-cut" : null, text: (op === "…" ? "" : op + " ") + line }));
        box.append(el("div", { class: "muted", text: "expected (−) vs actual (+)" }), d);
      } else {
        if (t.expected) box.append(el("div", { class: "muted", text: "expected" }), pre(t.expected));
        if (t.stdout) box.append(el("div", { class: "muted", text: "stdout" }), pre(t.stdout));
      }
      if (t.stderr) box.append(el("div", { class: "muted", text: "stderr (tail)" }), pre(t.stderr, "stderr"));
      wrap.append(box);
    }
    return wrap;
  }

  async function renderProblem(chunk) {
    const data = await unpack("c" + chunk), root = document.getElementById("problem");
    root.replaceChildren(el("h2", { text: data.task_id }));
    if (data.prompt !== null && data.prompt !== undefined) root.append(el("h3", { text: "Prompt" }), pre(data.prompt, "prompt"));
    root.append(el("h3", { text: `Samples (${data.samples.length})` }));
    data.samples.forEach((s, j) => {
      const box = el("div", { class: "sample", "data-sample": s.i });
      const headLine = el("div", {}, el("b", { text: `sample ${s.i} ` }), verdictBadge(s),
        s.n_total !== null && s.n_total !== undefined ? el("span", { class: "muted", text: `  ${s.n_passed}/${s.n_total} tests` }) : null,
        s.reward !== undefined ? el("span", { class: "muted", text: `  reward ${fmt(s.reward, 3)}` }) : null,
        s.stop_reason ? el("span", { class: "muted", text: `  stop: ${s.stop_reason}` }) : null);
      box.append(headLine);
      if (s.response_mask || s.output !== undefined) box.append(el("a", { href: `#t/${chunk}/${j}`, class: "open-trajectory", text: "open trajectory" }));
      if (s.message) box.append(el("div", { class: "muted", text: "message" }), pre(s.message, "message"));
      if (s.program !== null && s.program !== undefined) box.append(el("div", { class: "muted", text: "code judged" + (s.language ? ` (${s.language})` : "") }), pre(s.program, "program"));
      if (s.tests && s.tests.length) box.append(testsTable(s.tests));
      root.append(box);
    });
    show("problem");
  }

  function renderTokens(s) {
    // one streaming decoder over prompt then response: a character split over two tokens shows once
    const box = el("div", { class: "token-view" }), dec = new TextDecoder("utf-8");
    const shade = document.getElementById("shade") && document.getElementById("shade").checked;
    const piece = (id) => { const str = VOCAB[String(id)]; const b = new Uint8Array(str === undefined ? 0 : str.length); for (let i = 0; i < b.length; i++) b[i] = str.charCodeAt(i); return b; };
    const prompt = el("div", { class: "tokens prompt-tokens" });
    for (const id of s.prompt_ids || []) prompt.append(el("span", { class: "tok q", text: dec.decode(piece(id), { stream: true }) }));
    const response = el("div", { class: "tokens response-tokens" }), frag = document.createDocumentFragment();
    (s.response_ids || []).forEach((id, k) => {
      const policy = s.response_mask[k] === 1;
      const span = el("span", { class: "tok " + (policy ? "p" : "o"), text: dec.decode(piece(id), { stream: true }) });
      if (policy && shade && s.logprobs) span.style.background = `rgba(220, 60, 40, ${Math.min(0.85, 1 - Math.exp(s.logprobs[k])).toFixed(2)})`;
      if (s.logprobs) span.title = `id ${id}  logprob ${s.logprobs[k]}`;
      frag.append(span);
    });
    response.append(frag);
    box.append(el("details", { class: "prompt" }, el("summary", { text: `prompt: ${(s.prompt_ids || []).length} tokens (open)` }), prompt), response);
    return box;
  }

  async function renderTrajectory(chunk, j) {
    const data = await unpack("c" + chunk), s = data.samples[j], root = document.getElementById("trajectory");
    if (HEAD.tokens && !VOCAB) VOCAB = await unpack("d-vocab");
    root.replaceChildren(el("h2", {}, el("a", { href: "#p/" + chunk, text: data.task_id }), ` · sample ${s.i}`));
    const policy = (s.response_mask || []).reduce((a, b) => a + b, 0);
    root.append(el("div", { class: "traj-head" }, verdictBadge(s),
      el("span", { class: "muted", text: `  reward ${fmt(s.reward, 3)}  ·  stop reason ${s.stop_reason || "—"}  ·  ${s.tool_calls || 0} tool calls  ·  ` }),
      s.response_mask ? el("span", { class: "muted", "data-policy-tokens": policy, text: `${policy} policy tokens, ${s.response_mask.length - policy} observation tokens` }) : null));
    if (s.reward_info !== undefined && s.reward_info !== null) root.append(el("div", { class: "muted", text: "reward info" }), pre(typeof s.reward_info === "string" ? s.reward_info : JSON.stringify(s.reward_info, null, 1)));
    if (s.response_mask) {
      root.append(el("h3", { text: "Token stream" }));
      if (HEAD.tokens) {
        const shade = el("input", { type: "checkbox", id: "shade", disabled: s.logprobs ? null : "disabled" });
        shade.addEventListener("change", () => root.querySelector(".token-view").replaceWith(renderTokens(s)));
        root.append(el("div", { class: "legend" }, el("span", { class: "tok q", text: "prompt" }), el("span", { class: "tok p", text: "policy (response_mask 1)" }),
          el("span", { class: "tok o", text: "observation (response_mask 0)" }), el("label", {}, shade, s.logprobs ? " shade policy tokens by logprob (redder = less likely)" : " no logprobs recorded")),
          el("p", { class: "muted", text: `token texts: the tokenizer of ${HEAD.tokens}` }));
        root.append(renderTokens(s));
      } else {
        root.append(el("p", { class: "muted no-tokens", text: "no tokenizer: the token view needs `judgebox report --tokenizer MODEL` (the summary names no model). The transcript below shows the same turns." }));
      }
    }
    if (s.rounds && s.rounds.length) {
      root.append(el("h3", { text: `Tool calls (${s.rounds.length})` }));
      s.rounds.forEach((r, k) => root.append(el("div", { class: "round", "data-round": k }, el("b", { text: `${k + 1}. ${r.name}` }),
        el("div", { class: "muted", text: "arguments" }), pre(r.arguments, "args"),
        el("div", { class: "muted", text: "observation" }), pre(r.observation === null ? "(no observation)" : r.observation, "observation"))));
    }
    if (s.messages && s.messages.length) {
      root.append(el("h3", { text: "Transcript" }));
      for (const m of s.messages) {
        const c = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
        root.append(el("div", { class: "msg role-" + m.role }, el("b", { text: m.role }), pre(c + (m.tool_calls ? "\n" + JSON.stringify(m.tool_calls) : ""))));
      }
    }
    if (s.output !== undefined) root.append(el("h3", { text: "Response (verl dump: decoded text, no response_mask)" }), pre(s.output, "output"));
    if (s.final !== null && s.final !== undefined) root.append(el("h3", { text: "Final answer" }), pre(s.final, "final"));
    if (s.program) root.append(el("h3", { text: "Code judged" }), pre(s.program, "program"));
    if (s.tests && s.tests.length) root.append(testsTable(s.tests));
    show("trajectory");
  }

  function renderCompare() {
    const c = HEAD.compare, root = document.getElementById("compare");
    root.replaceChildren(el("p", { class: "muted", text: `this run vs ${c.file}: problems whose pass rate differs, regressions first (${c.rows.length})` }));
    root.append(table(["task", "change", { label: "here", num: 1 }, { label: "other", num: 1 }, { label: "Δ", num: 1 }],
      c.rows.map(r => el("tr", { "data-task": r.task_id, "data-change": r.change }, el("td", { text: r.task_id }), el("td", { text: r.change }),
        el("td", { class: "num", text: r.here === null ? "—" : `${(100 * r.here).toFixed(1)} % of ${r.here_n}` }),
        el("td", { class: "num", text: r.other === null ? "—" : `${(100 * r.other).toFixed(1)} % of ${r.other_n}` }),
        el("td", { class: "num", text: r.delta === null ? "" : (100 * r.delta).toFixed(1) }))), { id: "compare-list" }));
  }

  async function route() {
    const h = location.hash.slice(1) || "overview", parts = h.split("/");
    try {
      if (parts[0] === "p") await renderProblem(+parts[1]);
      else if (parts[0] === "t") await renderTrajectory(+parts[1], +parts[2]);
      else if (h === "problems") show("problems");
      else if (h === "compare" && HEAD.compare) show("compare");
      else show("overview");
    } catch (err) {
      document.getElementById("loading").hidden = false;
      document.getElementById("loading").textContent = "cannot show this view: " + err;
    }
    document.body.dataset.view = h;
  }

  async function start() {
    HEAD = await unpack("d-head");
    const meta = [HEAD.kind === "eval" ? "judgebox eval results" : HEAD.kind === "rollout" ? "judgebox rollout trajectories" : "verl rollout dump",
                  HEAD.file, HEAD.dataset ? "dataset " + HEAD.dataset : null, HEAD.model ? "model " + HEAD.model : null, "generated " + HEAD.generated];
    document.getElementById("meta").textContent = meta.filter(Boolean).join(" · ");
    renderOverview();
    renderProblems();
    if (HEAD.compare) { document.getElementById("compare-tab").hidden = false; renderCompare(); }
    window.addEventListener("hashchange", route);
    await route();
    document.body.dataset.ready = "1";
  }
  start();
})();
