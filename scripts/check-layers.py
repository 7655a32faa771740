#!/usr/bin/env python3
"""check-layers.py - the layout's rules, checked (docs/layout.md).

  python3 scripts/check-layers.py BUILD_DIR

1. Every source file of lib/, bpf/, format/ and user/ is in a wing of docs/layout.md's table.
2. No file includes a header of a later wing (the table's order, lowest first), nor one of
   a sibling: wings that share a layer number (the two trace formats) know nothing of each
   other.
3. The include graph of those files has no cycle.
4. No cycle of calls between files: from the built objects (BUILD_DIR/path.o, nm), file A
   calls file B when A's object uses a symbol B's defines; that graph must have no cycle.

Prints one line per violation and exits 1 if there is any. The table of wings is read from
docs/layout.md, so the order is written in one place.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCOPE = ('lib/', 'bpf/', 'format/', 'user/')
# Headers generated into the build directory, and the wing whose sources they come from.
GENERATED = {'lxtrace.skel.h': 'bpf/', 'annotate.skel.h': 'bpf/', 'syscall_names.h': 'user/proc/',
             'vmlinux.h': 'bpf/'}


def wings():
    """The wings of docs/layout.md's table, lowest first, each with its layer number: rows like
    | 3 | `format/` | ... |. Numbers run 1, 2, ... with no gap; siblings repeat one."""
    rows = []
    with open(os.path.join(ROOT, 'docs/layout.md')) as f:
        for line in f:
            m = re.match(r'\|\s*(\d+)\s*\|\s*`([^`]+/)`\s*\|', line)
            if m:
                rows.append((int(m.group(1)), m.group(2)))
    rows.sort()
    numbers = sorted({n for n, _ in rows})
    if not rows or numbers != list(range(1, len(numbers) + 1)):
        sys.exit('check-layers: docs/layout.md: no numbered table of wings (| 1 | `lib/` | ...)')
    return rows


def wing_of(path, order):
    """The longest wing that is a prefix of path, or None."""
    best = None
    for w in order:
        if path.startswith(w) and (best is None or len(w) > len(best)):
            best = w
    return best


def sources():
    # Files git tracks or would track: a new file counts before it is committed.
    out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard', *SCOPE],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if f.endswith(('.c', '.h')) and os.path.exists(os.path.join(ROOT, f))]


def includes(path, files):
    """The in-tree files path includes with "...": resolved as the compiler would (-I. then the
    file's own directory), or a generated header's name."""
    found = []
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            name = m.group(1)
            local = os.path.normpath(os.path.join(os.path.dirname(path), name))
            if name in files:
                found.append(name)
            elif local in files:
                found.append(local)
            elif os.path.basename(name) in GENERATED:
                found.append(os.path.basename(name))
    return found


def find_cycle(graph):
    """A cycle of graph (node -> set of nodes) as a list of nodes, or None."""
    color, stack = {}, []

    def visit(n):
        color[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not color.get(m):
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if not color.get(n):
            c = visit(n)
            if c:
                return c
    return None


def symbols(obj):
    """(defined, used) global symbols of an object file."""
    out = subprocess.run(['nm', '-P', obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == 'U':
            used.add(name)
        elif kind in 'TDBRVWGS':
            defined.add(name)
    return defined, used


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: check-layers.py BUILD_DIR')
    build = sys.argv[1]
    rows = wings()
    order = [w for _, w in rows]
    files = set(sources())
    errors = []

    rank = {w: n for n, w in rows}
    graph = {}
    for path in sorted(files):
        w = wing_of(path, order)
        if w is None:
            errors.append('%s: in no wing of docs/layout.md' % path)
            continue
        graph[path] = set()
        for inc in includes(path, files):
            iw = GENERATED.get(inc) or wing_of(inc, order)
            if inc in files:
                graph[path].add(inc)
            if iw is not None and rank[iw] > rank[w]:
                errors.append('%s (%s) includes %s of a later wing (%s)' % (path, w, inc, iw))
            elif iw is not None and iw != w and rank[iw] == rank[w]:
                errors.append('%s (%s) includes %s of a sibling wing (%s)' % (path, w, inc, iw))
    cycle = find_cycle(graph)
    if cycle:
        errors.append('include cycle: ' + ' -> '.join(cycle))

    objs = {}
    for path in sorted(f for f in files if f.endswith('.c') and not f.startswith('bpf/')):
        obj = os.path.join(build, path[:-2] + '.o')
        if not os.path.exists(obj):
            errors.append('%s: not built (make first)' % obj)
            continue
        objs[path] = symbols(obj)
    owner = {}
    for path, (defined, _) in objs.items():
        for s in defined:
            owner[s] = path
    calls = {path: {owner[s] for s in used if s in owner and owner[s] != path}
             for path, (_, used) in objs.items()}
    cycle = find_cycle(calls)
    if cycle:
        errors.append('call cycle: ' + ' -> '.join(cycle))

    for e in errors:
        print('check-layers: ' + e)
    if not errors:
        print('check-layers: %d files in %d wings, includes go down and never to a sibling, '
              'no include or call cycle' % (len(files), len(order)))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
