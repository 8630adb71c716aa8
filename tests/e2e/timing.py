"""fnprof's times for progs/spin.c, checked against the program's own clock.

spin.c logs each call of its profiled functions (enter, exit, CLOCK_MONOTONIC) and prints
the log. Replaying that log through cProfile, with a timer that returns the logged times,
gives the numbers cProfile would report for the same calls on the same clock: fnprof's
tottime and cumtime, per function and per edge, must be within 5% of them, and its counts
equal. The log itself must show busy-waits no shorter than their nominal length (spin.c's
header), and main's cumtime must fit in the wall time the harness measured.

python3 standard library only. Used by run_case.py (--check timing).
"""

import cProfile
import types

import compare

# spin.c's structure: name -> (ncalls, pcalls, tottime ms, cumtime ms).
NOMINAL_MS = {
    "spin_20": (5, 5, 100, 100),
    "spin_30": (2, 2, 60, 60),
    "spin_50": (2, 2, 100, 100),
    "outer": (2, 2, 120, 260),
    "spin_rec": (4, 1, 40, 40),
    "run_all": (1, 1, 30, 450),
    "main": (1, 1, 0, 450),
}
RELATIVE = 0.05
# Absolute slack for times near zero (main's own time, edges of tiny functions): the hooks
# run outside the logged span, and main prints the log after its exit event.
ABSOLUTE = 0.0005


def parse_log(text):
    """[(kind, name, seconds)] from spin's stdout."""
    events = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if len(parts) != 3 or parts[0] not in ("E", "X"):
            raise compare.SetupError("spin's output line %d is not an event: %r" % (number, line))
        events.append((parts[0], parts[1], float(parts[2])))
    if not events:
        raise compare.SetupError("spin printed no events")
    return events


def replay(events):
    """cProfile's stats for the logged calls, with the logged times as its clock."""
    clock = [events[0][2]]
    pos = [1]
    funcs = {}

    def make(name):
        def replayed():
            while True:
                kind, callee, t = events[pos[0]]
                pos[0] += 1
                clock[0] = t  # read by cProfile at the call or return that follows
                if kind == "X":
                    if callee != name:
                        raise compare.SetupError("log: %s exits inside %s" % (callee, name))
                    return
                funcs[callee]()

        # One code object per name: cProfile keys its entries by code object.
        code = replayed.__code__.replace(co_name=name)
        if hasattr(code, "co_qualname"):
            code = code.replace(co_qualname=name)
        return types.FunctionType(code, replayed.__globals__, name, None, replayed.__closure__)

    for kind, name, _ in events:
        if name not in funcs:
            funcs[name] = make(name)
    if events[0][0] != "E":
        raise compare.SetupError("log does not start with an enter event")
    profiler = cProfile.Profile(lambda: clock[0])
    profiler.runcall(funcs[events[0][1]])
    if pos[0] != len(events):
        raise compare.SetupError("log: %d events after the first call returned"
                                 % (len(events) - pos[0]))
    profiler.create_stats()
    return profiler.stats


def within(got, want):
    return abs(got - want) <= RELATIVE * want + ABSOLUTE


def check_timing(c_source, prof, stdout, wall, out):
    """True when fnprof's file prof for spin agrees with the program's log and NOMINAL_MS."""
    events = parse_log(stdout)
    want_stats = replay(events)
    want_names, _ = compare.by_name(want_stats, "replay")
    problems = []

    c_stats, load_problems = compare.load_pstats(prof)
    problems += load_problems
    if c_stats is None:
        print("timing: fnprof's file does not load:", file=out)
        for p in problems:
            print("  " + p, file=out)
        return False
    problems += compare.check_invariants(c_stats)
    c_names, dups = compare.by_name(c_stats, "fnprof")
    problems += dups
    problems += compare.check_c_keys(c_names, c_source, compare.decl_lines(c_source))

    rows = []  # (what, name, want (nc, pc, tt, ct), got, nominal or None)

    def numbers(stats, key):
        pc, nc, tt, ct, _ = stats[key]
        return (nc, pc, tt, ct)

    def edges(stats, names):
        found = {}
        for name, key in names.items():
            for caller, (nc, pc, tt, ct) in stats[key][4].items():
                if caller[0] != compare.BUILTIN_FILE:
                    found[(caller[2], name)] = (nc, pc, tt, ct)
        return found

    for name in sorted(set(want_names) | set(c_names) | set(NOMINAL_MS)):
        want = numbers(want_stats, want_names[name]) if name in want_names else None
        got = numbers(c_stats, c_names[name]) if name in c_names else None
        nominal = NOMINAL_MS.get(name)
        if nominal:
            nominal = nominal[:2] + (nominal[2] / 1000.0, nominal[3] / 1000.0)
        rows.append(("function", name, want, got, nominal))
    want_edges = edges(want_stats, want_names)
    got_edges = edges(c_stats, c_names)
    for edge in sorted(set(want_edges) | set(got_edges), key=lambda e: (e[1], e[0])):
        rows.append(("edge", "%s -> %s" % edge, want_edges.get(edge), got_edges.get(edge), None))

    for what, name, want, got, nominal in rows:
        if want is None or got is None:
            problems.append("%s %s: missing from %s" % (what, name,
                                                        "the log" if want is None else "fnprof"))
            continue
        if got[:2] != want[:2]:
            problems.append("%s %s: %d/%d calls, the log says %d/%d"
                            % ((what, name) + got[:2] + want[:2]))
        for i, field in ((2, "tottime"), (3, "cumtime")):
            if not within(got[i], want[i]):
                problems.append("%s %s: %s %.4f s, the log says %.4f s (more than %d%% apart)"
                                % (what, name, field, got[i], want[i], RELATIVE * 100))
        if nominal:
            # The spins cannot end early; later (preempted at the deadline) they can, and then
            # the log, not the nominal length, is what fnprof must match.
            if want[:2] != nominal[:2]:
                problems.append("log: %s %s: %d/%d calls, spin.c makes %d/%d"
                                % ((what, name) + want[:2] + nominal[:2]))
            for i, field in ((2, "tottime"), (3, "cumtime")):
                if want[i] < nominal[i] * (1 - 1e-6):
                    problems.append("log: %s %s: %s %.4f s, shorter than its busy-waits, %.4f s"
                                    % (what, name, field, want[i], nominal[i]))

    if "main" in c_names:
        main_cumtime = c_stats[c_names["main"]][3]
        if main_cumtime > wall:
            problems.append("main: cumtime %.4f s, longer than the process's wall time %.4f s"
                            % (main_cumtime, wall))

    print("timing: %s  (wall %.3f s; times in ms: log / fnprof / nominal)" % (prof, wall),
          file=out)
    width = max(len(r[1]) for r in rows)
    for what, name, want, got, nominal in rows:
        cells = []
        for field in (2, 3):
            cells.append("%8s %8s %6s" % tuple("-" if v is None else "%.2f" % (v[field] * 1000)
                                               for v in (want, got, nominal)))
        print("  %-8s %-*s  calls %-7s tottime %s  cumtime %s"
              % (what, width, name, "-" if got is None else "%d/%d" % got[:2], cells[0],
                 cells[1]), file=out)
    for p in problems:
        print("  " + p, file=out)
    print("timing: %s" % ("fnprof's times agree with the program's clock" if not problems
                          else "%d problems" % len(problems)), file=out)
    return not problems
# SPDX-License-Identifier: MIT
