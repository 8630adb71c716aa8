/*
 * fnprof's HTML report (views/html.c writes this script inline after the profile's JSON).
 *
 * The data, one JSON object in the script element "fnprof-data" (application/json),
 * columnar so that a tree of 500k nodes parses in tens of milliseconds (html.c says more):
 *   title, unit ("ns", or "calls" for a count-only profile), tick (ns or calls per tick),
 *   rebuilt (0/1), threads[], meta [[key, value]] (the run's: program, pid, start, ...),
 *   files[], funcs {file (index into files), line, name, nc, pc,
 *   tt, ct}, labels [[func, short label]] where the name alone is ambiguous, short [[func,
 *   name]] the table's names where --short-names changed them, edges [caller,
 *   callee, nc, pc, tt, ct, ...] flat, tree {func, up (0: a root, else the distance back to
 *   the parent), thread (one per root, in order), calls, incl (ticks)}.
 *
 * Only what can be seen is drawn: the chart lays out frames at least MIN_W px wide at the
 * current zoom and puts in the document only the rows scrolled into view; the table shows
 * the first rows of the sorted, filtered list. Nothing here recurses: call trees are deep.
 */
(function () {
    "use strict";
    const t0 = performance.now();
    const D = JSON.parse(document.getElementById("fnprof-data").textContent);

    const ROW = 18;    /* px per chart row */
    const MIN_W = 0.5; /* px: narrower frames are not drawn at this zoom */
    const PAGE = 200;  /* table rows shown per "show more" */
    const COUNT = D.unit === "calls";

    /* ---- functions --------------------------------------------------------------------- */

    const F = D.funcs;
    const nf = F.name.length;
    const label = F.name.slice();
    for (const [i, l] of D.labels)
        label[i] = l;
    /* --short-names: the table's names beside file:line; the full key stays in its title */
    const shortName = F.name.slice();
    for (const [i, l] of D.short || [])
        shortName[i] = l;
    const fileOf = (f) => D.files[F.file[f]];
    /* pstats' func_std_string: "file:line(name)", "{name}" for ("~", 0, "<name>"). */
    const stdName = (f) => {
        const name = F.name[f];
        if (fileOf(f) === "~" && F.line[f] === 0)
            return name.startsWith("<") && name.endsWith(">") ? "{" + name.slice(1, -1) + "}"
                                                              : name;
        return fileOf(f) + ":" + F.line[f] + "(" + name + ")";
    };
    /* "file:line", or "" for pstats' built-ins and fnprof's synthetic {process}. */
    const where = (f) => fileOf(f) === "~" ? "" : fileOf(f) + ":" + F.line[f];
    let ncallsAll = 0, pcallsAll = 0, ttAll = 0;
    for (let f = 0; f < nf; f++) {
        ncallsAll += F.nc[f];
        pcallsAll += F.pc[f];
        ttAll += F.tt[f];
    }
    /* Library calls that wait (PROF_LIBCALLS): D.nowait has every number without them. */
    const NW = D.nowait || null;
    const isWait = new Uint8Array(nf);
    for (const f of NW ? NW.waits : [])
        isWait[f] = 1;
    let lower = null; /* stdName lower-cased, made on the first filter */

    /* ---- the tree, with an "all" root and, for several threads, one node per thread ---- */

    const T = D.tree;
    const n = T.func.length;
    const nth = D.threads.length;
    const ALL = n;
    const N = n + 1 + (nth > 1 ? nth : 0);
    const func = new Int32Array(N).fill(-1);
    const parent = new Int32Array(N).fill(-1);
    const first = new Int32Array(N).fill(-1);
    const next = new Int32Array(N).fill(-1);
    const incl = new Float64Array(N); /* ns, or calls */
    const self = new Float64Array(N);
    const calls = new Float64Array(N);
    func.set(T.func);
    calls.set(T.calls);
    for (let i = 0, r = 0; i < n; i++) {
        const up = T.up[i];
        if (up === 0) {
            const th = T.thread[r++];
            parent[i] = nth > 1 ? n + 1 + th : ALL;
        } else {
            parent[i] = i - up;
        }
    }
    for (let t = 0; t < nth && nth > 1; t++)
        parent[n + 1 + t] = ALL;
    /* Children in the file's order: prepending while walking backwards keeps it. */
    for (let i = N - 1; i >= 0; i--) {
        const p = parent[i];
        if (p >= 0) {
            next[i] = first[p];
            first[p] = i;
        }
    }
    /* The values from inclusive ticks (the tree's, or the ones without waits): a node's own
     * value is its inclusive ticks less its children's, exact in ticks (the writer made
     * them so), converted once. */
    function values(src) {
        incl.fill(0);
        for (let i = 0; i < n; i++)
            self[i] = src[i];
        for (let i = 0; i < n; i++)
            if (T.up[i] !== 0)
                self[i - T.up[i]] -= src[i];
        for (let i = 0; i < n; i++) {
            incl[i] = src[i] * D.tick;
            self[i] *= D.tick;
        }
        for (let c = first[ALL]; c >= 0; c = next[c]) {
            if (c > n) /* a thread: sum its roots */
                for (let r = first[c]; r >= 0; r = next[r])
                    incl[c] += incl[r];
            incl[ALL] += incl[c];
        }
    }
    values(T.incl);
    const nodeLabel = (v) => v === ALL ? "all" : v > n ? D.threads[v - n - 1] : label[func[v]];

    /* ---- formatting ---------------------------------------------------------------------- */

    const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
    /* Seconds like pstats, with enough decimals for the total to keep 4 digits. */
    const decimals = ttAll > 0 ? Math.min(9, Math.max(3, 3 - Math.floor(Math.log10(ttAll)))) : 3;
    const sec = (x) => COUNT ? String(Math.round(x)) : x.toFixed(decimals);
    const per = (x, d) => d ? (COUNT ? (x / d).toFixed(2) : (x / d).toFixed(decimals)) : "";
    const ncalls = (nc, pc) => nc === pc ? String(nc) : nc + "/" + pc;
    const pct = (x, of) => of > 0 ? (100 * x / of).toFixed(x * 1000 < of ? 2 : 1) + "%" : "";
    const group = (x) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    /* A tree value (ns, or calls) for people. */
    const value = (v) => {
        if (COUNT)
            return group(v) + (v === 1 ? " call" : " calls");
        if (v < 1e3)
            return Math.round(v) + " ns";
        if (v < 1e6)
            return (v / 1e3).toPrecision(3) + " \u00b5s";
        if (v < 1e9)
            return (v / 1e6).toPrecision(3) + " ms";
        return (v / 1e9).toFixed(3) + " s";
    };

    /* Warm colours like flamegraph.pl's, fixed per function name so a function keeps its
     * colour wherever it appears; the synthetic roots are grey. */
    const colours = new Array(nf);
    const colour = (v) => {
        const f = func[v];
        if (f < 0)
            return "var(--root)";
        if (colours[f] === undefined) {
            let h = 2166136261;
            for (const ch of F.name[f])
                h = Math.imul(h ^ ch.codePointAt(0), 16777619);
            h >>>= 0;
            colours[f] = "hsl(" + (8 + (h % 42)) + "," + (62 + ((h >>> 8) % 22)) + "%," +
                         (60 + ((h >>> 16) % 14)) + "%)";
        }
        return colours[f];
    };

    /* ---- the page ------------------------------------------------------------------------ */

    const unitWords = COUNT ? ["tot calls", "cum calls"] : ["tottime", "cumtime"];
    document.title = (D.title || "profile") + " \u00b7 fnprof";
    const app = document.createElement("div");
    app.id = "app";
    app.innerHTML = `
<header>
  <div class="brand">fnprof</div>
  <h1 id="title"></h1>
  <p id="summary"></p>
  <dl id="meta" class="meta" aria-label="Run" hidden></dl>
</header>
<div id="banner" class="banner" role="note" hidden></div>
<section id="flame" aria-label="Call tree">
  <div class="bar">
    <h2>Call tree</h2>
    <nav id="crumbs" aria-label="Zoom path"></nav>
    <button id="reset" type="button" title="Show the whole tree (Esc)">Reset zoom</button>
  </div>
  <div id="chart"><div id="frames"></div></div>
  <p class="hint">Width is a frame's share of ${COUNT ? "the calls" : "the time"}, including
  its callees. Click a frame to zoom to it and show its function's callers and callees.</p>
</section>
<div class="cols">
  <section id="functions" aria-label="Functions">
    <div class="bar">
      <h2>Functions</h2>
      <input id="filter" type="search" placeholder="Filter functions (/)"
             aria-label="Filter functions"
             autocomplete="off" spellcheck="false">
      <span id="count" class="muted"></span>
      <label id="waitsw" class="switch" hidden
             title="Every time with the time of the waits under it taken out: pthread_cond_wait, poll, read, usleep... (docs/libcalls.md)"><input
             type="checkbox" id="nowait"> without waits</label>
    </div>
    <table id="table">
      <colgroup><col class="c-n"><col class="c-t"><col class="c-p"><col class="c-t">
                <col class="c-p"><col></colgroup>
      <thead><tr>
        <th data-key="nc" class="num" title="calls (total/primitive when they differ)">ncalls</th>
        <th data-key="tt" class="num" title="in the function itself">${unitWords[0]}</th>
        <th data-key="ttp" class="num" title="${unitWords[0]} / ncalls">percall</th>
        <th data-key="ct" class="num"
            title="including callees, over primitive calls">${unitWords[1]}</th>
        <th data-key="ctp" class="num" title="${unitWords[1]} / primitive calls">percall</th>
        <th data-key="name" title="filename:lineno(function)">filename:lineno(function)</th>
      </tr></thead>
      <tbody></tbody>
    </table>
    <div id="more"></div>
  </section>
  <aside id="detail" aria-live="polite"></aside>
</div>
<div id="tip" role="tooltip" hidden></div>`;
    document.body.appendChild(app);
    const $ = (id) => document.getElementById(id);
    $("title").textContent = D.title || "profile";
    /* pstats' first line, then what else there is. */
    $("summary").textContent =
        group(ncallsAll) + " function calls" +
        (pcallsAll !== ncallsAll ? " (" + group(pcallsAll) + " primitive calls)" : "") +
        (COUNT ? " \u00b7 a count-only profile: values are calls, not time"
               : " in " + sec(ttAll) + " seconds") +
        " \u00b7 " + group(nf) + " functions \u00b7 " + group(n) + " call paths" +
        (nth > 1 ? " \u00b7 " + nth + " threads" : "") +
        (NW ? " \u00b7 " + sec(NW.seconds) + " s waiting in " + group(NW.calls) + " calls" : "");
    /* The run's metadata: the program's own strings, so text nodes, never markup. */
    if (D.meta && D.meta.length) {
        const dl = $("meta");
        for (const [k, v] of D.meta) {
            const item = document.createElement("div");
            const dt = document.createElement("dt");
            const dd = document.createElement("dd");
            dt.textContent = k;
            dd.textContent = v;
            item.append(dt, dd);
            dl.appendChild(item);
        }
        dl.hidden = false;
    }
    if (D.rebuilt) {
        const b = $("banner");
        b.hidden = false;
        b.innerHTML = "<strong>Estimated call paths.</strong> This profile has no " +
                      "calling-context tree (a file from CPython's cProfile or an older " +
                      "fnprof): the call tree below is rebuilt from caller edges, and its " +
                      "paths and values are estimates. The table and the callers and " +
                      "callees are exact.";
    }

    /* ---- the chart: layout at the current zoom, rows drawn as they scroll into view ------ */

    const chart = $("chart"), frames = $("frames"), tip = $("tip");
    let zoom = ALL;
    let selected = -1;  /* a function */
    let matches = null; /* Uint8Array per function while the filter has text */
    /* The layout: frame k is node lay.node[k] at lay.x[k], width lay.w[k], row lay.d[k];
     * byRow lists frames row by row, row d at byRow[rowStart[d] .. rowStart[d + 1]). */
    let lay = null;
    let drawn = "";
    let lastWidth = 0; /* the width of the last layout */

    function layout() {
        const W = frames.clientWidth || 1;
        lastWidth = W;
        const node = [], x = [], w = [], d = [];
        const chain = [];
        for (let v = zoom; v >= 0; v = parent[v])
            chain.push(v);
        chain.reverse();
        const base = chain.length - 1;
        for (let i = 0; i < base; i++) {
            node.push(chain[i]);
            x.push(0);
            w.push(W);
            d.push(i);
        }
        const scale = incl[zoom] > 0 ? W / incl[zoom] : 0;
        const sv = [zoom], sx = [0], sd = [base];
        const kids = [];
        while (sv.length) {
            const v = sv.pop(), vx = sx.pop(), vd = sd.pop();
            node.push(v);
            x.push(vx);
            w.push(v === zoom ? W : incl[v] * scale);
            d.push(vd);
            kids.length = 0;
            for (let c = first[v]; c >= 0; c = next[c])
                if (incl[c] * scale >= MIN_W)
                    kids.push(c);
            /* Heaviest first, as speedscope's "left heavy": the big callees line up left. */
            kids.sort((a, b) => incl[b] - incl[a] || a - b);
            let cx = vx;
            for (const c of kids) {
                sv.push(c);
                sx.push(cx);
                sd.push(vd + 1);
                cx += incl[c] * scale;
            }
        }
        let rows = 0;
        for (const r of d)
            rows = Math.max(rows, r + 1);
        const rowStart = new Int32Array(rows + 1);
        for (const r of d)
            rowStart[r + 1]++;
        for (let r = 0; r < rows; r++)
            rowStart[r + 1] += rowStart[r];
        const fill = rowStart.slice(0, rows);
        const byRow = new Int32Array(node.length);
        for (let k = 0; k < node.length; k++)
            byRow[fill[d[k]]++] = k;
        lay = {node, x, w, d, base, rows, rowStart, byRow};
        frames.style.height = rows * ROW + "px";
        chart.style.height = Math.min(rows * ROW + 2, Math.max(8 * ROW, window.innerHeight * 0.6)) +
                             "px";
        drawn = "";
        draw();
        crumbs();
    }

    function draw() {
        if (!lay)
            return;
        const top = chart.scrollTop, h = chart.clientHeight;
        const r0 = Math.max(0, Math.floor(top / ROW) - 4);
        const r1 = Math.min(lay.rows, Math.ceil((top + h) / ROW) + 4);
        const key = r0 + ":" + r1;
        if (key === drawn)
            return;
        drawn = key;
        const frag = document.createDocumentFragment();
        for (let j = lay.rowStart[r0]; j < lay.rowStart[r1]; j++) {
            const k = lay.byRow[j], v = lay.node[k], w = lay.w[k], f = func[v];
            const el = document.createElement("div");
            let cls = "fr";
            if (k < lay.base)
                cls += " anc";
            if (w < 22)
                cls += " tiny";
            if (f >= 0 && f === selected)
                cls += " sel";
            if (matches && f >= 0 && matches[f])
                cls += " hit";
            el.className = cls;
            el.dataset.n = v;
            el.style.cssText = "left:" + lay.x[k] + "px;top:" + lay.d[k] * ROW + "px;width:" + w +
                               "px;background:" + colour(v);
            el.textContent = nodeLabel(v);
            frag.appendChild(el);
        }
        frames.textContent = "";
        frames.appendChild(frag);
    }

    /* Restyles the drawn frames (selection, filter) without a new layout. */
    function restyle() {
        for (const el of frames.children) {
            const f = func[+el.dataset.n];
            el.classList.toggle("sel", f >= 0 && f === selected);
            el.classList.toggle("hit", !!(matches && f >= 0 && matches[f]));
        }
    }

    function crumbs() {
        const nav = $("crumbs");
        const chain = [];
        for (let v = zoom; v >= 0; v = parent[v])
            chain.push(v);
        chain.reverse();
        /* A deep zoom keeps the first crumb and the last few. */
        const shown = chain.length > 8 ? [chain[0], -1].concat(chain.slice(-6)) : chain;
        nav.innerHTML = shown.map((v) => v < 0 ? '<span class="gap">\u2026</span>'
                                               : '<button type="button" data-n="' + v + '"' +
                                                     (v === zoom ? ' aria-current="true"' : "") +
                                                     ">" + esc(nodeLabel(v)) + "</button>")
                            .join('<span class="sep">\u203a</span>');
        $("reset").disabled = zoom === ALL;
    }

    function zoomTo(v) {
        zoom = v;
        chart.scrollTop = 0;
        layout();
    }

    function showTip(e, v) {
        const total = incl[ALL];
        let html = "<b>" + esc(nodeLabel(v)) + "</b>";
        if (func[v] >= 0)
            html += '<div class="muted">' + esc(where(func[v])) + "</div><table>" +
                    "<tr><td>calls on this path</td><td>" + group(calls[v]) + "</td></tr>";
        else
            html += "<table>";
        html += "<tr><td>total</td><td>" + value(incl[v]) + " \u00b7 " + pct(incl[v], total) +
                "</td></tr>";
        if (func[v] >= 0)
            html += "<tr><td>self</td><td>" + value(self[v]) + " \u00b7 " + pct(self[v], total) +
                    "</td></tr>";
        if (zoom !== ALL && zoom !== v && incl[zoom] > 0)
            html += "<tr><td>of the zoomed frame</td><td>" + pct(incl[v], incl[zoom]) +
                    "</td></tr>";
        tip.innerHTML = html + "</table>";
        tip.hidden = false;
        const pad = 14, r = tip.getBoundingClientRect();
        let left = e.clientX + pad, top = e.clientY + pad;
        if (left + r.width > window.innerWidth - 4)
            left = Math.max(4, e.clientX - pad - r.width);
        if (top + r.height > window.innerHeight - 4)
            top = Math.max(4, e.clientY - pad - r.height);
        tip.style.left = left + "px";
        tip.style.top = top + "px";
    }

    chart.addEventListener("click", (e) => {
        const el = e.target.closest(".fr");
        if (!el)
            return;
        const v = +el.dataset.n;
        zoomTo(v);
        if (func[v] >= 0)
            select(func[v]);
    });
    chart.addEventListener("mousemove", (e) => {
        const el = e.target.closest(".fr");
        if (el)
            showTip(e, +el.dataset.n);
        else
            tip.hidden = true;
    });
    chart.addEventListener("mouseleave", () => { tip.hidden = true; });
    let pending = false;
    chart.addEventListener("scroll", () => {
        if (pending)
            return;
        pending = true;
        requestAnimationFrame(() => {
            pending = false;
            draw();
        });
    });
    $("crumbs").addEventListener("click", (e) => {
        const b = e.target.closest("button");
        if (b)
            zoomTo(+b.dataset.n);
    });
    $("reset").addEventListener("click", () => zoomTo(ALL));
    window.addEventListener("resize", () => {
        if (n && frames.clientWidth !== lastWidth)
            layout();
    });
    document.addEventListener("keydown", (e) => {
        if (e.key === "Escape" && document.activeElement !== $("filter"))
            zoomTo(ALL);
        else if (e.key === "/" && document.activeElement !== $("filter")) {
            e.preventDefault();
            $("filter").focus();
        }
    });

    /* ---- the table ----------------------------------------------------------------------- */

    const keys = {
        nc: (f) => F.nc[f],
        tt: (f) => F.tt[f],
        ttp: (f) => F.nc[f] ? F.tt[f] / F.nc[f] : -1,
        ct: (f) => F.ct[f],
        ctp: (f) => F.pc[f] ? F.ct[f] / F.pc[f] : -1,
    };
    const tbody = $("table").tBodies[0];
    /* Column widths, in characters of the numbers' font, from the largest numbers: the
     * table's layout is fixed (so that long paths cut), and a number must never be. */
    {
        let nc = 0, t = 0, twoCounts = false;
        for (let f = 0; f < nf; f++) {
            nc = Math.max(nc, F.nc[f]);
            t = Math.max(t, F.tt[f], F.ct[f]);
            twoCounts = twoCounts || F.nc[f] !== F.pc[f];
        }
        const digits = (x) => String(Math.floor(x)).length;
        const tw = COUNT ? digits(t) : digits(t) + 1 + decimals;
        const table = $("table").style;
        /* The headers' words, and the sort arrow, fit too. */
        table.setProperty("--nw", Math.max(8, twoCounts ? 2 * digits(nc) + 1 : digits(nc)));
        table.setProperty("--tw", Math.max(unitWords[0].length + 3, tw));
        table.setProperty("--pw", Math.max(10, COUNT ? digits(t) + 3 : tw));
    }
    let sortKey = "ct", sortDesc = true, shown = PAGE;
    let order = [];
    let rows = []; /* order, filtered */
    for (let f = 0; f < nf; f++)
        order.push(f);

    function sortRows() {
        if (sortKey === "name") {
            const s = new Array(nf);
            for (let f = 0; f < nf; f++)
                s[f] = stdName(f);
            order.sort((a, b) => s[a] < s[b] ? -1 : s[a] > s[b] ? 1 : a - b);
        } else {
            const k = new Float64Array(nf), get = keys[sortKey];
            for (let f = 0; f < nf; f++)
                k[f] = get(f);
            order.sort((a, b) => k[a] - k[b] || a - b);
        }
        if (sortDesc)
            order.reverse();
        for (const th of $("table").tHead.rows[0].cells) {
            const on = th.dataset.key === sortKey;
            th.classList.toggle("on", on);
            th.setAttribute("aria-sort", on ? (sortDesc ? "descending" : "ascending") : "none");
        }
    }

    function filterRows() {
        const q = $("filter").value.trim().toLowerCase();
        if (!q) {
            rows = order;
            matches = null;
            return;
        }
        if (!lower) {
            lower = new Array(nf);
            for (let f = 0; f < nf; f++)
                lower[f] = stdName(f).toLowerCase();
        }
        matches = new Uint8Array(nf);
        rows = [];
        for (const f of order)
            if (lower[f].includes(q)) {
                matches[f] = 1;
                rows.push(f);
            }
    }

    /* pstats' text, its file's directories dimmed; a cell too narrow for it loses the
     * start of the path (the CSS sets it right to left), not the function's name. */
    const fnCell = (f) => {
        const file = fileOf(f);
        let html;
        if (file === "~" && F.line[f] === 0) {
            html = '<span class="nm">' + esc(stdName(f)) + "</span>";
        } else {
            const slash = file.lastIndexOf("/") + 1;
            html = '<span class="dir">' + esc(file.slice(0, slash)) + "</span>" +
                   esc(file.slice(slash)) + ":" + F.line[f] + '(<span class="nm">' +
                   esc(shortName[f]) + "</span>)";
        }
        if (isWait[f])
            html += ' <span class="tag" title="a library call that waits">wait</span>';
        return '<td class="fn" title="' + esc(stdName(f)) + '"><bdi>' + html + "</bdi></td>";
    };
    const bar = (x, of) => of > 0 ? ' style="--w:' + Math.min(100, 100 * x / of).toFixed(1) + '%"'
                                  : "";

    function renderTable() {
        const html = [];
        const end = Math.min(rows.length, shown);
        for (let i = 0; i < end; i++) {
            const f = rows[i];
            html.push('<tr tabindex="0" data-f="' + f + '"' +
                      (f === selected ? ' class="sel"' : "") +
                      '><td class="num">' + ncalls(F.nc[f], F.pc[f]) + '</td><td class="num b"' +
                      bar(F.tt[f], ttAll) + ">" + sec(F.tt[f]) + '</td><td class="num">' +
                      per(F.tt[f], F.nc[f]) + '</td><td class="num b"' + bar(F.ct[f], ttAll) + ">" +
                      sec(F.ct[f]) + '</td><td class="num">' + per(F.ct[f], F.pc[f]) +
                      '</td>' + fnCell(f) + "</tr>");
        }
        tbody.innerHTML = html.join("");
        $("count").textContent = rows.length === nf
                                     ? group(nf) + " functions"
                                     : group(rows.length) + " of " + group(nf) + " functions";
        const more = $("more");
        if (end < rows.length)
            more.innerHTML = "<span>Showing " + group(end) + " of " + group(rows.length) +
                             '.</span> <button type="button" data-more="' + PAGE + '">Show ' +
                             Math.min(PAGE, rows.length - end) + ' more</button> <button ' +
                             'type="button" data-more="all">Show all</button>';
        else
            more.textContent = rows.length ? "" : "No function matches the filter.";
    }

    $("table").tHead.addEventListener("click", (e) => {
        const th = e.target.closest("th");
        if (!th)
            return;
        if (th.dataset.key === sortKey)
            sortDesc = !sortDesc;
        else {
            sortKey = th.dataset.key;
            sortDesc = sortKey !== "name";
        }
        sortRows();
        filterRows();
        renderTable();
    });
    $("filter").addEventListener("input", () => {
        shown = PAGE;
        filterRows();
        renderTable();
        restyle();
    });
    $("more").addEventListener("click", (e) => {
        const b = e.target.closest("button");
        if (!b)
            return;
        shown = b.dataset.more === "all" ? rows.length : shown + PAGE;
        renderTable();
    });
    tbody.addEventListener("click", (e) => {
        const tr = e.target.closest("tr");
        if (tr)
            select(+tr.dataset.f);
    });
    tbody.addEventListener("keydown", (e) => {
        const tr = e.target.closest("tr");
        if (tr && e.key === "Enter")
            select(+tr.dataset.f);
    });

    /* ---- the selected function: its callers and callees, cProfile's edge numbers ------- */

    let E = D.edges;

    function edgeTable(id, title, list, other) {
        list.sort((a, b) => E[b + 5] - E[a + 5] || E[b + 2] - E[a + 2]);
        let html = "<h3>" + title + ' <span class="muted">' + list.length + "</span></h3>";
        if (!list.length)
            return html + '<p class="muted none">none</p>';
        html += '<table id="' + id + '" class="edges"><thead><tr><th class="num">ncalls</th>' +
                '<th class="num">' + unitWords[0] + '</th><th class="num">' + unitWords[1] +
                "</th><th>function</th></tr></thead><tbody>";
        for (const e of list) {
            const g = E[e + other];
            html += '<tr data-f="' + g + '"><td class="num">' + ncalls(E[e + 2], E[e + 3]) +
                    '</td><td class="num">' + sec(E[e + 4]) + '</td><td class="num">' +
                    sec(E[e + 5]) + '</td><td class="fn" title="' + esc(stdName(g)) + '">' +
                    '<span class="nm">' + esc(label[g]) + '</span> <span class="dir">' +
                    esc(where(g).replace(/^.*\//, "")) + "</span></td></tr>";
        }
        return html + "</tbody></table>";
    }

    function select(f) {
        selected = f;
        const callers = [], callees = [];
        for (let e = 0; e < E.length; e += 6) {
            if (E[e + 1] === f)
                callers.push(e);
            if (E[e] === f)
                callees.push(e);
        }
        const d = $("detail");
        d.innerHTML =
            '<h2 class="fname">' + esc(label[f]) + '</h2><div class="muted loc">' +
            esc(where(f)) + "</div>" +
            '<dl class="kv"><div><dt>ncalls</dt><dd>' + ncalls(F.nc[f], F.pc[f]) + "</dd></div>" +
            "<div><dt>" + unitWords[0] + "</dt><dd>" + sec(F.tt[f]) + ' <span class="muted">' +
            pct(F.tt[f], ttAll) + "</span></dd></div><div><dt>" + unitWords[1] + "</dt><dd>" +
            sec(F.ct[f]) + ' <span class="muted">' + pct(F.ct[f], ttAll) +
            "</span></dd></div></dl>" +
            (n ? '<button type="button" id="find">Zoom the chart to its heaviest path</button>'
               : "") +
            edgeTable("callers", "Called by", callers, 0) +
            edgeTable("callees", "Calls", callees, 1);
        for (const tr of tbody.rows)
            tr.classList.toggle("sel", +tr.dataset.f === f);
        restyle();
    }

    $("detail").addEventListener("click", (e) => {
        if (e.target.id === "find") {
            let best = -1;
            for (let v = 0; v < n; v++)
                if (func[v] === selected && (best < 0 || incl[v] > incl[best]))
                    best = v;
            if (best >= 0)
                zoomTo(best);
            return;
        }
        const tr = e.target.closest("tr[data-f]");
        if (tr)
            select(+tr.dataset.f);
    });

    /* ---- without waits: the same page with the waits' time taken out ---------------------- */

    if (NW) {
        const withWaits = {tt: F.tt, ct: F.ct, edges: D.edges, ttAll};
        const edgesNW = D.edges.slice();
        for (let e = 0, k = 0; e < edgesNW.length; e += 6, k += 2) {
            edgesNW[e + 4] = NW.edges[k];
            edgesNW[e + 5] = NW.edges[k + 1];
        }
        let ttNW = 0;
        for (let f = 0; f < nf; f++)
            ttNW += NW.tt[f];
        $("waitsw").hidden = false;
        $("nowait").addEventListener("change", (e) => {
            const off = e.target.checked;
            F.tt = off ? NW.tt : withWaits.tt;
            F.ct = off ? NW.ct : withWaits.ct;
            E = off ? edgesNW : withWaits.edges;
            ttAll = off ? ttNW : withWaits.ttAll;
            values(off ? NW.incl : T.incl);
            if (n)
                layout();
            sortRows();
            filterRows();
            renderTable();
            if (selected >= 0)
                select(selected);
        });
    }

    /* ---- first render ---------------------------------------------------------------------- */

    /* The chart first: its width is read while the page is still small, so the browser
     * lays the whole page out once, after this script. */
    if (n) {
        layout();
    } else {
        chart.outerHTML = '<p class="empty">This profile has no call paths.</p>';
        $("reset").hidden = true;
        app.querySelector("#flame .hint").hidden = true;
    }
    sortRows();
    filterRows();
    renderTable();
    let hottest = -1;
    for (let f = 0; f < nf; f++)
        if (fileOf(f) !== "~" && (hottest < 0 || F.tt[f] > F.tt[hottest]))
            hottest = f;
    if (hottest >= 0)
        select(hottest);
    else
        $("detail").innerHTML =
            '<p class="muted">Click a function to see its callers and callees.</p>';
    /* For tests and the curious: how long this script took, and how much it drew. */
    window.fnprofReport = {
        scriptMs: performance.now() - t0,
        readyMs: performance.now(),
        nodes: n,
        functions: nf,
        frames: lay ? lay.node.length : 0,
    };
    /* The first frame after this script: the page laid out and painted. */
    requestAnimationFrame(() => setTimeout(() => {
        window.fnprofReport.paintedMs = performance.now();
        document.documentElement.dataset.ready = "1";
    }));
})();
