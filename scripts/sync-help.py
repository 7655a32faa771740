#!/usr/bin/env python3
"""sync-help.py - keeps the copies of lxtrace's --help texts in the docs equal to the program's.

  python3 scripts/sync-help.py LXTRACE FILE...          rewrite each FILE's copies (make docs)
  python3 scripts/sync-help.py --check LXTRACE FILE...  fail when a copy differs (make test)

Each command's options have one source, its option table (user/cli/record_args.c,
user/cli/cmd_report.c, ...); a doc shows `lxtrace COMMAND --help` between the lines
"<!-- begin: lxtrace COMMAND --help -->" and "<!-- end: lxtrace COMMAND --help -->", as a
fenced text block. Each FILE must hold at least one such block.
"""
import difflib
import re
import subprocess
import sys

BEGIN = re.compile(r'<!-- begin: lxtrace ([a-z]+) --help -->')


def end_of(cmd):
    return '<!-- end: lxtrace %s --help -->' % cmd


def synced(lxtrace, text):
    """text with every block replaced by the program's help; the commands found."""
    out, pos, cmds = [], 0, []
    for m in BEGIN.finditer(text):
        if m.start() < pos:
            continue
        cmd = m.group(1)
        end = text.find(end_of(cmd), m.end())
        if end < 0:
            raise ValueError('no %s after %s' % (end_of(cmd), m.group(0)))
        help_text = subprocess.run([lxtrace, cmd, '--help'], capture_output=True, text=True,
                                   check=True).stdout
        out.append(text[pos:m.start()])
        out.append(m.group(0) + '\n```text\n' + help_text + '```\n' + end_of(cmd))
        pos = end + len(end_of(cmd))
        cmds.append(cmd)
    out.append(text[pos:])
    return ''.join(out), cmds


def main():
    args = sys.argv[1:]
    check = args[:1] == ['--check']
    if check:
        args = args[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    lxtrace, files = args[0], args[1:]
    bad = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        try:
            new, cmds = synced(lxtrace, text)
        except ValueError as e:
            print('sync-help: %s: %s' % (path, e))
            bad += 1
            continue
        if not cmds:
            print('sync-help: %s: no <!-- begin: lxtrace COMMAND --help --> ... block' % path)
            bad += 1
            continue
        if new == text:
            continue
        if check:
            print('sync-help: %s: its copy of `lxtrace %s --help` differs (make docs):'
                  % (path, ' / '.join(cmds)))
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       path, 'lxtrace --help', n=1))
            bad += 1
        else:
            with open(path, 'w') as f:
                f.write(new)
            print('sync-help: %s updated' % path)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
