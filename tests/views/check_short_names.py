"""fnprof convert and report with and without --short-names, on a real C++ program.

    check_short_names.py --fnprof PATH --workdir DIR --lib-dir DIR [--cxx g++]

Builds progs/cxx/ (three translation units with static initialisers; std::string, wstring,
vector, map, unordered_map, shared_ptr, lambdas, operators, nested and anonymous
namespaces, templates) with -finstrument-functions, runs it, and checks:
- every view by default (collapsed, speedscope, flame graph, HTML, dot, callgrind) names
  the functions as debuggers do: the expected short labels, no libstdc++ spelling left;
- no two functions share a label (speedscope lists every function once);
- --no-short-names gives the keys' names, as does fnprof report by default; report
  --short-names the short ones, in the time table and in the memory table (--memory);
- the pstats file's keys are the symbolizer's full names, static initialisers and
  _GLOBAL__sub_I_ included (demangled).
Exits 77 when no C++ compiler is found. python3 standard library only.
"""
import html as htmllib
import json
import os
import re
import shutil
import subprocess
import sys

import viewlib
from viewlib import fnptree

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "progs", "cxx")

# What each function of progs/cxx must be called, by default, in every view.
SHORT = [
    "main",
    "static initialisers of main.cpp",
    "static initialisers of index.cpp",
    "static initialisers of load.cpp",
    "global constructors of main.cpp",
    "global constructors of index.cpp",
    "global constructors of load.cpp",
    "cfg::load(std::map<std::string, std::vector<int>> const&)",
    "cfg::detail::index(std::vector<cfg::detail::node> const&)",
    "cfg::parse(std::string const&)",
    "cfg::parse(std::wstring const&)",
    "cfg::total(std::vector<std::string> const&, std::wstring const&)",
    "cfg::total(std::vector<std::string> const&, std::wstring const&)::"
    "{lambda(std::string const&)#1}::operator()(std::string const&) const",
    "int cfg::twice<int>(std::vector<int> const&)",
    "std::string cfg::twice<std::string>(std::vector<std::string> const&)",
    "main::{lambda(int)#1}::operator()(int) const",
    "cfg::detail::node::operator<(cfg::detail::node const&) const",
    "cfg::detail::node::operator()(int) const",
    "cfg::detail::operator<<(std::ostream&, cfg::detail::node const&)",
    "(anonymous namespace)::local_helper(std::string const&)",
]
# Spellings a short label never has.
LONG = ("__cxx11", "std::allocator", "std::char_traits", "std::less", "std::hash",
        "basic_string", "[abi:", "__static_initialization", "_GLOBAL__")


def build(a, work):
    cxx = shutil.which(a.cxx)
    if not cxx:
        print("SKIP: no C++ compiler (%s)" % a.cxx)
        sys.exit(viewlib.SKIP)
    exe = os.path.join(work, "names")
    srcs = sorted(os.path.join(SRC, f) for f in os.listdir(SRC) if f.endswith(".cpp"))
    subprocess.run([cxx, "-O0", "-g", "-finstrument-functions",
                    "-finstrument-functions-exclude-file-list=/usr/include"] + srcs +
                   ["-o", exe, "-L" + a.lib_dir, "-Wl,-rpath," + a.lib_dir, "-lfnprof"],
                   check=True)
    prof = os.path.join(work, "names.prof")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    subprocess.run([exe], env=dict(env, PROF_OUTPUT=prof, PROF_QUIET="1",
                                   PROF_MEMORY=prof + ".mem"), check=True)
    return prof


def collapsed_names(text):
    names = set()
    for line in text.splitlines():
        names.update(line.rsplit(" ", 1)[0].split(";"))
    return names


def views(a, prof, work, extra):
    """{view: text} for each view, with extra options."""
    out = {}
    for fmt in ("collapsed", "speedscope", "flamegraph", "html", "dot", "callgrind"):
        path = os.path.join(work, "names.%s%s" % (fmt, "".join(extra)))
        every = ["--node-threshold", "0", "--edge-threshold", "0"] if fmt == "dot" else []
        viewlib.convert(a.fnprof, prof, fmt, out=path, extra=extra + every)
        with open(path, encoding="utf-8") as f:
            out[fmt] = f.read()
    return out


def shown(v, fmt, text, name):
    """Whether the view fmt shows the function label name."""
    if fmt == "collapsed":
        return name in collapsed_names(text)
    if fmt == "speedscope":
        return name in [fr["name"] for fr in json.loads(text)["shared"]["frames"]]
    if fmt == "html":
        d = json.loads(re.search(r'id="fnprof-data">(.*?)</script>', text, re.S).group(1))
        labels = list(d["funcs"]["name"])
        for i, l in d["labels"]:
            labels[i] = l
        return name in labels
    if fmt == "flamegraph":
        return ("<title>" + htmllib.escape(name, quote=True)) in text or \
            ("<title>" + htmllib.escape(name, quote=False)) in text
    if fmt == "dot":
        # graphviz decodes entities: views/dot.c writes & as &amp;
        esc = name.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
        return ('label="%s\\n' % esc) in text
    if fmt == "callgrind":
        return re.search(r"^c?fn=\(\d+\) %s$" % re.escape(name), text, re.M) is not None
    raise AssertionError(fmt)


def main():
    def extra(ap):
        ap.add_argument("--lib-dir", required=True)
        ap.add_argument("--cxx", default="g++")
    a = viewlib.args(extra)
    work = os.path.join(a.workdir, "short-names")
    os.makedirs(work, exist_ok=True)
    prof = build(a, work)
    v = viewlib.Verdict("short names")
    stats, _ = fnptree.read(prof)
    keys = [k[2] for k in stats]

    # The file keeps the symbolizer's names: exact across runs, merges and diffs.
    v.check(keys.count("__static_initialization_and_destruction_0(int, int)") == 3 or
            keys.count("__static_initialization_and_destruction_0()") == 3,
            "the pstats keys lost gcc's static initialisers: %r" % keys)
    v.check(any("std::__cxx11::basic_string<char, std::char_traits<char>, "
                "std::allocator<char> >" in k for k in keys),
            "the pstats keys are not the demangled full names")
    v.check(not any(k.startswith("_GLOBAL__sub_I_") for k in keys),
            "a _GLOBAL__sub_I_ key left mangled: %r" % [k for k in keys if "_GLOBAL_" in k])
    v.check(any(k.startswith("global constructors keyed to cfg::load(") for k in keys),
            "_GLOBAL__sub_I__ZN3cfg4load... not demangled: %r" % keys)

    short = views(a, prof, work, [])
    for fmt, text in short.items():
        for name in SHORT:
            v.check(shown(v, fmt, text, name), "%s: no label %r" % (fmt, name))
        if fmt in ("collapsed", "speedscope"):
            names = collapsed_names(text) if fmt == "collapsed" else \
                [fr["name"] for fr in json.loads(text)["shared"]["frames"]]
            for n in names:
                v.check(not any(s in n for s in LONG), "%s: long spelling in %r" % (fmt, n))
    frames = [fr["name"] for fr in json.loads(short["speedscope"])["shared"]["frames"]]
    v.check(len(frames) == len(stats), "speedscope: %d frames for %d functions"
            % (len(frames), len(stats)))
    dup = sorted({f for f in frames if frames.count(f) > 1})
    v.check(not dup, "two functions share a label: %r" % dup)

    def html_data(text):
        return json.loads(re.search(r'id="fnprof-data">(.*?)</script>', text, re.S).group(1))
    table = {f: n for f, n in html_data(short["html"]).get("short", [])}
    for name in ("cfg::parse(std::wstring const&)", "static initialisers of main.cpp",
                 "cfg::detail::index(std::vector<cfg::detail::node> const&)"):
        v.check(name in table.values(), "html: the table's names lack %r" % name)

    full = views(a, prof, work, ["--no-short-names"])
    for fmt in ("collapsed", "speedscope"):
        got = collapsed_names(full[fmt]) if fmt == "collapsed" else \
            {fr["name"] for fr in json.loads(full[fmt])["shared"]["frames"]}
        want = set(viewlib.labels(stats).values())
        v.check(got <= want and (fmt == "collapsed" or got == want),
                "%s --no-short-names: not the keys' names: %r" % (fmt, sorted(got - want)[:5]))

    v.check("short" not in html_data(full["html"]), "html --no-short-names: short names")

    def report(*opts):
        path = prof + ".mem" if "--memory" in opts else prof
        r = subprocess.run([a.fnprof, "report", path, "-n", "0", "--no-meta"] + list(opts),
                           stdout=subprocess.PIPE, check=True)
        return r.stdout.decode()
    plain = report()
    v.check(plain == report("--no-short-names"), "report: --no-short-names is not the default")
    v.check("(__static_initialization_and_destruction_0(" in plain and "__cxx11" in plain,
            "report: the default is not the keys' names")
    rs = report("--short-names")
    for name in SHORT:
        v.check("(%s)\n" % name in rs, "report --short-names: no %r" % name)
    v.check("__cxx11" not in rs, "report --short-names: a long spelling left")
    # the memory table names functions as the time table does
    mem = report("--memory")
    v.check("__cxx11" in mem, "report --memory: the default is not the keys' names")
    ms = report("--memory", "--short-names")
    v.check("__cxx11" not in ms and "(main)\n" in ms and
            "(cfg::load(std::map<std::string, std::vector<int>> const&))\n" in ms,
            "report --memory --short-names: not the short names")
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
