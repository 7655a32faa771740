#!/usr/bin/env python3
"""check-refs.py - every reference in the sources and docs resolves inside the repository.

  python3 scripts/check-refs.py

- A path of the tree named in a doc or a comment (lib/, bpf/, format/, user/, tests/, bench/,
  include/, scripts/, docs/, vmlinux/, .ci/) exists; a name with * matches something.
- A section cited as "docs/format.md §N" (or "§N" in docs/model.md, which cites format.md by
  section) is a heading of docs/format.md.
- Nothing points at a machine's private paths (/work/...) or at a document outside the
  repository.

Prints one line per broken reference and exits 1 if there is any.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPS = ('lib', 'bpf', 'format', 'user', 'tests', 'bench', 'include', 'scripts', 'docs', 'vmlinux', '.ci')
PATH_RE = re.compile(r'(?<![\w./<=-])((?:%s)/[\w./*-]*[\w*/])' % '|'.join(re.escape(t) for t in TOPS))
SECTION_RE = re.compile(r'docs/format\.md`?\s*((?:§\s*[\d.]+(?:,\s*)?)+)')
OUTSIDE_RE = re.compile(r'/work/|shared/docs|go-trace-format\.md')


def tracked():
    out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard'], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    keep = ('.c', '.h', '.cc', '.go', '.md', '.sh', '.py', 'Makefile', 'run')
    return [f for f in out if f.endswith(keep) and os.path.isfile(os.path.join(ROOT, f))]


def sections():
    found = set()
    with open(os.path.join(ROOT, 'docs/format.md')) as f:
        for line in f:
            m = re.match(r'#+\s+([\d.]+)\.?\s', line)
            if m:
                found.add(m.group(1).rstrip('.'))
    return found


def exists(path):
    """Whether path names something of the tree. Build products are named by their sources'
    paths: an object is its .c, a name without an extension in an existing directory (a
    program, a file prefix) is taken as one; placeholders in capitals (ARCH, NAME) as well."""
    path = path.rstrip('.')
    if re.search(r'[A-Z]{3,}', path):
        return True
    if path.endswith(('.o', '.d')):
        path = path[:-2] + '.c'
    full = os.path.join(ROOT, path)
    if '*' in path:
        return bool(glob.glob(full))
    if os.path.exists(full):
        return True
    last = os.path.basename(path)
    ext = last.rsplit('.', 1)[1] if '.' in last.lstrip('.') else ''
    return (not ext or ext.isdigit()) and os.path.isdir(os.path.dirname(full))


def main():
    heads = sections()
    errors = []
    for f in tracked():
        if f == 'scripts/check-refs.py':
            continue
        with open(os.path.join(ROOT, f), errors='replace') as fh:
            for n, line in enumerate(fh, 1):
                where = '%s:%d' % (f, n)
                if OUTSIDE_RE.search(line):
                    errors.append('%s: points outside the repository: %s' % (where, line.strip()))
                for m in PATH_RE.finditer(line):
                    path = m.group(1)
                    if not exists(path):
                        errors.append('%s: no such path: %s' % (where, path))
                cites = [c for m in SECTION_RE.finditer(line) for c in re.findall(r'[\d.]+', m.group(1))]
                if f == 'docs/model.md':
                    cites += re.findall(r'§\s*([\d.]+)', line)
                for c in cites:
                    c = c.rstrip('.')
                    if c not in heads:
                        errors.append('%s: docs/format.md has no section %s' % (where, c))
    for e in sorted(set(errors)):
        print('check-refs: ' + e)
    if not errors:
        print('check-refs: every path and docs/format.md section named in the tree exists')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
