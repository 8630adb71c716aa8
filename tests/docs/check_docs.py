#!/usr/bin/env python3
"""The manual checked against the program and the tree. One case per run (tests/docs.cmake).

    check_docs.py options NAME --fnprof BIN --cc BIN   NAME: a command (report, run, ...),
        `fnprof` (the global options) or `fnprof-cc`. The options `--help` prints (read now,
        from the built program) are exactly those its page (docs/cli/) lists under
        "## Options" and those fnprof(1) or fnprof-cc(1) lists for it (each .TP entry).
    check_docs.py commands --fnprof BIN   the commands `fnprof --help` lists are those with a
        page in docs/cli/, a section in fnprof(1), a row in docs/cli/fnprof.md, and a
        mention in the README; both man pages carry fnprof --version's version.
    check_docs.py links   every document the tree refers to is in it: markdown links and
        `docs/...`, `bench/...`, `tests/...` paths resolve; no upper-case NAME.md that is not
        in the tree; nothing points outside the repository by a relative path.
    check_docs.py man     the roff of both man pages formats without a warning (groff -ww).
    check_docs.py spdx    every source file carries its licence tag (scripts/spdx --check).
    check_docs.py snakeviz   the README's snakeviz line (a venv, for PEP 668) works offline
        as far as the install step.
    check_docs.py spdx-script   scripts/spdx itself, on scratch files: the comment syntax, a
        shebang kept first, line numbers kept where they are data, idempotence.
Exit 0 pass, 1 fail, 77 skipped (a tool missing; the reason is printed).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(SOURCE, "docs", "cli")
MAN = os.path.join(SOURCE, "docs", "man")
OPTION = re.compile(r"^--?[A-Za-z0-9][\w-]*$")
METAVAR = re.compile(r"^[A-Z][A-Z_|.]*$")


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def run(cmd, ok=True, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    if ok and p.returncode != 0:
        raise Failure("exit %d: %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p


def help_options(text):
    """Options of a --help text: the lines that begin (indented) with an option, read up to
    the first word that is neither an option nor a metavariable (KEY, FILE, ...)."""
    found = set()
    for line in text.splitlines():
        if not re.match(r"^ {1,8}-[A-Za-z0-9-]", line):
            continue
        for word in line.split():
            word = word.rstrip(",")
            if OPTION.match(word.split("=")[0]):
                found.add(word.split("=")[0])
            elif not METAVAR.match(word):
                break
    return found


def page_options(path):
    """Options in the first cell of each row of the page's "## Options" table."""
    text = open(path).read()
    m = re.search(r"^## Options\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        raise Failure("%s has no '## Options' section" % path)
    found = set()
    for row in m.group(1).splitlines():
        if not row.startswith("|") or set(row) <= set("|- "):
            continue
        cell = row.split("|")[1]
        for code in re.findall(r"`([^`]*)`", cell):
            for word in code.replace(",", " ").split():
                if OPTION.match(word):
                    found.add(word)
    found.discard("-")  # the table's own header row has no options; guard against "-"
    return found


def roff_text(line):
    line = re.sub(r"^\.(?:[BI]R?|R[BI]|B?I|TP|IP)\s*", "", line)
    line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\(aq", "'")
    return line.replace('"', " ")


def man_sections(path):
    """{section: set of options}: `fnprof` for .SH OPTIONS, a command for each .SS."""
    sections, name, after_tp = {}, None, False
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith(".SH"):
            name = "fnprof" if line.split()[1:2] == ["OPTIONS"] else None
            if name:
                sections.setdefault(name, set())
        elif line.startswith(".SS"):
            words = roff_text(line[3:]).split()
            name = words[1] if len(words) > 1 and words[0] == "fnprof" else None
            if name:
                sections.setdefault(name, set())
        elif line.startswith(".TP"):
            after_tp = True
            continue
        elif after_tp and name:
            for word in roff_text(line).replace(",", " ").split():
                if OPTION.match(word):
                    sections[name].add(word)
        after_tp = False
    return sections


def compare(what, expected, got):
    if expected != got:
        raise Failure("%s: missing %s, extra %s (--help lists %s)"
                      % (what, sorted(expected - got) or "none", sorted(got - expected) or "none",
                         sorted(expected)))


def case_options(a):
    name = a.name
    if name == "fnprof-cc":
        text = run([a.cc, "--fnprof-help"]).stdout
        page, man, section = os.path.join(CLI, "fnprof-cc.md"), "fnprof-cc.1", "fnprof"
    elif name == "fnprof":
        text = run([a.fnprof, "--help"]).stdout
        page, man, section = os.path.join(CLI, "fnprof.md"), "fnprof.1", "fnprof"
    else:
        p = run([a.fnprof, name, "--help"], ok=False)
        if p.returncode != 0:
            raise Failure("fnprof %s --help: exit %d: %s" % (name, p.returncode, p.stderr))
        text = p.stdout
        page, man, section = os.path.join(CLI, "fnprof-%s.md" % name), "fnprof.1", name
    expected = help_options(text)
    if not expected or "--help" not in expected and name != "fnprof-cc":
        raise Failure("read no options (or no --help) from the help:\n" + text)
    if not os.path.exists(page):
        raise Failure("no page " + os.path.relpath(page, SOURCE))
    compare(os.path.relpath(page, SOURCE), expected, page_options(page))
    sections = man_sections(os.path.join(MAN, man))
    if section not in sections:
        raise Failure("%s has no section for %s" % (man, name))
    compare("%s, %s" % (man, "OPTIONS" if section == "fnprof" else "fnprof " + name),
            expected, sections[section])
    print("%s: %s" % (name, " ".join(sorted(expected))))


def case_commands(a):
    text = run([a.fnprof, "--help"]).stdout
    m = re.search(r"^Commands:\n(.*?)\n\n", text, re.M | re.S)
    if not m:
        raise Failure("no Commands: in fnprof --help")
    commands = {line.split()[0] for line in m.group(1).splitlines() if line.strip()}
    pages = {f[len("fnprof-"):-3] for f in os.listdir(CLI)
             if f.startswith("fnprof-") and f.endswith(".md")} - {"cc"}
    compare("docs/cli/fnprof-*.md", commands, pages)
    compare("fnprof.1 sections", commands, set(man_sections(os.path.join(MAN, "fnprof.1")))
            - {"fnprof"})
    index = open(os.path.join(CLI, "fnprof.md")).read()
    listed = set(re.findall(r"^\| \[`([\w-]+)`\]\(fnprof-[\w-]+\.md\)", index, re.M))
    compare("docs/cli/fnprof.md's table", commands, listed)
    version = run([a.fnprof, "--version"]).stdout.split()[-1]
    for page in ("fnprof.1", "fnprof-cc.1"):
        th = [l for l in open(os.path.join(MAN, page)) if l.startswith(".TH ")]
        if not th or '"fnprof %s"' % version not in th[0]:
            raise Failure("%s's .TH line does not say fnprof %s: %s" % (page, version, th))
    readme = open(os.path.join(SOURCE, "README.md")).read()
    unmentioned = sorted(c for c in commands if "fnprof %s" % c not in readme)
    if unmentioned:
        raise Failure("README.md never mentions: " + ", ".join("fnprof " + c for c in unmentioned))
    print("commands: " + " ".join(sorted(commands)))


def tree_files():
    if not shutil.which("git") or not os.path.isdir(os.path.join(SOURCE, ".git")):
        raise Skip("git or the repository's .git is missing: the tree's files cannot be listed")
    out = run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
              cwd=SOURCE).stdout
    return [f for f in out.splitlines() if os.path.isfile(os.path.join(SOURCE, f))]


LINK = re.compile(r"\]\(([^)\s]+)\)")
TREE_PATH = re.compile(r"(?<![\w./-])((?:docs|bench|tests|examples|scripts|cmake)/[\w./-]*\w)")
UPPER_MD = re.compile(r"(?<![\w/.-])([A-Z][A-Z0-9_-]+\.md)\b")


def case_links(a):
    files = tree_files()
    names = {os.path.basename(f) for f in files}
    problems = []
    for f in files:
        if f.startswith(("bench/results/", "tests/data/")) or f == "tests/docs/check_docs.py":
            continue
        try:
            text = open(os.path.join(SOURCE, f), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        if "../shared" in text or "/work/shared" in text:
            problems.append("%s: refers to ../shared, outside the repository" % f)
        for name in UPPER_MD.findall(text):
            if name not in names:
                problems.append("%s: refers to %s, which is not in the tree" % (f, name))
        if f.endswith(".md"):
            for target in LINK.findall(text):
                if re.match(r"^(?:[a-z]+:|#)", target):
                    continue
                path = os.path.normpath(os.path.join(SOURCE, os.path.dirname(f),
                                                     target.split("#")[0]))
                if not path.startswith(SOURCE + os.sep) or not os.path.exists(path):
                    problems.append("%s: link to %s, which does not exist" % (f, target))
        for path in TREE_PATH.findall(text):
            if path.endswith((".md", ".txt")) and "*" not in path and "<" not in path:
                if not os.path.exists(os.path.join(SOURCE, path)):
                    problems.append("%s: names %s, which does not exist" % (f, path))
    if problems:
        raise Failure("\n".join(sorted(set(problems))))
    print("checked %d files" % len(files))


def case_man(a):
    if not shutil.which("groff"):
        raise Skip("groff is not installed (apt-get install groff-base)")
    for page in ("fnprof.1", "fnprof-cc.1"):
        p = run(["groff", "-man", "-Tutf8", "-ww", "-z", os.path.join(MAN, page)], ok=False)
        if p.returncode != 0 or p.stderr:
            raise Failure("groff on %s: exit %d\n%s" % (page, p.returncode, p.stderr))
    print("fnprof.1 and fnprof-cc.1 format cleanly")


def case_spdx(a):
    if not shutil.which("git"):
        raise Skip("git is not installed: the tree's files cannot be listed")
    p = run([sys.executable, os.path.join(SOURCE, "scripts", "spdx"), "--check"], ok=False)
    print(p.stdout, end="")
    if p.returncode != 0:
        raise Failure("source files without their licence tag (run scripts/spdx)")


def case_spdx_script(a):
    files = {
        "src/a.c": b"/* a */\nint a;\n",
        "src/run": b"#!/usr/bin/env bash\necho run\n",
        "src/tool.py": b"#!/usr/bin/env python3\nprint(1)\n",
        "src/CMakeLists.txt": b"project(x C)\n",
        "tests/prog.c": b"int square(int x)\n{\n    return x * x;\n}",
        "src/notes.txt": b"not a source file\n",
        "src/done.h": b"/* SPDX-License-Identifier: MIT */\nint d;\n",
    }
    want = {
        "src/a.c": b"/* SPDX-License-Identifier: MIT */\n/* a */\nint a;\n",
        "src/run": b"#!/usr/bin/env bash\n# SPDX-License-Identifier: MIT\necho run\n",
        "src/tool.py": b"#!/usr/bin/env python3\n# SPDX-License-Identifier: MIT\nprint(1)\n",
        "src/CMakeLists.txt": b"# SPDX-License-Identifier: MIT\nproject(x C)\n",
        "tests/prog.c": b"int square(int x)\n{\n    return x * x;\n}\n"
                        b"/* SPDX-License-Identifier: MIT */\n",
        "src/notes.txt": b"not a source file\n",
        "src/done.h": b"/* SPDX-License-Identifier: MIT */\nint d;\n",
    }
    script = os.path.join(SOURCE, "scripts", "spdx")
    with tempfile.TemporaryDirectory() as root:
        for rel, data in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "wb") as f:
                f.write(data)
        os.chmod(os.path.join(root, "src/run"), 0o755)
        paths = [os.path.join(root, rel) for rel in files]
        p = run([sys.executable, script, "--root", root, "--check"] + paths, ok=False)
        if p.returncode != 1:
            raise Failure("--check on untagged files: exit %d\n%s" % (p.returncode, p.stdout))
        for rel, data in files.items():
            if open(os.path.join(root, rel), "rb").read() != data:
                raise Failure("--check changed " + rel)
        for attempt in (1, 2):
            run([sys.executable, script, "--root", root] + paths)
            for rel, data in want.items():
                got = open(os.path.join(root, rel), "rb").read()
                if got != data:
                    raise Failure("run %d, %s:\n%r\nnot\n%r" % (attempt, rel, got, data))
        if not os.access(os.path.join(root, "src/run"), os.X_OK):
            raise Failure("src/run lost its executable bit")
        run([sys.executable, script, "--root", root, "--check"] + paths)
    print("scripts/spdx: tags placed, shebangs first, test lines unmoved, idempotent")


def case_snakeviz(a):
    """The README's snakeviz line gets past PEP 668 on this Python, without the network: the
    venv it makes has a pip of its own, which reaches the index step (offline: no match)
    instead of refusing an externally managed environment."""
    readme = open(os.path.join(SOURCE, "README.md")).read()
    m = re.search(r"python3 -m venv (\S+) && \1/bin/pip install snakeviz", readme)
    if not m:
        raise Failure("README.md has no 'python3 -m venv DIR && DIR/bin/pip install snakeviz'")
    demo = open(os.path.join(SOURCE, "scripts", "demo")).read()
    if "python3 -m venv $venv && $venv/bin/pip install snakeviz" not in demo:
        raise Failure("scripts/demo does not print the README's venv line")
    p = run([sys.executable, "-c", "import ensurepip, venv"], ok=False)
    if p.returncode != 0:
        raise Skip("this Python has no venv/ensurepip (apt-get install python3-venv)")
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "snakeviz")
        run([sys.executable, "-m", "venv", venv])
        pip = os.path.join(venv, "bin", "pip")
        if not os.access(pip, os.X_OK):
            raise Failure("the venv has no bin/pip")
        p = run([pip, "install", "--no-index", "snakeviz"], ok=False,
                env=dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS=""))
        if "externally-managed" in p.stdout + p.stderr:
            raise Failure("the venv's pip refuses to install:\n" + p.stderr)
    print("README's line: python3 -m venv %s && ... pip install snakeviz: a venv pip installs in"
          % m.group(1))


CASES = {"options": case_options, "commands": case_commands, "links": case_links,
         "man": case_man, "spdx": case_spdx, "spdx-script": case_spdx_script,
         "snakeviz": case_snakeviz}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("name", nargs="?")
    ap.add_argument("--fnprof")
    ap.add_argument("--cc")
    a = ap.parse_args()
    try:
        CASES[a.case](a)
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
