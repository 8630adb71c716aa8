#!/usr/bin/env python3
"""fnprof convert --to speedscope and --to collapsed, opened in speedscope's own app.

The app is the `speedscope` package of the npm registry, pinned (PIN), installed once into a
cache the tests own (--cache; `npm install --prefix CACHE speedscope@PIN`) and reused. Its
built web app (node_modules/speedscope/dist/release/) and the profile are served by an http
server of this script's own on 127.0.0.1, and the page is opened in headless Chromium
(tests/views/html/cdp.py) at index.html#profileURL=<the profile's URL>, the way speedscope's
web app imports a profile from a URL. Through the page, for each file:
  - it loaded: the title names the profile, no "Something went wrong", no console error,
    exception or alert (alerts are turned into console errors before the app loads), no
    request but to the test's server;
  - the profile selector lists one profile per thread (speedscope file) or one for the
    whole file (collapsed), named as the tree names them, each with the total weight the
    app computed, against the tree's total for that thread;
  - per profile, the Sandwich view's table: one row per function the thread ran, named by
    fnprof's labels, with the Total and Self the app computed against the tree (Total: the
    own values of every context whose path holds the function; in the collapsed file the
    threads are root frames, so their Totals are the threads' totals).
The app formats times with two decimals ("1.27ms") and counts with toLocaleString
("1,274,205"); a time matches within half its last digit, plus 1 ns per context (fnprof
rounds each context's own value to integer ns).
The checks must reject a wrong file: a weight doubled and a frame index out of range are
caught. Skips (77) when npm, the registry or chromium is missing. python3 standard library
only (plus the npm client to install the app).
"""
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import viewlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "html"))
import cdp  # noqa: E402  pylint: disable=wrong-import-position

fnptree = viewlib.fnptree
PIN = "1.25.0"  # `npm view speedscope version` when this test was written
TIME_UNITS = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}
# Before the app's script: an alert would block the page (and every later command).
NO_DIALOGS = "window.alert = m => console.error('alert: ' + m);"
LOADED = ("document.title.endsWith(' - speedscope') || "
          "document.body.innerText.includes('Something went wrong')")
# The profile shown, as the toolbar names it: "thread 2 (2/2)".
SHOWN_JS = """[...document.querySelectorAll('span')].map(s => s.textContent)
  .find(t => / [(][0-9]+[/][0-9]+[)]$/.test(t)) || null"""
TABLES_JS = """[...document.querySelectorAll('table')].map(t =>
  [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.textContent)))"""


def extra_args(ap):
    ap.add_argument("--cache", required=True,
                    help="where npm installs the app; reused when it holds the pinned version")


def install(cache):
    """dist/release of the pinned app, installing it when the cache lacks it; or a reason to
    skip."""
    pkg = os.path.join(cache, "node_modules", "speedscope")
    try:
        with open(os.path.join(pkg, "package.json"), encoding="utf-8") as f:
            have = json.load(f).get("version")
    except (OSError, ValueError):
        have = None
    if have != PIN:
        npm = shutil.which("npm")
        if not npm:
            return None, "no npm on PATH (Debian: apt-get install nodejs npm)"
        os.makedirs(cache, exist_ok=True)
        cmd = [npm, "install", "--prefix", cache, "speedscope@" + PIN, "--no-audit", "--no-fund",
               "--no-update-notifier"]
        print("$ " + " ".join(cmd), flush=True)
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        except subprocess.TimeoutExpired:
            return None, "npm install speedscope@%s took over 300 s" % PIN
        if r.returncode != 0:
            # npm's first error lines say why (its code, its message); the last, where its log is.
            lines = [l for l in r.stderr.decode(errors="replace").splitlines()
                     if l.startswith("npm error") and "complete log" not in l]
            return None, "npm install speedscope@%s failed (registry unreachable?): %s" % (
                PIN, "; ".join(lines[:2]) if lines else "exit %d" % r.returncode)
    dist = os.path.join(pkg, "dist", "release")
    if not os.path.exists(os.path.join(dist, "index.html")):
        return None, "%s has no index.html" % dist
    return dist, None


class Server:
    """The app's files and the profiles under test, on 127.0.0.1 at a free port."""

    def __init__(self, dist, profiles):
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def translate_path(self, path):
                name = path.split("?", 1)[0].lstrip("/")
                if name in profiles:
                    return profiles[name]
                return super().translate_path(path)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     functools.partial(Quiet, directory=dist))
        self.port = self.httpd.server_address[1]
        self.base = "http://127.0.0.1:%d/" % self.port
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def parse_value(text, unit):
    """A number the app shows, without its "(12%)": ns for a time, the number for a count."""
    text = re.sub(r"\s*\([^)]*%\)\s*$", "", text.strip())
    if unit == "none":
        return float(text.replace(",", ""))
    m = re.fullmatch(r"(-?[0-9.]+)(ns|\u00b5s|ms|s)", text)
    if not m:
        raise ValueError("not a time: %r" % text)
    return float(m.group(1)) * TIME_UNITS[m.group(2)]


def near(shown, want, unit, slack):
    """shown (as the app formats) holds want, within the display's rounding and slack."""
    try:
        got = parse_value(shown, unit)
    except ValueError:
        return False
    if unit == "none":
        return abs(got - want) <= slack
    digit = next(m for m in (1e9, 1e6, 1e3, 1) if want >= m or m == 1)
    return abs(got - want) <= 0.005 * digit + slack + 1e-9


def expected(stats, tree, collapsed):
    """[(profile name, {label: (total, self, contexts)}, total, contexts)]: what the app should
    compute, per profile."""
    labels = viewlib.labels(stats)
    several = len(tree.threads) > 1
    groups = [(None, list(range(len(tree.threads))))] if collapsed else \
        [(tree.threads[t], [t]) for t in range(len(tree.threads))]
    out = []
    for name, threads in groups:
        funcs, total, contexts = {}, 0, 0
        for n in tree.nodes:
            if n.thread not in threads:
                continue
            own = viewlib.ns(tree, tree.self_value(n))
            if not own:
                continue
            path = [labels[k] for k in tree.path(n)]
            if collapsed and several:
                path.insert(0, tree.threads[n.thread])
            total, contexts = total + own, contexts + 1
            # Recursion: the app counts a stack once in a function's total.
            for label in set(path):
                t, s, c = funcs.get(label, (0, 0, 0))
                funcs[label] = (t + own, s + (own if label == path[-1] else 0), c + 1)
        out.append((name, funcs, total, contexts))
    return out


def open_profile(page, server, name):
    # A new document each time: a change of the hash alone would not reload the app.
    page.navigate("about:blank", ready="true")
    page.navigate(server.base + "index.html#profileURL=" + server.base + name, ready=LOADED)
    problems = [p for p in page.problems() if not p.startswith("a request for " + server.base)]
    if "Something went wrong" in page.eval("document.body.innerText"):
        problems.append("the app says 'Something went wrong'")
    return problems


def press(page, key):
    page.eval("window.dispatchEvent(new KeyboardEvent('keypress', {key: %s, bubbles: true}))"
              % json.dumps(key))
    time.sleep(0.2)  # the app renders on its next frame


def check_file(v, page, server, where, name, want, unit, title):
    """The app's view of profile file `name` against want (expected())."""
    for p in open_profile(page, server, name):
        v.check(False, "%s: %s" % (where, p))
    v.check(page.eval("document.title") == title + " - speedscope", "%s: title %r, want %r"
            % (where, page.eval("document.title"), title + " - speedscope"))
    press(page, "3")  # the Sandwich view
    tables = page.eval(TABLES_JS)
    # The selector, a table headed "#", is there when there are several profiles.
    selector = [r for r in (tables[0] if tables and tables[0][0][0] == "#" else [])
                if r and r[0] != "#"]
    v.check(len(want) == 1 or [r[1] for r in selector] == [w[0] for w in want],
            "%s: profiles %r, want %r" % (where, [r[1] for r in selector],
                                          [w[0] for w in want]))
    for i, (pname, funcs, total, contexts) in enumerate(want):
        pname = pname or title
        if i < len(selector):
            v.check(near(selector[i][2], total, unit, contexts),
                    "%s: %s: the app's total weight %s, the tree's %d" % (
                        where, pname, selector[i][2], total))
        if i:
            press(page, "n")
        tables = page.eval(TABLES_JS)
        shown = page.eval(SHOWN_JS)
        v.check(len(want) == 1 or shown == "%s (%d/%d)" % (pname, i + 1, len(want)),
                "%s: showing %r, want profile %d" % (where, shown, i + 1))
        rows = {r[2]: r for r in (tables[-1] if tables else []) if len(r) == 3 and r[0] != "Total"}
        v.check(set(rows) == set(funcs), "%s: %s: the sandwich's functions: missing %s, "
                "extra %s" % (where, pname, sorted(set(funcs) - set(rows))[:4],
                              sorted(set(rows) - set(funcs))[:4]))
        for label, (t, s, c) in sorted(funcs.items()):
            if label in rows:
                r = rows[label]
                v.check(near(r[0], t, unit, c) and near(r[1], s, unit, c),
                        "%s: %s: %s: Total %s, Self %s; the tree %d, %d" % (
                            where, pname, label, r[0], r[1], t, s))


def check_profile(v, page, server, prof, files):
    stats, tree = fnptree.read(prof)
    base = os.path.basename(prof)
    timed = tree.kind != fnptree.KIND_CALLS
    # speedscope names a collapsed profile after its file (the URL's last part).
    check_file(v, page, server, base + " as speedscope", files["speedscope"],
               expected(stats, tree, False), "nanoseconds" if timed else "none", prof)
    check_file(v, page, server, base + " as collapsed", files["collapsed"],
               expected(stats, tree, True), "none", files["collapsed"])


def self_check(v, page, server, prof, doc_path, workdir, profiles):
    """The checks reject a file whose numbers or frames are wrong."""
    stats, tree = fnptree.read(prof)
    with open(doc_path, encoding="utf-8") as f:
        doc = json.load(f)
    bad_weight = json.loads(json.dumps(doc))
    bad_weight["profiles"][-1]["weights"][0] *= 2
    bad_weight["profiles"][-1]["endValue"] += bad_weight["profiles"][-1]["weights"][0] // 2
    bad_frame = json.loads(json.dumps(doc))
    bad_frame["profiles"][0]["samples"][0][-1] = len(doc["shared"]["frames"]) + 5
    for label, d in (("weight doubled", bad_weight), ("frame index out of range", bad_frame)):
        name = "bad-%s.speedscope.json" % label.split()[0]
        path = os.path.join(workdir, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(d, f)
        profiles[name] = path
        probe = viewlib.Verdict("self-check")
        check_file(probe, page, server, "bad " + label, name, expected(stats, tree, False),
                   "nanoseconds" if tree.kind != fnptree.KIND_CALLS else "none", prof)
        v.check(probe.problems, "the app checks accept a file with a %s" % label)
        print("self-check, %s: %s" % (label, probe.problems[0] if probe.problems else "accepted"))


def main():
    a = viewlib.args(extra_args)
    v = viewlib.Verdict("speedscope app")
    exe = cdp.Browser.find()
    if not exe:
        print("SKIP: no chromium on PATH (Debian: apt-get install chromium)")
        return viewlib.SKIP
    dist, why = install(a.cache)
    if not dist:
        print("SKIP: " + why)
        return viewlib.SKIP
    profiles, files = {}, {}
    for base in ("paths", "paths-count"):
        prof = os.path.join(a.workdir, base + ".prof")
        files[base] = {}
        for fmt, ext in (("speedscope", ".speedscope.json"), ("collapsed", ".collapsed.txt")):
            out = os.path.join(a.workdir, base + ext)
            viewlib.convert(a.fnprof, prof, fmt, out=out)
            profiles[base + ext] = out
            files[base][fmt] = base + ext
    server = Server(dist, profiles)
    try:
        with cdp.Browser(exe) as browser:
            page = browser.page()
            page.cmd("Page.addScriptToEvaluateOnNewDocument", source=NO_DIALOGS)
            for base in ("paths", "paths-count"):
                check_profile(v, page, server, os.path.join(a.workdir, base + ".prof"),
                              files[base])
            self_check(v, page, server, os.path.join(a.workdir, "paths.prof"),
                       profiles["paths.speedscope.json"], a.workdir, profiles)
            page.close()
    finally:
        server.close()
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
