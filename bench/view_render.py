#!/usr/bin/env python3
"""view_render.py - opens a `go tool trace` timeline page in headless Chromium and reports how
long the viewer took to show it and how much memory the browser needed.

Usage: bench/view_render.py URL [--png FILE] [--timeout SECONDS]

Chromium is driven through its DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4
out, one JSON message per NUL-terminated record), so nothing beyond Python's standard library
and Debian's `chromium` is needed. The page counts as shown when the trace viewer element has
its model (the JSON fetched, parsed and imported) and two animation frames have passed.

Memory is the peak of the summed PSS (proportional set size, so shared pages count once) of
Chromium's whole process tree while the page loads, minus the same sum on about:blank just
before: what the timeline costs, not what an idle browser costs.

Prints one line: state=shown|error:TEXT|timeout seconds=S mem_mib=M js_heap_mib=H
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

# Flags that work in a root container without a display, D-Bus or network access.
CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--window-size=1600,1000', '--remote-debugging-pipe']

# Evaluated in the page: 'model' once the viewer has imported the trace, the overlay's text when
# the viewer reports an error, 'loading' otherwise.
PAGE_STATE = """(function() {
  var v = document.getElementById('trace-viewer');
  if (v && v.model) return 'model';
  var o = document.querySelector('tr-ui-b-overlay');
  if (o && o.visible) return 'error:' + o.textContent.slice(0, 200);
  return 'loading';
})()"""


def tree_pss_kib(root):
    """Summed PSS of root and all its descendants, in KiB."""
    children = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(')') + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open('/proc/%d/smaps_rollup' % pid) as f:
                for line in f:
                    if line.startswith('Pss:'):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


class DevTools:
    """Requests and replies over Chromium's debugging pipe; events are read and dropped."""

    def __init__(self, rfd, wfd):
        self.rfd, self.wfd, self.next_id, self.buf = rfd, wfd, 0, b''

    def call(self, method, params=None, session=None, deadline=None):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.wfd, json.dumps(msg).encode() + b'\0')
        while True:
            reply = self._read(deadline)
            if reply.get('id') == self.next_id:
                if 'error' in reply:
                    raise RuntimeError('%s: %s' % (method, reply['error'].get('message')))
                return reply.get('result', {})

    def _read(self, deadline):
        while b'\0' not in self.buf:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError('no reply from chromium')
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise EOFError('chromium exited')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)


def move_above_9(fd):
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


def render(url, png, timeout):
    profile = tempfile.mkdtemp(prefix='view-render-')
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    # Chromium's ends go above 9 first, so that the redirections below, which move them to the
    # fds Chromium expects and close the originals, never close what they just moved.
    to_chrome_r = move_above_9(to_chrome_r)
    from_chrome_w = move_above_9(from_chrome_w)
    shell = 'exec "$@" 3<&%d 4>&%d %d<&- %d>&-' % (to_chrome_r, from_chrome_w, to_chrome_r, from_chrome_w)
    proc = subprocess.Popen(['bash', '-c', shell, 'bash', 'chromium', '--user-data-dir=' + profile] +
                            CHROMIUM_FLAGS + ['about:blank'],
                            pass_fds=(to_chrome_r, from_chrome_w),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    dt = DevTools(from_chrome_r, to_chrome_w)
    deadline = time.monotonic() + timeout
    try:
        targets = dt.call('Target.getTargets', deadline=deadline)['targetInfos']
        page = next(t for t in targets if t['type'] == 'page')
        session = dt.call('Target.attachToTarget', {'targetId': page['targetId'], 'flatten': True},
                          deadline=deadline)['sessionId']
        dt.call('Page.enable', session=session, deadline=deadline)
        idle = tree_pss_kib(proc.pid)
        t0 = time.monotonic()
        nav = dt.call('Page.navigate', {'url': url}, session=session, deadline=deadline)
        peak, state = idle, 'timeout'
        if nav.get('errorText'):
            state = 'error:' + nav['errorText']
        while state == 'timeout' and time.monotonic() < deadline:
            peak = max(peak, tree_pss_kib(proc.pid))
            r = dt.call('Runtime.evaluate', {'expression': PAGE_STATE, 'returnByValue': True},
                        session=session, deadline=deadline)
            value = r.get('result', {}).get('value', 'loading')
            if value != 'loading':
                state = value
                break
            time.sleep(0.1)
        if state == 'model':
            dt.call('Runtime.evaluate', {
                'expression': 'new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))',
                'awaitPromise': True}, session=session, deadline=deadline)
            state = 'shown'
        secs = time.monotonic() - t0
        peak = max(peak, tree_pss_kib(proc.pid))
        heap = dt.call('Runtime.getHeapUsage', session=session, deadline=deadline)['usedSize']
        if png:
            shot = dt.call('Page.captureScreenshot', {'format': 'png'}, session=session, deadline=deadline)
            with open(png, 'wb') as f:
                f.write(base64.b64decode(shot['data']))
        print('state=%s seconds=%.2f mem_mib=%.0f js_heap_mib=%.0f' %
              (state.replace(' ', '_'), secs, (peak - idle) / 1024, heap / 2**20))
        return 0 if state == 'shown' else 1
    finally:
        proc.kill()
        proc.wait()
        os.close(from_chrome_r)
        os.close(to_chrome_w)
        shutil.rmtree(profile, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('url')
    ap.add_argument('--png', help='also save a screenshot of the shown page')
    ap.add_argument('--timeout', type=float, default=300)
    args = ap.parse_args()
    if not shutil.which('chromium'):
        print('view_render.py: chromium not found (make deps)', file=sys.stderr)
        return 2
    try:
        return render(args.url, args.png, args.timeout)
    except (TimeoutError, EOFError, RuntimeError, StopIteration) as e:
        print('state=error:%s seconds=0 mem_mib=0 js_heap_mib=0' % str(e).replace(' ', '_'))
        return 1


if __name__ == '__main__':
    sys.exit(main())
