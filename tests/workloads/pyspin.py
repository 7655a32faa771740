"""pyspin.py - a Python program whose functions are known, for the python suite
(tests/integration/python.c).

  pyspin.py spin SECS      the main thread spins in lx_hidden_outer -> lx_hidden_middle ->
                           lx_hidden_inner for SECS seconds
  pyspin.py block SECS     threads (Python's threading) wait under known functions: one in
                           time.sleep, one in socket.recv, one in threading.Lock.acquire
  pyspin.py pingpong N     two threads hand a token N times (bench/python.sh)
  pyspin.py MODE SECS wait  the same once a line comes on stdin (for lxtrace record -p)
  pyspin.py forge SECS     overwrites its own frame's code pointer with ctypes, then spins: the
                           tracer must show native frames and count them, not crash

Reports as tests/workloads/workload.h says: "stat KEY LINE" for the lines the test expects
(inner_line, middle_line, ...), "tid ROLE TID" for each thread that matters.
"""
import os
import sys
import threading
import time


def lx_hidden_inner(until):
    n = 0
    while time.monotonic() < until:  # LX_INNER_LINE
        n += 1
    return n


def lx_hidden_middle(until):
    return lx_hidden_inner(until)  # LX_MIDDLE_LINE


def lx_hidden_outer(until):
    return lx_hidden_middle(until)  # LX_OUTER_LINE


def report_tid(role):
    # One write per line: threads report at once.
    os.write(1, b"tid %s %d\n" % (role.encode(), threading.get_native_id()))


def first_sight():
    # A new thread is known to the tracer once it has read the interpreter's thread list
    # (every 50 ms, docs/stacks.md): stacks before are native only, counted.
    time.sleep(0.3)


def lx_sleeper(secs):
    report_tid("sleeper")
    first_sight()
    time.sleep(secs)  # LX_SLEEP_LINE


def lx_receiver(sock):
    report_tid("receiver")
    first_sight()
    sock.recv(1)  # LX_RECV_LINE


def lx_locker(lock, secs):
    report_tid("locker")
    first_sight()
    lock.acquire(timeout=secs)  # LX_LOCK_LINE


def report_lines():
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            mark = line.rstrip().rsplit("# LX_", 1)
            if len(mark) == 2 and mark[1].endswith("_LINE"):
                os.write(1, b"stat %s %d\n" % (mark[1].lower().encode(), i))


def spin(secs):
    report_tid("spin")
    lx_hidden_outer(time.monotonic() + secs)


def block(secs):
    import socket
    a, b = socket.socketpair()
    lock = threading.Lock()
    lock.acquire()
    ts = [threading.Thread(target=lx_sleeper, args=(secs,), name="sleeper"),
          threading.Thread(target=lx_receiver, args=(a,), name="receiver"),
          threading.Thread(target=lx_locker, args=(lock, secs), name="locker")]
    for t in ts:
        t.start()
    time.sleep(secs)
    b.send(b"x")
    lock.release()
    for t in ts:
        t.join()


def pingpong(rounds):
    # Two threads hand a token back and forth: a switch and a wakeup per hand, each with the
    # thread's stack (bench/python.sh).
    import queue
    a, b = queue.Queue(), queue.Queue()

    def lx_pong():
        for _ in range(int(rounds)):
            b.put(a.get())

    t = threading.Thread(target=lx_pong)
    t.start()
    for i in range(int(rounds)):
        a.put(i)
        b.get()
    t.join()


def lx_forged(secs):
    import ctypes
    # The caller's frame, suspended while this one runs, gets a code object pointer
    # (f_code, or f_executable in 3.13) that points at an int, which is no code object: the
    # walk reads it, the tracer must refuse it. Put back before the caller runs again.
    frame = sys._getframe(1)
    bogus = 12345678901234567
    iframe = ctypes.c_void_p.from_address(id(frame) + 24).value  # PyFrameObject.f_frame
    off = {(3, 11): 32, (3, 12): 0, (3, 13): 0}[sys.version_info[:2]]
    slot = ctypes.c_void_p.from_address(iframe + off)
    saved = slot.value
    slot.value = id(bogus)
    report_tid("forge")
    until = time.monotonic() + secs
    while time.monotonic() < until:
        pass
    slot.value = saved


def forge(secs):
    lx_forged(secs)


if __name__ == "__main__":
    report_lines()
    if len(sys.argv) > 3 and sys.argv[3] == "wait":
        # Started before the recorder (lxtrace record -p PID): a line on stdin says go.
        sys.stdin.readline()
    {"spin": spin, "block": block, "forge": forge, "pingpong": pingpong}[sys.argv[1]](float(sys.argv[2]))
