#!/usr/bin/env python3
"""An independent reader of the calling-context tree fnprof keeps after the pstats dict.

Written from docs/tree-format.md, not from profile/tree_read.c, so that the tests compare
two readings of the format (versions 1 to 4: 2 adds the run's metadata, 3 a memory
profile's columns, 4 a checksum over the header's fields and the body). Also rebuilds cProfile's
numbers from the tree, as a second derivation beside profile/model.c, and writes made-up
profiles for the views' tests (build, encode):

    python3 fnptree.py FILE.prof      # prints the metadata and the tree; exit 1 if the
                                      # tree does not match the dict

python3 standard library only.
"""

import io
import marshal
import struct
import sys
import zlib

MAGIC = b"FNPTREE\n"
HEADER = 44
VERSIONS = (1, 2, 3, 4)
KIND_NONE, KIND_TIME, KIND_CALLS = 0, 1, 2  # KIND_NONE: metadata alone (version 2)
MAX_META, MAX_META_KEY, MAX_META_VALUE = 4096, 256, 4096
PROCESS_KEY = ("~", 0, "<process>")


class TreeError(Exception):
    pass


class Node:
    __slots__ = ("index", "key", "parent", "thread", "ncalls", "ticks", "back", "flags",
                 "children", "mem")  # mem: (allocs, frees, freed, peak) or None

    def __repr__(self):
        return "Node(%d, %r, calls=%d, ticks=%d)" % (self.index, self.key, self.ncalls, self.ticks)


class Tree:
    """kind (KIND_TIME or KIND_CALLS; KIND_NONE for a trailer of metadata alone, with no
    thread and no node), tick_seconds, threads (names), nodes (pre-order, children linked),
    meta ([(key, value)] in the file's order, str)."""

    def __init__(self, kind, tick_seconds, threads, nodes, meta=None):
        self.kind, self.tick_seconds, self.threads, self.nodes = kind, tick_seconds, threads, nodes
        self.meta = list(meta or [])

    def seconds(self, ticks):
        return ticks * self.tick_seconds

    def roots(self):
        return [n for n in self.nodes if n.parent is None]

    def path(self, node):
        keys = []
        while node is not None:
            keys.append(node.key)
            node = node.parent
        return tuple(reversed(keys))

    def self_value(self, node):
        v = node.ticks - node.back - sum(c.ticks for c in node.children)
        return max(v, 0)


def _uleb(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            raise TreeError("cut short")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _sleb(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            raise TreeError("cut short")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if b & 0x40:
                value -= 1 << shift
            return value, pos


def read_all(path):
    """Returns (stats dict, Tree or None, metadata [(key, value)]): the tree None when the
    file has none (no trailer, or one of metadata alone). Raises TreeError for a damaged
    trailer."""
    with open(path, "rb") as f:
        data = f.read()
    stream = io.BytesIO(data)
    stats = marshal.load(stream)
    end = stream.tell()
    if end == len(data):
        return stats, None, []
    tree = parse(stats, data[:end], data[end:])
    return stats, (None if tree.kind == KIND_NONE else tree), tree.meta


def read(path):
    """Returns (stats dict, Tree or None). Raises TreeError for a damaged tree."""
    stats, tree, _ = read_all(path)
    return stats, tree


def read_meta(path):
    """The file's metadata, [(key, value)] in order; [] when it has none."""
    return read_all(path)[2]


def _text(body, pos, least, most, what):
    n, pos = _uleb(body, pos)
    if not least <= n <= most or pos + n > len(body):
        raise TreeError("%d bytes of %s" % (n, what))
    raw = body[pos:pos + n]
    if b"\0" in raw:
        raise TreeError("a NUL in %s" % what)
    return raw.decode("utf-8", "replace"), pos + n


def checksum(header, body):
    """The field at offset 32: from version 4, the CRC-32 of the header's bytes 8-31 and
    36-43 (every field but the magic and the checksum), then of the body; before, of the
    body alone."""
    crc = 0
    if struct.unpack_from("<I", header, 8)[0] >= 4:
        crc = zlib.crc32(header[36:44], zlib.crc32(header[8:32]))
    return zlib.crc32(body, crc)


def parse(stats, dict_bytes, trailer):
    """The trailer as a Tree; a trailer of metadata alone is a Tree of kind KIND_NONE."""
    if len(trailer) < HEADER or trailer[:8] != MAGIC:
        raise TreeError("no FNPTREE header")
    (version, kind, nfuncs, dict_crc, body_len, body_crc,
     tick_seconds) = struct.unpack_from("<IIIIQId", trailer, 8)
    if version not in VERSIONS:
        raise TreeError("version %d" % version)
    if kind not in (KIND_TIME, KIND_CALLS) and not (kind == KIND_NONE and version >= 2):
        raise TreeError("unit %d" % kind)
    if not 0 < tick_seconds < 1e6:
        raise TreeError("a tick of %r seconds" % tick_seconds)
    keys = list(stats.keys())
    if nfuncs != len(keys):
        raise TreeError("made for %d functions, the dict has %d" % (nfuncs, len(keys)))
    if dict_crc != zlib.crc32(dict_bytes):
        raise TreeError("dict checksum")
    body = trailer[HEADER:]
    if body_len != len(body):
        raise TreeError("%d body bytes announced, %d present" % (body_len, len(body)))
    if body_crc != checksum(trailer[:HEADER], body):
        raise TreeError("body checksum")
    if kind != KIND_TIME and tick_seconds != 1.0:
        raise TreeError("a tick of %r seconds for kind %d" % (tick_seconds, kind))
    pos = 0
    meta = []
    if version >= 2:
        nmeta, pos = _uleb(body, pos)
        if nmeta > MAX_META:
            raise TreeError("%d metadata pairs" % nmeta)
        for _ in range(nmeta):
            key, pos = _text(body, pos, 1, MAX_META_KEY, "a metadata key")
            value, pos = _text(body, pos, 0, MAX_META_VALUE, "a metadata value")
            meta.append((key, value))
        if len({k for k, _ in meta}) != len(meta):
            raise TreeError("a metadata key twice")
    nthreads, pos = _uleb(body, pos)
    threads = []
    for _ in range(nthreads):
        n, pos = _uleb(body, pos)
        threads.append(body[pos:pos + n].decode("utf-8", "replace"))
        pos += n
    nnodes, pos = _uleb(body, pos)
    if kind == KIND_NONE and (nthreads or nnodes):
        raise TreeError("kind 0 with %d threads and %d nodes" % (nthreads, nnodes))
    nodes = []
    for i in range(nnodes):
        node = Node()
        node.index = i
        func, pos = _uleb(body, pos)
        up, pos = _uleb(body, pos)
        if func >= len(keys) or up > i:
            raise TreeError("node %d: bad function or parent" % i)
        node.key = keys[func]
        node.children = []
        if up == 0:
            node.parent = None
            node.thread, pos = _uleb(body, pos)
            if node.thread >= nthreads:
                raise TreeError("node %d: bad thread" % i)
        else:
            node.parent = nodes[i - up]
            node.thread = node.parent.thread
            node.parent.children.append(node)
        node.ncalls, pos = _uleb(body, pos)
        node.ticks, pos = _uleb(body, pos)
        node.back, pos = _sleb(body, pos)
        node.flags, pos = _uleb(body, pos)
        node.mem = None
        nodes.append(node)
    if version >= 3:
        nrows, pos = _uleb(body, pos)
        if nrows not in (0, nnodes):
            raise TreeError("%d memory rows for %d nodes" % (nrows, nnodes))
        for node in nodes[:nrows]:
            row = []
            for _ in range(4):
                v, pos = _uleb(body, pos)
                row.append(v)
            if row[1] > row[0]:
                raise TreeError("node %d frees more blocks than it allocated" % node.index)
            node.mem = tuple(row)
    if pos != len(body):
        raise TreeError("%d bytes after the last node" % (len(body) - pos))
    return Tree(kind, tick_seconds, threads, nodes, meta)


def build(kind, tick_seconds, threads, keys, rows):
    """A Tree from rows [(index into keys, parent row or None, thread, ncalls, inclusive
    ticks)] in canonical pre-order; back and flags 0."""
    nodes = []
    for i, (func, parent, thread, ncalls, ticks) in enumerate(rows):
        node = Node()
        node.index, node.key, node.children = i, keys[func], []
        node.parent = nodes[parent] if parent is not None else None
        node.thread = thread if parent is None else node.parent.thread
        node.ncalls, node.ticks, node.back, node.flags = ncalls, ticks, 0, 0
        node.mem = None
        if node.parent is not None:
            node.parent.children.append(node)
        nodes.append(node)
    return Tree(kind, tick_seconds, list(threads), nodes)


def _put_uleb(v, out):
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | 0x80 if v else b)
        if not v:
            return


def _put_sleb(v, out):
    while True:
        b = v & 0x7F
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b if done else b | 0x80)
        if done:
            return


def _put_text(text, out):
    raw = text if isinstance(text, bytes) else text.encode()
    _put_uleb(len(raw), out)
    out += raw


def encode(stats, tree, meta=None, version=2):
    """The bytes of a profile file: stats marshalled, then tree (whose keys are stats keys)
    as the trailer docs/tree-format.md lays out, with meta ([(key, value)], str or bytes;
    default tree.meta). tree None: a trailer of metadata alone (kind 0). version 1 writes
    no metadata; version 3 (and 4, whose checksum covers the header too) the nodes' memory
    columns (node.mem), all of them or none. Thread names may be str or bytes."""
    dict_bytes = marshal.dumps(stats)
    position = {k: i for i, k in enumerate(stats)}
    if meta is None:
        meta = tree.meta if tree is not None else []
    if tree is None:
        tree = Tree(KIND_NONE, 1.0, [], [])
    body = bytearray()
    if version >= 2:
        _put_uleb(len(meta), body)
        for key, value in meta:
            _put_text(key, body)
            _put_text(value, body)
    _put_uleb(len(tree.threads), body)
    for name in tree.threads:
        raw = name if isinstance(name, bytes) else name.encode()
        _put_uleb(len(raw), body)
        body += raw
    _put_uleb(len(tree.nodes), body)
    for node in tree.nodes:
        _put_uleb(position[node.key], body)
        _put_uleb(0 if node.parent is None else node.index - node.parent.index, body)
        if node.parent is None:
            _put_uleb(node.thread, body)
        for v in (node.ncalls, node.ticks):
            _put_uleb(v, body)
        _put_sleb(node.back, body)
        _put_uleb(node.flags, body)
    if version >= 3:
        rows = [n.mem for n in tree.nodes if n.mem is not None]
        _put_uleb(len(rows), body)
        for row in rows:
            for v in row:
                _put_uleb(v, body)
    head = MAGIC + struct.pack("<IIIIQId", version, tree.kind, len(stats), zlib.crc32(dict_bytes),
                               len(body), 0, tree.tick_seconds)
    head = head[:32] + struct.pack("<I", checksum(head, bytes(body))) + head[36:]
    return dict_bytes + head + bytes(body)


def derive(tree):
    """cProfile's numbers from the tree, as fnprof derives its dict: {key: [pcalls, ncalls,
    tottime, cumtime, {caller: [ncalls, pcalls, tottime, cumtime]}]}, times in seconds.

    A call is primitive for its function when no ancestor runs the same function, for its
    edge when no ancestor pair runs the same caller->callee (or as the node's flags say,
    for contexts merged beyond the node cap). With several threads or outermost functions
    the roots hang from ('~', 0, '<process>'), as in the dict.
    """
    stats = {}
    roots = tree.roots()
    several = len(tree.threads) > 1 or len({r.key for r in roots}) > 1

    def entry(key):
        return stats.setdefault(key, [0, 0, 0, 0, {}])

    if several:
        proc = entry(PROCESS_KEY)
        proc[0] += 1
        proc[1] += 1
        total = sum(r.ticks for r in roots)
        proc[2] += max(total - sum(r.ticks for r in roots), 0)
        proc[3] += total
    # Iterative pre-order walk with open counts of functions and edges on the path.
    fopen, eopen = {}, {}
    stack = [(r, PROCESS_KEY if several else None, False) for r in reversed(roots)]
    while stack:
        node, caller, leaving = stack.pop()
        edge = (caller, node.key) if caller is not None else None
        if leaving:
            fopen[node.key] -= 1
            if edge:
                eopen[edge] -= 1
            continue
        given = node.flags & 1
        func_open = (node.flags & 2) if given else fopen.get(node.key, 0)
        edge_open = ((node.flags & 4) if given else eopen.get(edge, 0)) if edge else 0
        own = node.ticks - node.back - sum(c.ticks for c in node.children)
        e = entry(node.key)
        e[1] += node.ncalls
        e[2] += own
        if not func_open:
            e[0] += node.ncalls
            e[3] += node.ticks
        if edge:
            ed = e[4].setdefault(caller, [0, 0, 0, 0])
            ed[0] += node.ncalls
            ed[2] += own
            if not edge_open:
                ed[1] += node.ncalls
                ed[3] += node.ticks
            eopen[edge] = eopen.get(edge, 0) + 1
        fopen[node.key] = fopen.get(node.key, 0) + 1
        stack.append((node, caller, True))
        for child in reversed(node.children):
            stack.append((child, node.key, False))
    out = {}
    for key, (pc, nc, tt, ct, callers) in stats.items():
        out[key] = (pc, nc, tree.seconds(max(tt, 0)), tree.seconds(max(ct, 0)),
                    {c: (a, b, tree.seconds(max(x, 0)), tree.seconds(max(y, 0)))
                     for c, (a, b, x, y) in callers.items()})
    return out


def _close(a, b):
    return abs(a - b) <= 1e-6 + 1e-6 * max(abs(a), abs(b))


def check(stats, tree):
    """Problems (strings) where the tree's derivation differs from the dict; none for a
    trailer of metadata alone, which has no tree to differ."""
    problems = []
    if tree.kind == KIND_NONE:
        return problems
    derived = derive(tree)
    for key, value in stats.items():
        if key[0] == "~" and key[2].startswith("<fnprof:"):
            continue  # the label of calls merged beyond the node cap: no tree node
        d = derived.get(key)
        if d is None:
            problems.append("%r: in the dict, not in the tree" % (key,))
            continue
        # The synthetic root has one call per profile that was added into this one (fnprof
        # merge); the tree has one root for them all.
        counts_differ = (value[0], value[1]) != (d[0], d[1]) and key != PROCESS_KEY
        if counts_differ or not (_close(value[2], d[2])
                                                         and _close(value[3], d[3])):
            problems.append("%r: dict %r, tree %r" % (key, value[:4], d[:4]))
        for caller, ev in value[4].items():
            de = d[4].get(caller)
            if de is None or (ev[0], ev[1]) != (de[0], de[1]) or not (
                    _close(ev[2], de[2]) and _close(ev[3], de[3])):
                problems.append("%r <- %r: dict %r, tree %r" % (key, caller, ev, de))
        for caller in d[4]:
            if caller not in value[4]:
                problems.append("%r <- %r: in the tree, not in the dict" % (key, caller))
    for key in derived:
        if key not in stats:
            problems.append("%r: in the tree, not in the dict" % (key,))
    return problems


def name_counts(stats):
    """{name: (pcalls, ncalls, {caller name: (ncalls, pcalls)})} of a pstats dict: the
    numbers a test holds exact, by function name."""
    out = {}
    for (_f, _line, name), (pc, nc, _tt, _ct, callers) in stats.items():
        out[name] = (pc, nc, {c[2]: (v[0], v[1]) for c, v in callers.items()})
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        stats, tree, meta = read_all(argv[1])
    except (TreeError, EOFError, ValueError) as e:
        print("%s: %s" % (argv[1], e), file=sys.stderr)
        return 1
    for key, value in meta:
        print("%s: %s" % (key, value))
    if tree is None:
        print("%s: no tree" % argv[1])
        return 1
    for n in tree.nodes:
        depth = len(tree.path(n)) - 1
        print("%s%s:%d %s  calls=%d ticks=%d back=%d thread=%s%s" % (
            "  " * depth, n.key[0], n.key[1], n.key[2], n.ncalls, n.ticks, n.back,
            tree.threads[n.thread],
            "" if n.mem is None else " allocs=%d frees=%d freed=%d peak=%d" % n.mem))
    problems = check(stats, tree)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
# SPDX-License-Identifier: MIT
