#!/usr/bin/env python3
"""An independent reader of fnprof's Perfetto traces, written from the protobuf wire
format (varints, length-delimited fields) and Perfetto's trace .proto field numbers, with no
code shared with the writer. It decodes every packet, keeps each sequence's incremental
state (cleared flag, defaults, the incremental clock, interned names) and checks that:
every slice end closes a begin on the same track, in time order per track; every begin's
name was interned on its sequence before use. Then it compares with a pstats profile: as
many slices per function (name, file, line) as the profile's calls.

usage: read_pftrace.py TRACE.pftrace [PROFILE.prof] [--expect-open N] [--selftest]
"""
import collections
import marshal
import sys


def varint(b, i):
    v = 0
    shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """(field number, wire type, value) of a message; value is int or bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("field %d past the end" % f)
            v = bytes(b[i:i + n])
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def one(b, num, default=None):
    for f, _, v in fields(b):
        if f == num:
            default = v
    return default


class Seq:
    def __init__(self):
        self.valid = False
        self.clock = None      # default timestamp_clock_id
        self.track = None      # default track uuid
        self.clocks = {}       # incremental clock id -> last value
        self.names = {}        # iid -> name
        self.locs = {}         # iid -> (file, line)


def read(path):
    data = open(path, "rb").read()
    seqs = collections.defaultdict(Seq)
    tracks = {}        # uuid -> dict(pid, tid, name, kind)
    slices = collections.defaultdict(list)  # track uuid -> [(ts, 'B'/'E', name, loc)]
    instants = []
    for f, wt, pkt in fields(data):
        if f != 1 or wt != 2:
            raise ValueError("Trace holds field %d" % f)
        seq_id = one(pkt, 10, 0)
        s = seqs[seq_id]
        flags = one(pkt, 13, 0)
        if flags & 1:
            s.__init__()
            s.valid = True
        d = one(pkt, 59)
        if d is not None:
            s.clock = one(d, 58)
            ted = one(d, 11)
            s.track = one(ted, 11) if ted is not None else None
        cs = one(pkt, 6)
        if cs is not None:
            for cf, _, c in fields(cs):
                if cf == 1 and one(c, 3, 0):
                    s.clocks[one(c, 1)] = one(c, 2, 0)
        ts = one(pkt, 8)
        clock = one(pkt, 58, s.clock)
        if ts is not None and clock in s.clocks:
            s.clocks[clock] += ts
            ts = s.clocks[clock]
        idata = one(pkt, 12)
        if idata is not None:
            if flags & 2 and not s.valid:
                raise ValueError("interned data on a sequence never cleared")
            for inf, _, m in fields(idata):
                if inf == 2:
                    s.names[one(m, 1)] = one(m, 2, b"").decode()
                elif inf == 4:
                    s.locs[one(m, 1)] = (one(m, 2, b"").decode(), one(m, 4, 0))
        td = one(pkt, 60)
        if td is not None:
            uuid = one(td, 1)
            t = tracks.setdefault(uuid, {})
            p = one(td, 3)
            th = one(td, 4)
            if p is not None:
                t.update(kind="process", pid=one(p, 1), name=one(p, 6, b"").decode())
            if th is not None:
                t.update(kind="thread", pid=one(th, 1), tid=one(th, 2),
                         name=one(th, 5, b"").decode() or t.get("name", ""))
        te = one(pkt, 11)
        if te is not None:
            typ = one(te, 9)
            track = one(te, 11, s.track)
            if typ == 3:
                ann = {}
                for af, _, a in fields(te):
                    if af == 4:
                        key = one(a, 10, b"").decode()
                        if key in ann:  # readers disagree about which one wins
                            raise ValueError("instant: annotation %r twice" % key)
                        ann[key] = one(a, 6, b"").decode()
                instants.append((one(te, 23, b"").decode(), ann))
                continue
            if typ == 1:
                iid = one(te, 10)
                if iid not in s.names:
                    raise ValueError("name iid %r not interned on sequence %d" % (iid, seq_id))
                loc = s.locs.get(one(te, 34))
                slices[track].append((ts, "B", s.names[iid], loc))
            elif typ == 2:
                slices[track].append((ts, "E", None, None))
            else:
                raise ValueError("track event type %r" % typ)
    return tracks, slices, instants


def metadata(path):
    """The trace's metadata: the ChromeMetadata entries (name, string_value) of the
    packets' ChromeEventBundle (TracePacket field 5, its field 2)."""
    data = open(path, "rb").read()
    out = {}
    for f, wt, pkt in fields(data):
        bundle = one(pkt, 5) if f == 1 and wt == 2 else None
        if bundle is None:
            continue
        for bf, _, m in fields(bundle):
            if bf == 2:
                out[one(m, 1, b"").decode()] = one(m, 2, b"").decode()
    return out


def nest(slices):
    """Per track: check order and nesting; count completed slices per (name, file, line)."""
    counts = collections.Counter()
    total = 0
    for track, evs in slices.items():
        stack = []
        last = -1
        for ts, kind, name, loc in evs:
            if ts is None or ts < last:
                raise ValueError("track %x: time goes back (%r after %r)" % (track, ts, last))
            last = ts
            if kind == "B":
                stack.append((name, loc))
            else:
                if not stack:
                    raise ValueError("track %x: an end without a begin" % track)
                name, loc = stack.pop()
                counts[(loc[0] if loc else "", loc[1] if loc else 0, name)] += 1
                total += 1
        if stack:
            raise ValueError("track %x: %d slices never end" % (track, len(stack)))
    return counts, total


def pstats_calls(path):
    stats = marshal.load(open(path, "rb"))
    if isinstance(stats, tuple):
        stats = stats[0]
    # fnprof's root of all threads, ('~', 0, '<process>'), is no call of the program's
    return {k: v[1] for k, v in stats.items()
            if isinstance(k, tuple) and k != ("~", 0, "<process>")}


def selftest():
    def vi(v):
        out = b""
        while v >= 0x80:
            out += bytes([(v & 0x7F) | 0x80])
            v >>= 7
        return out + bytes([v])

    def fld(n, v):
        if isinstance(v, bytes):
            return vi(n << 3 | 2) + vi(len(v)) + v
        return vi(n << 3) + vi(v)

    def pkt(*parts):
        return fld(1, b"".join(parts))

    head = pkt(fld(10, 2), fld(13, 1), fld(59, fld(58, 64) + fld(11, fld(11, 7))),
               fld(6, fld(1, fld(1, 64) + fld(2, 100) + fld(3, 1))))
    name = pkt(fld(10, 2), fld(13, 2), fld(12, fld(2, fld(1, 1) + fld(2, b"f"))))
    b = pkt(fld(8, 5), fld(10, 2), fld(11, fld(9, 1) + fld(10, 1)))
    e = pkt(fld(8, 5), fld(10, 2), fld(11, fld(9, 2)))
    def instant(*keys):
        anns = b"".join(fld(4, fld(10, k) + fld(6, b"v")) for k in keys)
        return pkt(fld(10, 2), fld(11, fld(9, 3) + fld(23, b"fnprof: run") + anns))

    import tempfile, os
    good = [head + name + b + e, head + name + b + e + instant(b"a", b"b")]
    bad = [head + b + e,                 # name never interned
           head + name + b,              # never ends
           head + name + e + b,          # end before begin
           head + name + b + b + e,      # one left open
           head + name + b + e + instant(b"a", b"a")]  # a key twice
    for case, ok in [(g, True) for g in good] + [(x, False) for x in bad]:
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(case)
        try:
            _, sl, _ = read(f.name)
            counts, total = nest(sl)
            got = True
            assert total == 1 and counts[("", 0, "f")] == 1
            assert sl[7][0][0] == 105 and sl[7][1][0] == 110
        except ValueError:
            got = False
        os.unlink(f.name)
        if got != ok:
            print("selftest: case %r: expected %s" % (case, ok))
            return 1
    print("selftest: ok")
    return 0


def main(argv):
    if "--selftest" in argv:
        return selftest()
    tracks, slices, instants = read(argv[1])
    counts, total = nest(slices)
    threads = [t for t in tracks.values() if t.get("kind") == "thread"]
    if not any(t.get("kind") == "process" for t in tracks.values()):
        raise SystemExit("no process track")
    if not any(n == "fnprof: run" and "program" in a for n, a in instants):
        raise SystemExit("no run metadata")
    print("%d slices on %d thread tracks" % (total, len(threads)))
    if len(argv) > 2 and not argv[2].startswith("--"):
        calls = pstats_calls(argv[2])
        want = sum(calls.values())
        bad = {k: (counts.get(k, 0), v) for k, v in calls.items() if counts.get(k, 0) != v}
        extra = {k: v for k, v in counts.items() if k not in calls}
        if want != total or bad or extra:
            print("profile: %d calls, trace: %d slices" % (want, total))
            for k, v in list(bad.items())[:10]:
                print("  %s: trace %d, profile %d" % (k, v[0], v[1]))
            for k, v in list(extra.items())[:10]:
                print("  %s: trace %d, not in the profile" % (k, v))
            return 1
        print("equal to the profile's %d calls, function by function" % want)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
# SPDX-License-Identifier: MIT
