#!/usr/bin/env python3
"""Checks a Chrome trace fnprof wrote (PROF_TRACE), against the run's profile if given.

    check_trace.py TRACE.json [PROFILE.prof]
    check_trace.py --selftest

The trace must be JSON in the Trace Event Format's object form ({"traceEvents": [...]}),
and in it:
  - every complete event ("ph": "X") has a string name, numeric ts and dur (not negative),
    integer pid and tid;
  - on every thread (pid, tid) the complete events nest: taken by start (the longer first
    when two start together), each ends no later than the one that encloses it;
  - every thread with a complete event is named by a thread_name metadata event, and its
    process by a process_name one;
  - otherData's fnprof_events_dropped (0 when absent) is matched by an instant event
    "fnprof: N calls not traced ..." when above 0, and by none when 0.
With PROFILE.prof (read with pstats), every function of the dict except fnprof's synthetic
ones (file '~') has exactly as many complete events as its ncalls, matched on (file, line,
name) (the events' args.file and args.line), and no event names a function the dict lacks.
When calls were dropped, a function may have fewer events than calls, never more, and the
events plus the dropped calls make every call of the dict: nothing is missing unsaid.

Prints one line "check_trace: ok: ..." and exits 0, or prints what is wrong on stderr and
exits 1 (2: usage). --selftest feeds the checker good traces and broken ones (bad nesting,
a thread without a name, counts that differ, ...) and fails unless it accepts the good and
rejects each broken one for the reason planted. python3 standard library only.
"""
import copy
import decimal
import json
import marshal
import os
import pstats
import sys
import tempfile

MAX_ERRORS = 20


class TraceError(Exception):
    pass


def load_trace(path):
    """The trace's JSON, numbers with a fraction as Decimal: ts + dur is then exact, so
    that a callee ending with its caller is not taken for one ending after it."""

    def no_constant(name):
        raise ValueError("%s is not JSON a viewer reads" % name)

    try:
        with open(path, "rb") as f:
            return json.loads(
                f.read().decode("utf-8"),
                parse_float=decimal.Decimal,
                parse_constant=no_constant,
            )
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise TraceError("%s: not a JSON trace: %s" % (path, e))


def load_profile(path):
    """pstats' dict: (file, line, name) -> ncalls (all calls, primitive or not)."""
    try:
        st = pstats.Stats(path)
    except Exception as e:  # pstats raises whatever marshal and its checks raise
        raise TraceError("%s: not a pstats file: %s" % (path, e))
    return {key: value[1] for key, value in st.stats.items()}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return is_int(v) or isinstance(v, (float, decimal.Decimal))


def describe(ev):
    return "%r at ts %s (dur %s) on tid %s" % (ev.get("name"), ev.get("ts"), ev.get("dur"),
                                               ev.get("tid"))


def check_events(doc, errors):
    """The events' own rules. Returns the complete events that passed them, the dropped
    count and the names of threads and processes."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        errors.append('the top level is not an object with a "traceEvents" list')
        return [], 0
    unit = doc.get("displayTimeUnit", "ms")
    if unit not in ("ms", "ns"):
        errors.append("displayTimeUnit %r: the format allows \"ms\" or \"ns\"" % (unit,))
    other = doc.get("otherData", {})
    if not isinstance(other, dict):
        errors.append("otherData is not an object")
        other = {}
    dropped = other.get("fnprof_events_dropped", 0)
    if not is_int(dropped) or dropped < 0:
        errors.append("otherData.fnprof_events_dropped %r is not a count" % (dropped,))
        dropped = 0

    calls, thread_names, process_names, labels = [], set(), set(), []
    for i, ev in enumerate(doc["traceEvents"]):
        if not isinstance(ev, dict) or not isinstance(ev.get("ph"), str):
            errors.append("event %d: not an object with a \"ph\" string" % i)
            continue
        ph = ev["ph"]
        if ph == "X":
            missing = [f for f in ("name", "ph", "ts", "dur", "pid", "tid") if f not in ev]
            if missing:
                errors.append("event %d: complete event without %s" % (i, ", ".join(missing)))
                continue
            bad = []
            if not isinstance(ev["name"], str):
                bad.append("name")
            for f in ("ts", "dur"):
                if not is_number(ev[f]) or ev[f] < 0:
                    bad.append(f)
            for f in ("pid", "tid"):
                if not is_int(ev[f]):
                    bad.append(f)
            if "args" in ev and not isinstance(ev["args"], dict):
                bad.append("args")
            if bad:
                errors.append("event %d: complete event with bad %s: %s"
                              % (i, ", ".join(bad), describe(ev)))
                continue
            calls.append((i, ev))
        elif ph == "M":
            args = ev.get("args")
            name = args.get("name") if isinstance(args, dict) else None
            if ev.get("name") == "thread_name":
                if not isinstance(name, str) or not is_int(ev.get("tid")):
                    errors.append("event %d: thread_name without a tid and a name" % i)
                else:
                    thread_names.add((ev.get("pid"), ev["tid"]))
            elif ev.get("name") == "process_name":
                if not isinstance(name, str):
                    errors.append("event %d: process_name without a name" % i)
                else:
                    process_names.add(ev.get("pid"))
        elif ph in ("i", "I"):
            if isinstance(ev.get("name"), str) and ev["name"].startswith("fnprof: "):
                labels.append(ev)
                if not is_number(ev.get("ts")) or ev.get("s", "t") not in ("g", "p", "t"):
                    errors.append("event %d: label without a ts or with a bad scope" % i)

    threads = {(ev["pid"], ev["tid"]) for _, ev in calls}
    for pid, tid in sorted(threads):
        if (pid, tid) not in thread_names:
            errors.append("pid %d tid %d: no thread_name metadata event" % (pid, tid))
    for pid in sorted({pid for pid, _ in threads}):
        if pid not in process_names:
            errors.append("pid %d: no process_name metadata event" % pid)

    if dropped and not any(" %d calls not traced" % dropped in ev["name"] for ev in labels):
        errors.append("%d calls dropped (otherData) but no instant event says so" % dropped)
    if not dropped and labels:
        errors.append("an instant event says calls were dropped, otherData says none: %r"
                      % labels[0]["name"])
    return calls, dropped


def check_nesting(calls, errors):
    by_thread = {}
    for i, ev in calls:
        by_thread.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], -ev["dur"], i, ev))
    for (pid, tid), evs in sorted(by_thread.items()):
        evs.sort(key=lambda e: (e[0], e[1], e[2]))
        stack = []  # (end, event) of the calls open at this point
        for ts, neg_dur, i, ev in evs:
            end = ts - neg_dur
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if stack and end > stack[-1][0]:
                errors.append("tid %d: event %d %s ends after the call enclosing it, %s"
                              % (tid, i, describe(ev), describe(stack[-1][1])))
                continue
            stack.append((end, ev))


def event_key(ev):
    args = ev.get("args", {})
    if isinstance(args.get("file"), str) and is_int(args.get("line")):
        return (args["file"], args["line"], ev["name"])
    return (None, None, ev["name"])


def check_counts(calls, dropped, ncalls, errors):
    """One event per call of the dict, each function matched on its pstats key."""
    events = {}
    for _, ev in calls:
        k = event_key(ev)
        events[k] = events.get(k, 0) + 1
    for k, n in sorted(events.items(), key=repr):
        if k not in ncalls:
            errors.append("%d events of %r, which the profile lacks" % (n, k))
    total = 0
    for k, want in sorted(ncalls.items(), key=repr):
        if k[0] == "~":
            continue  # fnprof's synthetic functions: <process>, labels; no call of their own
        total += want
        got = events.get(k, 0)
        if got > want or (got < want and not dropped):
            errors.append("%r: %d events for %d calls" % (k, got, want))
    traced = sum(n for k, n in events.items() if k in ncalls)
    if dropped and traced + dropped != total:
        errors.append("%d events and %d dropped calls for %d calls: not every call accounted for"
                      % (traced, dropped, total))


def check(doc, ncalls=None):
    """Everything wrong with the trace doc (and its profile's counts): a list of lines."""
    errors = []
    calls, dropped = check_events(doc, errors)
    check_nesting(calls, errors)
    if ncalls is not None:
        check_counts(calls, dropped, ncalls, errors)
    return errors, calls, dropped


def main(argv):
    if argv == ["--selftest"]:
        return selftest()
    if len(argv) not in (1, 2) or argv[0].startswith("-"):
        sys.stderr.write("usage: check_trace.py TRACE.json [PROFILE.prof] | --selftest\n")
        return 2
    try:
        doc = load_trace(argv[0])
        ncalls = load_profile(argv[1]) if len(argv) == 2 else None
    except TraceError as e:
        sys.stderr.write("check_trace: %s\n" % e)
        return 1
    errors, calls, dropped = check(doc, ncalls)
    if errors:
        for line in errors[:MAX_ERRORS]:
            sys.stderr.write("check_trace: %s: %s\n" % (argv[0], line))
        if len(errors) > MAX_ERRORS:
            sys.stderr.write("check_trace: ... and %d more\n" % (len(errors) - MAX_ERRORS))
        return 1
    threads = {(ev["pid"], ev["tid"]) for _, ev in calls}
    print("check_trace: ok: %s: %d calls on %d threads, %d dropped%s"
          % (argv[0], len(calls), len(threads), dropped,
             ", counts match the profile" if ncalls is not None else ""))
    return 0


# ---- self-test --------------------------------------------------------------------------

A = ("/src/a.c", 3, "main")
B = ("/src/a.c", 9, "work")
C = ("/src/b.c", 4, "work")  # a second function of the same name, in another file
R = ("/src/a.c", 5, "load config")
PROCESS = ("~", 0, "<process>")


def x(key, ts, dur, tid, cat="function"):
    return {"name": key[2], "cat": cat, "ph": "X", "ts": decimal.Decimal(ts),
            "dur": decimal.Decimal(dur), "pid": 7, "tid": tid,
            "args": {"file": key[0], "line": key[1]}}


def meta(what, tid, name):
    return {"name": what, "ph": "M", "pid": 7, "tid": tid, "args": {"name": name}}


def good_trace():
    """main on thread 1 calls work (a.c) twice, the second call starting the instant the
    first ends, then a region that starts as the second ends and calls b.c's work at once;
    thread 2 runs work (b.c) alone."""
    return {
        "traceEvents": [
            meta("process_name", 0, "demo"),
            meta("thread_name", 1, "main"),
            meta("thread_name", 2, "thread 2"),
            x(A, "0.000", "10.000", 1),
            x(B, "1.000", "2.000", 1),
            x(B, "3.000", "1.000", 1),
            x(R, "4.000", "6.000", 1, cat="region"),
            x(C, "4.000", "5.000", 1),
            x(C, "2.500", "1.000", 2),
        ],
        "displayTimeUnit": "ns",
        "otherData": {"program": "demo", "fnprof_events_limit": 1000,
                      "fnprof_events_dropped": 0},
    }


GOOD_COUNTS = {A: 1, B: 2, C: 2, R: 1, PROCESS: 2}


def with_dropped(doc, n, label=True):
    doc["otherData"]["fnprof_events_dropped"] = n
    if label:
        doc["traceEvents"].append({"name": "fnprof: %d calls not traced (PROF_TRACE_EVENTS=1000)"
                                   % n, "ph": "i", "s": "g", "ts": decimal.Decimal("10.000"),
                                   "pid": 7, "tid": 1})
    return doc


def drop_events(doc, keep):
    doc["traceEvents"] = [ev for ev in doc["traceEvents"] if keep(ev)]
    return doc


def broken_cases():
    """(what, expected words of the error, trace, counts)"""
    cases = []

    def case(what, words, mutate, counts=GOOD_COUNTS):
        doc = mutate(copy.deepcopy(good_trace()))
        cases.append((what, words, doc, counts))

    def overlap(doc):
        doc["traceEvents"][4]["dur"] = decimal.Decimal("9.001")  # work ends after main
        return doc

    def child_past_sibling(doc):
        doc["traceEvents"][7]["dur"] = decimal.Decimal("6.001")  # b.c work outlives region
        return doc

    case("a callee ending after its caller", "ends after", overlap)
    case("a callee ending after the region it runs in", "ends after", child_past_sibling)
    case("a thread without thread_name", "no thread_name",
         lambda d: drop_events(d, lambda ev: ev.get("args", {}).get("name") != "thread 2"))
    case("no process_name", "no process_name",
         lambda d: drop_events(d, lambda ev: ev.get("name") != "process_name"))
    case("a call missing", "events for",
         lambda d: drop_events(d, lambda ev: ev.get("ts") != decimal.Decimal("3")))
    case("a call too many", "events for", lambda d: d, {**GOOD_COUNTS, B: 1})
    case("a function the profile lacks", "lacks", lambda d: d,
         {k: v for k, v in GOOD_COUNTS.items() if k != R})
    case("same name, other file: counted apart", "events for", lambda d: d,
         {**GOOD_COUNTS, B: 3, C: 1})

    def no_dur(doc):
        del doc["traceEvents"][5]["dur"]
        return doc

    def negative_ts(doc):
        doc["traceEvents"][5]["ts"] = decimal.Decimal("-1")
        return doc

    def string_tid(doc):
        doc["traceEvents"][5]["tid"] = "1"
        return doc

    case("a complete event without dur", "without dur", no_dur)
    case("a negative ts", "bad ts", negative_ts)
    case("a tid that is no integer", "bad tid", string_tid)
    case("not the object form", "traceEvents", lambda d: d["traceEvents"])
    case("dropped calls without a label", "no instant event",
         lambda d: with_dropped(drop_events(d, lambda ev: ev.get("tid") != 2), 1, label=False))
    case("a label without dropped calls", "otherData says none",
         lambda d: with_dropped(d, 0, label=True))
    case("dropped calls that do not account for the missing ones", "accounted",
         lambda d: with_dropped(drop_events(d, lambda ev: ev.get("tid") != 2), 5))
    case("dropped calls, yet more events than calls", "events for",
         lambda d: with_dropped(d, 1), {**GOOD_COUNTS, A: 0})
    return cases


def selftest():
    failures = []

    def expect_ok(what, doc, counts):
        errors, _, _ = check(doc, counts)
        if errors:
            failures.append("%s: rejected: %s" % (what, errors))

    expect_ok("the good trace", good_trace(), GOOD_COUNTS)
    expect_ok("the good trace, no profile", good_trace(), None)
    expect_ok("dropped calls, labelled and accounted for",
              with_dropped(drop_events(good_trace(), lambda ev: ev.get("tid") != 2), 1),
              GOOD_COUNTS)
    # Array events in any order: the checker sorts them per thread itself.
    shuffled = good_trace()
    shuffled["traceEvents"].reverse()
    expect_ok("events in reverse order", shuffled, GOOD_COUNTS)

    for what, words, doc, counts in broken_cases():
        errors, _, _ = check(doc, counts)
        if not any(words in e for e in errors):
            failures.append("%s: not rejected for %r (errors: %s)" % (what, words, errors))

    # The command itself, on files: exit codes and the pstats reader.
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, "run.prof")
        with open(prof, "wb") as f:
            marshal.dump({k: (n, n, 0.0, 0.0, {}) for k, n in GOOD_COUNTS.items()}, f)

        def plain(v):
            """Decimals as floats, which json writes in their shortest form: 3.001."""
            if isinstance(v, dict):
                return {k: plain(w) for k, w in v.items()}
            if isinstance(v, list):
                return [plain(w) for w in v]
            return float(v) if isinstance(v, decimal.Decimal) else v

        def write(name, doc):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                json.dump(plain(doc), f)
            return path

        good = write("good.json", good_trace())
        bad = write("bad.json", broken_cases()[0][2])
        notjson = os.path.join(tmp, "cut.json")
        with open(good) as f, open(notjson, "w") as g:
            g.write(f.read()[:-20])
        for args, want in (([good, prof], 0), ([good], 0), ([bad, prof], 1), ([notjson], 1),
                           ([good, notjson], 1), ([], 2)):
            saved = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = open(os.devnull, "w")
            try:
                got = main(args)
            finally:
                sys.stdout.close()
                sys.stdout, sys.stderr = saved
            if got != want:
                failures.append("check_trace.py %s: exit %s, not %s" % (" ".join(args), got, want))

    for f in failures:
        sys.stderr.write("check_trace selftest: FAIL: %s\n" % f)
    if failures:
        return 1
    print("check_trace selftest: ok (%d broken traces rejected)" % len(broken_cases()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
# SPDX-License-Identifier: MIT
