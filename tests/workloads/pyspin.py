"""pyspin.py - a Python program whose functions are known, for the python suite
(tests/integration/python.c).

  pyspin.py spin SECS      the main thread spins in lx_hidden_outer -> lx_hidden_middle ->
                           lx_hidden_inner for SECS seconds
  pyspin.py block SECS     threads (Python's threading) wait under known functions: one in
                           time.sleep, one in socket.recv, one in threading.Lock.acquire
  pyspin.py forge SECS     overwrites its own frame's code pointer with ctypes, then spins: the
                           tracer must show native frames and count them, not crash

Prints "LINE name=N" for the lines the test expects, and each thread's tid.
"""
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


def lx_sleeper(secs):
    time.sleep(secs)  # LX_SLEEP_LINE


def lx_receiver(sock):
    sock.recv(1)  # LX_RECV_LINE


def lx_locker(lock, secs):
    lock.acquire(timeout=secs)  # LX_LOCK_LINE


def print_lines():
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if "# LX_" in line and "print" not in line:
                print("LINE %s=%d" % (line.split("# ")[-1].strip(), i), flush=True)


def spin(secs):
    print("tid %d" % threading.get_native_id(), flush=True)
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


def forge(secs):
    import ctypes
    # This frame's code object pointer (f_code, or f_executable in 3.13) points elsewhere:
    # at an int object, which is no code object. The walk reads it; the daemon must refuse it.
    frame = sys._getframe()
    bogus = 12345678901234567
    iframe = ctypes.c_void_p.from_address(id(frame) + 24).value  # PyFrameObject.f_frame
    off = {(3, 11): 32, (3, 12): 0, (3, 13): 0}[sys.version_info[:2]]
    saved = ctypes.c_void_p.from_address(iframe + off).value
    ctypes.c_void_p.from_address(iframe + off).value = id(bogus)
    print("forged", flush=True)
    until = time.monotonic() + secs
    while time.monotonic() < until:
        pass
    ctypes.c_void_p.from_address(iframe + off).value = saved


if __name__ == "__main__":
    print_lines()
    {"spin": spin, "block": block, "forge": forge}[sys.argv[1]](float(sys.argv[2]))
