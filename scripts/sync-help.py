#!/usr/bin/env python3
"""sync-help.py - keeps the copies of `lxtrace record --help` in the docs equal to the program's.

  python3 scripts/sync-help.py LXTRACE FILE...          rewrite each FILE's copy (make docs)
  python3 scripts/sync-help.py --check LXTRACE FILE...  fail when a copy differs (make test)

The option list has one source, the table in user/cli/record_args.c; a doc shows it between
the lines "<!-- begin: lxtrace record --help -->" and "<!-- end: lxtrace record --help -->",
as a fenced text block.
"""
import difflib
import subprocess
import sys

BEGIN = '<!-- begin: lxtrace record --help -->'
END = '<!-- end: lxtrace record --help -->'


def main():
    args = sys.argv[1:]
    check = args[:1] == ['--check']
    if check:
        args = args[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    lxtrace, files = args[0], args[1:]
    help_text = subprocess.run([lxtrace, 'record', '--help'], capture_output=True, text=True,
                               check=True).stdout
    block = BEGIN + '\n```text\n' + help_text + '```\n' + END
    bad = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        start, end = text.find(BEGIN), text.find(END)
        if start < 0 or end < start:
            print('sync-help: %s: no %s ... %s block' % (path, BEGIN, END))
            bad += 1
            continue
        new = text[:start] + block + text[end + len(END):]
        if new == text:
            continue
        if check:
            print('sync-help: %s: its copy of `lxtrace record --help` differs (make docs):' % path)
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       path, 'lxtrace record --help', n=1))
            bad += 1
        else:
            with open(path, 'w') as f:
                f.write(new)
            print('sync-help: %s updated' % path)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
