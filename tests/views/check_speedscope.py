#!/usr/bin/env python3
"""fnprof convert --to speedscope, read as speedscope's file format says
(jlfwong/speedscope src/lib/file-format-spec.ts), against the tree as
tests/e2e/fnptree.py reads it.

The schema speedscope publishes (https://www.speedscope.app/file-format-schema.json) is
generated from that TypeScript file by typescript-json-schema --required; SCHEMA below
writes the same definitions out by hand, and validate() implements the JSON Schema
keywords they use. On top of the schema, what the spec's comments and speedscope's
importer (src/lib/file-format.ts) demand: as many weights as samples, frame indices in
range, endValue >= startValue.

Then the contents: one sampled profile per thread, named for it; one sample per calling
context with a non-zero own value, in the tree's order, its stack the context's path
(frame indices, outermost first) and its weight the own time in integer ns (unit
"nanoseconds") or own calls (count-only, unit "none"); d only under a;c. CPython's file
(no tree) must still give a valid file whose stacks follow the dict's caller edges. A
mutated output must be rejected. python3 standard library only.
"""
import copy
import json
import os
import sys
import time

import viewlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "flamegraph"))
import synth  # noqa: E402  pylint: disable=wrong-import-position

fnptree = viewlib.fnptree

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"
UNITS = ["none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"]

# file-format-spec.ts as JSON Schema: interfaces are objects with their non-optional
# members required, `number` is "number", string literal types and enums are enums.
SCHEMA = {
    "$ref": "#/definitions/FileFormat.File",
    "definitions": {
        "FileFormat.File": {
            "type": "object",
            "properties": {
                "$schema": {"type": "string", "enum": [SCHEMA_URL]},
                "shared": {
                    "type": "object",
                    "properties": {"frames": {"type": "array",
                                              "items": {"$ref": "#/definitions/FileFormat.Frame"}}},
                    "required": ["frames"],
                },
                "profiles": {"type": "array", "items": {"anyOf": [
                    {"$ref": "#/definitions/FileFormat.EventedProfile"},
                    {"$ref": "#/definitions/FileFormat.SampledProfile"}]}},
                "name": {"type": "string"},
                "activeProfileIndex": {"type": "number"},
                "exporter": {"type": "string"},
            },
            "required": ["$schema", "profiles", "shared"],
        },
        "FileFormat.Frame": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "file": {"type": "string"},
                           "line": {"type": "number"}, "col": {"type": "number"}},
            "required": ["name"],
        },
        "FileFormat.ValueUnit": {"type": "string", "enum": UNITS},
        "FileFormat.SampledProfile": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["sampled"]},
                "name": {"type": "string"},
                "unit": {"$ref": "#/definitions/FileFormat.ValueUnit"},
                "startValue": {"type": "number"},
                "endValue": {"type": "number"},
                "samples": {"type": "array",
                            "items": {"type": "array", "items": {"type": "number"}}},
                "weights": {"type": "array", "items": {"type": "number"}},
            },
            "required": ["endValue", "name", "samples", "startValue", "type", "unit", "weights"],
        },
        "FileFormat.EventedProfile": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["evented"]},
                "name": {"type": "string"},
                "unit": {"$ref": "#/definitions/FileFormat.ValueUnit"},
                "startValue": {"type": "number"},
                "endValue": {"type": "number"},
                "events": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"type": {"type": "string", "enum": ["O", "C"]},
                                   "at": {"type": "number"}, "frame": {"type": "number"}},
                    "required": ["at", "frame", "type"]}},
            },
            "required": ["endValue", "events", "name", "startValue", "type", "unit"],
        },
    },
}


def _is_type(value, name):
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    raise ValueError("schema type %r" % name)


def validate(value, schema, root=SCHEMA, where="$"):
    """Problems (strings) of value against schema: the keywords $ref, type, enum,
    properties, required, items, anyOf."""
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/definitions/"), ref
        return validate(value, root["definitions"][ref[len("#/definitions/"):]], root, where)
    if "anyOf" in schema:
        tries = [validate(value, s, root, where) for s in schema["anyOf"]]
        if all(tries):
            return ["%s: matches none of anyOf (%s)" % (where, "; ".join(t[0] for t in tries))]
        return []
    if "type" in schema and not _is_type(value, schema["type"]):
        return ["%s: %s is not %s" % (where, json.dumps(value)[:60], schema["type"])]
    if "enum" in schema and value not in schema["enum"]:
        return ["%s: %r is not one of %r" % (where, value, schema["enum"])]
    problems = []
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append("%s: %r is missing" % (where, key))
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                problems += validate(value[key], sub, root, "%s.%s" % (where, key))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += validate(item, schema["items"], root, "%s[%d]" % (where, i))
            if len(problems) > 20:
                break
    return problems


def semantic(doc):
    """What the spec's comments and speedscope's importer demand beyond the schema."""
    problems = []
    nframes = len(doc["shared"]["frames"])
    if "activeProfileIndex" in doc and not 0 <= doc["activeProfileIndex"] < max(
            len(doc["profiles"]), 1):
        problems.append("activeProfileIndex %r out of range" % doc["activeProfileIndex"])
    for i, prof in enumerate(doc["profiles"]):
        if prof["endValue"] < prof["startValue"]:
            problems.append("profile %d: endValue before startValue" % i)
        if prof["type"] != "sampled":
            continue
        if len(prof["samples"]) != len(prof["weights"]):
            problems.append("profile %d: %d samples, %d weights"
                            % (i, len(prof["samples"]), len(prof["weights"])))
        for stack in prof["samples"]:
            if not all(isinstance(f, int) and 0 <= f < nframes for f in stack):
                problems.append("profile %d: stack %r names no frame" % (i, stack))
                break
    return problems


def shown(name):
    """A name as JSON can hold it: marshal's surrogates (invalid UTF-8 in the file) become
    U+FFFD; everything else is escaped, so exact."""
    return name.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def frame_keys(doc, stats):
    """The pstats key of each frame: file and line (none: a built-in, '~' and 0) and a name
    that is the key's name or its label. Every frame must name exactly one key."""
    names = viewlib.labels(stats)
    at = {}
    for k in stats:
        at.setdefault((shown(k[0]), k[1]), []).append(k)
    keys, problems = [], []
    for i, fr in enumerate(doc["shared"]["frames"]):
        match = [k for k in at.get((fr.get("file", "~"), fr.get("line", 0)), [])
                 if fr["name"] in (shown(k[2]), shown(names[k]))]
        if len(match) != 1:
            problems.append("frame %d %r names %d functions of the dict" % (i, fr, len(match)))
        keys.append(match[0] if match else None)
    return keys, problems


def check_doc(doc):
    problems = validate(doc, SCHEMA)
    if not problems:
        problems = semantic(doc)
    return problems


def compare(doc, stats, tree):
    """Problems of a schema-valid doc against the tree."""
    keys, problems = frame_keys(doc, stats)
    if problems:
        return problems
    profiles = doc["profiles"]
    if len(profiles) != len(tree.threads):
        return ["%d profiles for %d threads" % (len(profiles), len(tree.threads))]
    want_unit = "none" if tree.kind == fnptree.KIND_CALLS else "nanoseconds"
    for t, prof in enumerate(profiles):
        where = "profile %d (%s)" % (t, prof["name"])
        if prof["name"] != tree.threads[t]:
            problems.append("%s: named %r, the thread is %r" % (where, prof["name"],
                                                               tree.threads[t]))
        if prof["type"] != "sampled" or prof["unit"] != want_unit:
            problems.append("%s: %s in %s, want sampled in %s" % (where, prof["type"],
                                                                 prof["unit"], want_unit))
            continue
        want = [(tree.path(n), viewlib.ns(tree, tree.self_value(n))) for n in tree.nodes
                if n.thread == t and viewlib.ns(tree, tree.self_value(n))]
        got = [(tuple(keys[f] for f in s), w) for s, w in zip(prof["samples"], prof["weights"])]
        if [p for p, _ in got] != [p for p, _ in want]:
            gp, wp = [p for p, _ in got], [p for p, _ in want]
            problems.append("%s: stacks differ; missing %s; extra %s" % (
                where, [[k[2] for k in p] for p in wp if p not in gp][:4],
                [[k[2] for k in p] for p in gp if p not in wp][:4]))
            continue
        slack = 0 if tree.kind == fnptree.KIND_CALLS else 1  # one rounding to ns
        for (path, w), (_, x) in zip(got, want):
            if abs(w - x) > slack:
                problems.append("%s: %s weighs %r, the tree says %d" % (
                    where, ";".join(k[2] for k in path), w, x))
        if prof["startValue"] != 0 or prof["endValue"] != sum(prof["weights"]):
            problems.append("%s: values %r..%r, weights sum to %d" % (
                where, prof["startValue"], prof["endValue"], sum(prof["weights"])))
    return problems


def d_only_under_a(doc, stats):
    """The shape fnprof exists to get right: c calls d only under a."""
    keys, problems = frame_keys(doc, stats)
    names = [[[keys[f][2] for f in s] for s in p["samples"]] for p in doc["profiles"]]
    flat = [";".join(s) for p in names for s in p]
    if not any(s.endswith("main;a;c;d;burn") for s in flat):
        problems.append("no main;a;c;d;burn stack")
    if any("b;c;d" in s for s in flat):
        problems.append("d under b;c")
    return problems


def check_rebuilt(doc, stats):
    """CPython's file: frames are the dict's functions, every step of a stack is a caller
    edge of the dict, and the weights add up to the functions' own times."""
    keys, problems = frame_keys(doc, stats)
    if problems:
        return problems
    if len(doc["profiles"]) != 1:
        return ["%d profiles for a file without threads" % len(doc["profiles"])]
    prof = doc["profiles"][0]
    if prof["unit"] != "nanoseconds":
        problems.append("unit %r" % prof["unit"])
    for stack in prof["samples"]:
        for caller, callee in zip(stack, stack[1:]):
            if keys[caller] not in stats[keys[callee]][4]:
                problems.append("%s -> %s is no edge of the dict" % (keys[caller][2],
                                                                   keys[callee][2]))
    total = sum(v[2] for v in stats.values()) * 1e9
    got = sum(prof["weights"])
    if not 0.99 * total <= got <= total + len(prof["weights"]):
        problems.append("weights sum to %d ns, the dict's own times to %.0f ns" % (got, total))
    return problems


def self_check(v, doc, stats, tree):
    """Each mutation of a good output must be rejected."""
    keys, _ = frame_keys(doc, stats)
    frame_of = {k[2]: i for i, k in enumerate(keys) if k is not None}

    def move_d_under_b(d):
        for s in d["profiles"][0]["samples"]:
            if [keys[f][2] for f in s[:4]] == ["main", "a", "c", "d"]:
                s[1] = frame_of["b"]
                return

    def weight_off(d):
        d["profiles"][0]["weights"][-1] += 1000

    def drop_schema(d):
        del d["$schema"]

    def weights_short(d):
        d["profiles"][0]["weights"].pop()

    def frame_out_of_range(d):
        d["profiles"][0]["samples"][0].append(len(d["shared"]["frames"]))

    def string_weight(d):
        d["profiles"][0]["weights"][0] = str(d["profiles"][0]["weights"][0])

    def bad_unit(d):
        d["profiles"][0]["unit"] = "ticks"

    def drop_sample(d):
        del d["profiles"][1]["samples"][-1]
        del d["profiles"][1]["weights"][-1]

    def frame_without_name(d):
        del d["shared"]["frames"][0]["name"]

    for mutate in (move_d_under_b, weight_off, drop_schema, weights_short, frame_out_of_range,
                   string_weight, bad_unit, drop_sample, frame_without_name):
        bad = copy.deepcopy(doc)
        mutate(bad)
        problems = check_doc(bad) or compare(bad, stats, tree) + d_only_under_a(bad, stats)
        v.check(problems, "self-check: the checker accepts %s" % mutate.__name__)


def edge_cases(v, a):
    """Made-up trees: names with any character, an empty tree, one name in two files, a
    deep chain (uncut: --max-depth 0; check_deep.py checks the cut), a random tree of 20k
    nodes in 4 threads; and the time for 200k nodes."""
    synth_dir = os.path.join(a.workdir, "speedscope-synth")
    os.makedirs(synth_dir, exist_ok=True)
    for name, make in (("odd", synth.odd_names), ("empty", synth.empty),
                       ("deep", lambda p: synth.deep(p, 2000)),
                       ("random", lambda p: synth.large(p, 20000))):
        prof = os.path.join(synth_dir, name + ".prof")
        make(prof)
        out = os.path.join(synth_dir, name + ".json")
        viewlib.convert(a.fnprof, prof, "speedscope", out, ["--max-depth", "0"])
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        stats, tree = fnptree.read(prof)
        problems = check_doc(doc)
        if not problems and tree.threads:
            problems = compare(doc, stats, tree)
        elif not problems:  # no thread: one empty profile, so that speedscope shows the file
            problems = [] if [len(p["samples"]) for p in doc["profiles"]] == [0] else [
                "%d profiles for no thread" % len(doc["profiles"])]
        for p in problems[:10]:
            v.check(False, "%s: %s" % (name, p))
    prof = os.path.join(synth_dir, "large.prof")
    synth.large(prof, 200000)
    out = os.path.join(synth_dir, "large.json")
    start = time.monotonic()
    viewlib.convert(a.fnprof, prof, "speedscope", out)
    took = time.monotonic() - start
    _, tree = fnptree.read(prof)
    print("large: %d nodes written in %.2f s" % (len(tree.nodes), took))
    v.check(took < 2.0, "large: %.2f s for %d nodes (want well under 1 s; 2 s allowed)"
            % (took, len(tree.nodes)))
    os.unlink(out)


def main():
    a = viewlib.args()
    v = viewlib.Verdict("speedscope")
    for name in ("paths.prof", "paths-count.prof"):
        prof = os.path.join(a.workdir, name)
        out = os.path.join(a.workdir, name + ".speedscope.json")
        viewlib.convert(a.fnprof, prof, "speedscope", out)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        stats, tree = fnptree.read(prof)
        problems = check_doc(doc)
        for p in problems:
            v.check(False, "%s: schema: %s" % (name, p))
        if problems:
            continue
        for p in compare(doc, stats, tree) + d_only_under_a(doc, stats):
            v.check(False, "%s: %s" % (name, p))
        if tree.kind == fnptree.KIND_CALLS:
            # count-only: a context's own value is its own calls, so weights are exact
            for node in tree.nodes:
                v.check(tree.self_value(node) == node.ncalls,
                        "%s: count-only self %d != calls %d" % (name, tree.self_value(node),
                                                                node.ncalls))
        else:
            self_check(v, doc, stats, tree)
    # CPython's cProfile file: no tree, a rebuilt one, a note on stderr, a valid file.
    prof = os.path.join(a.workdir, "paths-py.prof")
    out = os.path.join(a.workdir, "paths-py.speedscope.json")
    r = viewlib.convert(a.fnprof, prof, "speedscope", out)
    v.check(r.stderr.decode().count("rebuilt from caller edges") == 1,
            "paths-py.prof: no note that the paths are rebuilt")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    stats, _ = fnptree.read(prof)
    v.check("rebuilt from caller edges" in doc.get("name", ""),
            "paths-py.prof: the name does not say the paths are rebuilt")
    problems = check_doc(doc) or check_rebuilt(doc, stats)
    for p in problems:
        v.check(False, "paths-py.prof: %s" % p)
    edge_cases(v, a)
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
