// judgebox report: our own script (no third-party JS). Every record text goes in with textContent,
// never as markup. Data: <script type="application/octet-stream"> blocks of base64(gzip(JSON)).
"use strict";
(function () {
  // record-given names (verdicts, fields) are looked up in Maps, never as object keys: a verdict named
  // "__proto__" or "constructor" is only a name
  const UNSCORED = new Map([["infra_error", "infrastructure error: not a wrong answer (re-run to score it)"],
                            ["test_data_error", "test data error: the dataset's tests are unusable, not the solution's fault"],
                            ["no score", "no score recorded: left out of the pass rate and the mean score, not counted as wrong"]]);
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
  const rate = x => typeof x === "number" ? x.toFixed(4) : fmt(x);  // pass@k: 1.0000 beside 0.5000, never "1"
  const pct = (c, n) => n ? (100 * c / n).toFixed(1) + " %" : "—";

  function add(root, ...nodes) { for (const n of nodes) if (n !== null && n !== undefined) root.append(n); return root; }
  function table(headers, rows, attrs) {  // headers null: no header row
    const t = el("table", attrs || {});
    if (headers) t.append(el("tr", {}, ...headers.map(h => el("th", { class: h.num ? "num" : null, text: h.label || h }))));
    for (const r of rows) t.append(r);
    return t;
  }
  function kv(obj, attrs, rowAttr) {  // a two-column name/value table, or null when there is nothing to show
    const entries = Object.entries(obj || {});
    if (!entries.length) return null;
    return table(null, entries.map(([k, v]) =>
      el("tr", { [rowAttr || "data-key"]: k }, el("th", { text: k }),
         el("td", { class: typeof v === "number" ? "num" : null, text: typeof v === "object" && v !== null ? JSON.stringify(v) : fmt(v) }))),
      Object.assign({ class: "kv" }, attrs || {}));
  }
  const signedPp = d => (d > 0 ? "+" : d < 0 ? "−" : "±") + Math.abs(100 * d).toFixed(1) + " pp";
  function barCell(count, total, cls) {
    return el("td", {}, el("span", { class: "bar " + (cls || ""), style: `width:${Math.round(200 * count / Math.max(total, 1))}px` }));
  }

  function show(id) {
    for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== id;
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.getAttribute("href") === "#" + id);
    document.getElementById("loading").hidden = true;
  }
  function notFound(text) {  // a view the URL names that this report does not have
    for (const s of document.querySelectorAll("main > section")) s.hidden = true;
    const box = document.getElementById("loading");
    box.replaceChildren(el("span", { class: "not-found", text }), " · ", el("a", { href: "#problems", text: "all problems" }));
    box.hidden = false;
  }
  function headerHeight() {  // anchors land below the sticky header (CSS scroll-margin-top uses --head-h)
    document.documentElement.style.setProperty("--head-h", document.querySelector("header").offsetHeight + "px");
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
    if (o.mean_score !== undefined) card(`mean score (of ${o.mean_score_of} scorable samples; unscorable left out)`, o.mean_score, "mean_score");
    const tamper = o.tamper || {};
    if (tamper.signalled || tamper.rejected) card(`tamper signals (${tamper.signalled_accepted} accepted, ${tamper.rejected} rejected)`, tamper.signalled, "tamper");
    root.append(cards);

    const reported = s.pass_at_k || {}, omitted = s.pass_at_k_omitted || {}, att = s.pass_at_k_attempted || {};
    if (Object.keys(reported).length || Object.keys(omitted).length) {
      // without the run's summary the page knows only the problems in the file, not the benchmark's
      const fromSummary = o.source.startsWith("the summary"), both = fromSummary && Object.keys(att).length > 0;
      root.append(el("h2", { text: "pass@k" }));
      const rows = Object.entries(reported).map(([k, v]) => el("tr", { "data-k": k }, el("td", { text: k }), el("td", { class: "num", text: rate(v) }),
        both ? el("td", { class: "num", text: att[k] !== undefined ? rate(att[k]) : "" }) : null));
      for (const [k, why] of Object.entries(omitted)) rows.push(el("tr", { "data-k": k }, el("td", { text: k }), el("td", { text: "not reported: " + why, colspan: both ? 2 : null })));
      root.append(table(["k", { label: fromSummary ? "whole benchmark" : "problems in this file (no --summary)", num: 1 },
                         both ? { label: "attempted problems only", num: 1 } : null].filter(Boolean), rows, { id: "passk" }));
      if (!fromSummary) root.append(el("p", { class: "note", id: "no-summary", text:
        `No --summary given: this page knows only the ${HEAD.problems.length} problems in ${HEAD.file}. The run's own k and `
        + "any problems it did not attempt are unknown, so these figures are not the benchmark's pass@k: they are over the "
        + "problems in this file, for k = 1, 10 and 100 where every problem has at least k scored samples. For the run's own "
        + "figures give its summary (judgebox report FILE --summary S.json); a run that wrote none writes it when run "
        + "again with --summary S.json (it resumes: nothing is scored twice)." }));
    }
    root.append(el("h2", { text: "Verdicts" }));
    const total = o.n_records;
    root.append(table(["verdict", { label: "samples", num: 1 }, "", ""], Object.entries(o.verdicts).map(([v, n]) =>
      el("tr", { "data-verdict": v }, el("td", { class: "id verdict-" + v, text: v }), el("td", { class: "num count", text: n }),
         barCell(n, total, v === "accepted" ? "ok" : UNSCORED.has(v) ? "infra" : v.startsWith("score ") ? "" : "bad"),
         el("td", { class: "muted", text: UNSCORED.get(v) || "" }))), { id: "verdicts" }));
    if (unscorable) {
      root.append(el("h2", { text: "Unscorable samples (left out of pass@k, never counted as wrong)" }));
      add(root, kv(o.unscorable, { id: "unscorable" }, "data-verdict"));
    }
    if (tamper.signalled || tamper.rejected || tamper.forgeable) {
      root.append(el("h2", { text: "Tamper signals (what a sample's code could forge with; read the accepted ones first)" }));
      add(root, kv({ "samples with signals": tamper.signalled, "of them accepted": tamper.signalled_accepted,
                     "rejected for their signals (--on-tamper reject)": tamper.rejected,
                     "samples whose tests shared the solution's process (forgeable)": tamper.forgeable }, { id: "tamper" }));
      add(root, kv(tamper.kinds || {}, { id: "tamper-kinds" }, "data-kind"));
    }
    if (o.stop_reasons) {
      root.append(el("h2", { text: "Trajectories" }));
      add(root, kv(o.stop_reasons, { id: "stop-reasons" }, "data-stop"));
      add(root, kv({ "tool calls per trajectory (histogram)": o.tool_calls, "parse errors": o.parse_errors, "tool errors": o.tool_errors,
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
      add(root, kv(o.elapsed_s, { id: "timing" }));
    }
    const fields = kv(Object.fromEntries(Object.entries(s).filter(([k]) => k !== "pass_at_k")), { id: "summary-fields" }, "data-field");
    if (fields) root.append(el("h2", { text: "Summary fields" }), el("p", { class: "muted", text: "source: " + o.source }), fields);
    if (o.steps) root.append(el("h2", { text: "Samples per training step" }), table(["step", { label: "samples", num: 1 }],
      Object.entries(o.steps).map(([k, n]) => el("tr", { "data-step": k }, el("td", { text: k }), el("td", { class: "num", text: n }))), { id: "steps" }));
    if (o.torn_line) root.append(el("p", { class: "muted", text: `${HEAD.file}:${o.torn_line}: a torn last line (cut by a kill) was skipped` }));
  }

  function problemRow(p) {
    const link = el("a", { href: "#p/" + p.chunk, text: p.task_id });
    return el("tr", { "data-task": p.task_id }, el("td", { class: "id" }, link), el("td", { class: "num", text: p.samples }), el("td", { class: "num", text: p.n }),
      el("td", { class: "num", text: p.c }), el("td", { class: "num", text: pct(p.c, p.n) }),
      HEAD.kind === "eval" ? null : el("td", { class: "num", text: p.reward === null || p.reward === undefined ? "" : fmt(p.reward, 3) }),
      el("td", { class: "id", text: Object.entries(p.verdicts).map(([v, n]) => `${v} ${n}`).join(", ") }));
  }

  function renderProblems() {
    const root = document.getElementById("problems");
    root.replaceChildren();
    const input = el("input", { type: "search", placeholder: "filter by task id or verdict" });
    let shown = PAGE;
    const t = table(["task", { label: "samples", num: 1 }, { label: "scored", num: 1 }, { label: "passed", num: 1 }, { label: "pass rate", num: 1 },
                     HEAD.kind === "eval" ? null : { label: HEAD.kind === "verl" ? "mean score" : "mean reward", num: 1 }, "verdicts"].filter(Boolean), [], { id: "problem-list" });
    const more = el("a", { class: "more" });
    function fill() {
      const q = input.value.trim().toLowerCase();
      const rows = HEAD.problems.filter(p => !q || p.task_id.toLowerCase().includes(q) || Object.keys(p.verdicts).some(v => v.includes(q)));
      while (t.rows.length > 1) t.deleteRow(1);
      for (const p of rows.slice(0, shown)) t.append(problemRow(p));
      more.textContent = rows.length > shown ? `show more (${rows.length - shown} left)` : "";
      more.hidden = rows.length <= shown;
    }
    input.addEventListener("input", () => { shown = PAGE; fill(); });
    more.addEventListener("click", () => { shown += PAGE; fill(); });
    root.append(el("div", { class: "filter" }, input), t, more);
    fill();
  }

  function pre(text, cls) { return el("pre", { class: cls || null, text: text === null || text === undefined ? "" : String(text) }); }

  function verdictBadge(s) {
    const label = s.verdict === null || s.verdict === undefined ? (s.label || "(no verdict)") : s.verdict;
    const span = el("span", {}, el("b", { class: "verdict-" + label, "data-verdict": label, text: label }));
    if (UNSCORED.has(label)) span.append(el("span", { class: "label infra-label", text: UNSCORED.get(label) }));
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
      if (t.code) box.append(el("div", { class: "muted", text: "test code (checked inside the test program: there is no expected output to compare with stdout)" }), pre(t.code, "test-code"));
      if (t.input) box.append(el("div", { class: "muted", text: "input" }), pre(t.input));
      if (t.diff && t.diff.length) {
        const d = el("pre", { class: "diff" });
        for (const [op, line] of t.diff) d.append(el("span", { class: op === "-" ? "d-del" : op === "+" ? "d-add" : op === "…" ? "d-cut" : null, text: (op === "…" ? "" : op + " ") + line }));
        add(box, el("div", { class: "muted", text: "expected (−) vs actual (+)" }), t.diff_note ? el("div", { class: "note diff-note", text: t.diff_note }) : null, d);
      } else {
        if (t.expected) box.append(el("div", { class: "muted", text: "expected" }), pre(t.expected));
        if (t.stdout && t.stdout.trim()) box.append(el("div", { class: "muted", text: "stdout" }), pre(t.stdout));
      }
      if (t.stderr) box.append(el("div", { class: "muted", text: "stderr (tail)" }), pre(t.stderr, "stderr"));
      if (t.note) box.append(el("p", { class: "note test-note", text: t.note }));
      wrap.append(box);
    }
    return wrap;
  }

  function verlInfo(s) {  // a verl dump line: its ground truth and the reward function's extra keys
    if (HEAD.kind !== "verl") return null;
    const box = el("div", { class: "verl-info" });
    if (s.gts !== null && s.gts !== undefined)
      box.append(el("div", { class: "muted", text: "ground truth (gts)" }), pre(typeof s.gts === "string" ? s.gts : JSON.stringify(s.gts, null, 1), "gts"));
    const extras = kv(s.extra, { class: "kv extras" }, "data-extra");
    if (extras) box.append(el("div", { class: "muted", text: "reward extras" }), extras);
    return box.childNodes.length ? box : null;
  }
  const rewardText = s => s.reward === undefined ? null : `${HEAD.kind === "verl" ? "score" : "reward"} ${fmt(s.reward, 3)}`;

  async function renderProblem(chunk) {
    const data = await unpack("c" + chunk), root = document.getElementById("problem");
    root.replaceChildren(el("h2", { text: data.task_id }));
    if (data.prompt !== null && data.prompt !== undefined) root.append(el("h3", { text: "Prompt" }), pre(data.prompt, "prompt"));
    root.append(el("h3", { text: `Samples (${data.samples.length})` }));
    data.samples.forEach((s, j) => {
      const box = el("div", { class: "sample", "data-sample": s.i });
      const headLine = el("div", {}, el("b", { text: `sample ${s.i} ` }), verdictBadge(s),
        s.n_total !== null && s.n_total !== undefined ? el("span", { class: "muted", text: `  ${s.n_passed}/${s.n_total} tests` }) : null,
        s.reward !== undefined ? el("span", { class: "muted", text: "  " + rewardText(s) }) : null,
        s.step !== undefined ? el("span", { class: "muted step", text: `  step ${fmt(s.step)}` }) : null,
        s.stop_reason ? el("span", { class: "muted", text: `  stop: ${s.stop_reason}` }) : null);
      box.append(headLine);
      add(box, verlInfo(s));
      if (s.response_mask || s.output !== undefined) box.append(el("a", { href: `#t/${chunk}/${j}`, class: "open-trajectory", text: "open trajectory" }));
      if (s.message) box.append(el("div", { class: "muted", text: "message" }), pre(s.message, "message"));
      if (s.tamper_signals && s.tamper_signals.length) box.append(el("div", { class: "muted", text: "tamper signals" + (s.forgeable ? " (forgeable harness)" : "") + (s.tamper_rejected ? ", rejected" : "") }),
        pre(s.tamper_signals.map((t) => `line ${t.line}: ${t.kind}: ${t.evidence}`).join("\n"), "tamper"));
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
    const facts = HEAD.kind === "verl" ? [rewardText(s), `step ${fmt(s.step)}`]
      : [rewardText(s), `stop reason ${s.stop_reason || "—"}`, `${s.tool_calls || 0} tool calls`];
    root.append(el("div", { class: "traj-head" }, verdictBadge(s), el("span", { class: "muted", text: "  " + facts.join("  ·  ") }),
      s.response_mask ? el("span", { class: "muted", "data-policy-tokens": policy, text: `  ·  ${policy} policy tokens, ${s.response_mask.length - policy} observation tokens` }) : null));
    add(root, verlInfo(s));
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
        root.append(el("p", { class: "muted no-tokens", text: "no token texts: the token view needs the model's tokenizer (`judgebox report FILE --tokenizer MODEL_DIR`, or the run's --summary when it names the model). The transcript below shows the same turns." }));
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
    const chunkOf = new Map(HEAD.problems.map(p => [p.task_id, p.chunk]));
    root.replaceChildren(el("p", { class: "muted", text: `this run vs ${c.file}: problems whose pass rate differs, regressions first (${c.rows.length}); `
      + `Δ = pass rate here − pass rate in ${c.file}, in percentage points (pp)` }));
    if (c.note) root.append(el("p", { class: "note", id: "compare-warning", text: c.note }));
    if (!c.rows.length) { root.append(el("p", { class: "note", id: "compare-none", text: `no problem's pass rate differs between this run and ${c.file}` })); return; }
    const task = r => chunkOf.has(r.task_id) ? el("a", { href: "#p/" + chunkOf.get(r.task_id), text: r.task_id }) : el("span", { text: r.task_id + " (not in this run)" });
    root.append(table(["task", "change", { label: "here", num: 1 }, { label: "other", num: 1 }, { label: "Δ", num: 1 }],
      c.rows.map(r => el("tr", { "data-task": r.task_id, "data-change": r.change }, el("td", { class: "id" }, task(r)), el("td", { class: "nowrap", text: r.change.replace("_", " ") }),
        el("td", { class: "num", text: r.here === null ? "—" : `${(100 * r.here).toFixed(1)} % of ${r.here_n}` }),
        el("td", { class: "num", text: r.other === null ? "—" : `${(100 * r.other).toFixed(1)} % of ${r.other_n}` }),
        el("td", { class: "num delta " + (r.delta < 0 ? "down" : r.delta > 0 ? "up" : ""), text: r.delta === null ? "" : signedPp(r.delta) }))), { id: "compare-list" }));
  }

  async function route() {
    const h = location.hash.slice(1) || "overview", parts = h.split("/");
    const problem = parts[0] === "p" || parts[0] === "t" ? HEAD.problems.find(p => String(p.chunk) === parts[1]) : null;
    try {
      if ((parts[0] === "p" || parts[0] === "t") && !problem) notFound(`no problem number ${parts[1] || "(none named)"} in this report (its problems are numbered #p/0 to #p/${HEAD.problems.length - 1})`);
      else if (parts[0] === "p") await renderProblem(problem.chunk);
      else if (parts[0] === "t" && !(/^\d+$/.test(parts[2] || "") && +parts[2] < problem.samples)) notFound(`no sample ${parts[2] || "(none named)"} of problem ${problem.task_id} in this report (it has ${problem.samples})`);
      else if (parts[0] === "t") await renderTrajectory(problem.chunk, +parts[2]);
      else if (h === "problems") show("problems");
      else if (h === "compare" && HEAD.compare) show("compare");
      else if (h === "overview") show("overview");
      else {  // an anchor inside a view (#verdicts) shows its view; any other name is not a view of this page
        const anchor = document.getElementById(h), view = anchor && !anchor.matches("main > section") && anchor.closest("main > section");
        if (view && !["problem", "trajectory"].includes(view.id)) show(view.id);
        else notFound(`no view #${h} in this report (its views are #overview, #problems, #p/N for problem N, `
          + `#t/N/S for its sample S${HEAD.compare ? ", #compare" : ""})`);
      }
    } catch (err) {
      notFound("cannot show this view: " + err);
    }
    const target = document.getElementById(h);  // an anchor inside a view (#verdicts): below the sticky header
    if (target && !target.matches("main > section") && !target.closest("[hidden]")) target.scrollIntoView();
    else window.scrollTo(0, 0);
    document.body.dataset.view = h;
  }

  async function start() {
    HEAD = await unpack("d-head");
    const meta = [HEAD.kind === "eval" ? "judgebox eval results" : HEAD.kind === "rollout" ? "judgebox rollout trajectories" : "verl rollout dump",
                  HEAD.file, HEAD.dataset ? "dataset " + HEAD.dataset : null, HEAD.model ? "model " + HEAD.model : null, "generated " + HEAD.generated];
    document.getElementById("meta").textContent = meta.filter(Boolean).join(" · ");
    headerHeight();
    window.addEventListener("resize", headerHeight);
    renderOverview();
    renderProblems();
    if (HEAD.compare) { document.getElementById("compare-tab").hidden = false; renderCompare(); }
    window.addEventListener("hashchange", route);
    await route();
    document.body.dataset.ready = "1";
  }
  start();
})();
