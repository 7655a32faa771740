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
  pyspin.py view SECS      threads park under known functions (time.sleep, Lock.acquire, a
                           method in Event.wait, queue.Queue.get); once all are parked the
                           program prints CPython's own view of each (sys._current_frames()):
                           "view TID FUNC:LINE ..." leaf first, then sleeps SECS and exits
                           without waking them
  pyspin.py parked SECS FILE  the same, then creates FILE and waits for a line on stdin (the
                           recorder started with -p after the threads parked) before it exits
  pyspin.py first SECS     threads block at their first line, never to run again: Python's
                           threads in time.sleep, Lock.acquire and socket.recv, and a thread
                           created by C (pthread_create through ctypes) that calls a Python
                           function (PyGILState_Ensure) which sleeps; their tids reported
                           once they blocked, then the program exits SECS later without waking
                           them: each thread's last block is its first in Python
  pyspin.py deep SECS      the main thread recurses 100 calls deep (lx_deep) and spins in the
                           innermost (lx_deep_leaf) for SECS seconds of its own CPU time
  pyspin.py offsets SECS   3.13+: changes one offset of the interpreter's own _Py_DebugOffsets
                           (which only debuggers read), then spins as spin does: the tracer must
                           leave it native, counted, rather than trust its table

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


def lx_view_nap_inner(secs):
    time.sleep(secs)


def lx_view_nap(secs):
    report_tid("nap")
    first_sight()
    lx_view_nap_inner(secs)


def lx_view_lock(lock):
    report_tid("lock")
    first_sight()
    lock.acquire()


class LxViewer:
    def lx_wait(self, event):
        report_tid("event")
        first_sight()
        event.wait()

    def lx_get(self, q):
        report_tid("queue")
        first_sight()
        q.get()


def frame_name(code):
    # As lxtrace names a frame: the file's module, then the qualified name (3.11+; 3.10 has
    # only the name).
    base = os.path.basename(code.co_filename)
    module = base.split(".")[0]
    if module == "__init__":
        module = os.path.basename(os.path.dirname(code.co_filename))
    return "%s.%s" % (module, getattr(code, "co_qualname", code.co_name))


def parks(frame, leaf):
    # Parked: the thread's leaf Python frame is at the call it blocks in.
    return frame is not None and frame.f_code.co_name == leaf


def view(secs, ready=None):
    import queue
    lock, event, q = threading.Lock(), threading.Event(), queue.Queue()
    lock.acquire()
    viewer = LxViewer()
    ts = [(threading.Thread(target=lx_view_nap, args=(1000,), daemon=True), "lx_view_nap_inner"),
          (threading.Thread(target=lx_view_lock, args=(lock,), daemon=True), "lx_view_lock"),
          (threading.Thread(target=viewer.lx_wait, args=(event,), daemon=True), "wait"),
          (threading.Thread(target=viewer.lx_get, args=(q,), daemon=True), "wait")]
    for t, _ in ts:
        t.start()
    while True:
        # Parked twice 0.5 s apart: in the blocking call by then, C entered well before.
        frames = sys._current_frames()
        if all(parks(frames.get(t.ident), leaf) for t, leaf in ts):
            time.sleep(0.5)
            frames = sys._current_frames()
            if all(parks(frames.get(t.ident), leaf) for t, leaf in ts):
                break
        time.sleep(0.05)
    for t, _ in ts:
        chain, f = [], frames[t.ident]
        while f is not None:
            chain.append("%s:%d" % (frame_name(f.f_code), f.f_lineno))
            f = f.f_back
        os.write(1, ("view %d %s\n" % (t.native_id, " ".join(chain))).encode())
    if ready:
        open(ready, "w").close()
        sys.stdin.readline()
    else:
        time.sleep(secs)
    # Out without waking them: their last blocks are the ones viewed.
    os._exit(0)


def lx_first_sleeper(tids, secs):
    tids["first_sleeper"] = threading.get_native_id()
    time.sleep(secs)  # LX_FIRST_SLEEP_LINE


def lx_first_locker(tids, lock):
    tids["first_locker"] = threading.get_native_id()
    lock.acquire()  # LX_FIRST_LOCK_LINE


def lx_first_receiver(tids, sock):
    tids["first_receiver"] = threading.get_native_id()
    sock.recv(1)  # LX_FIRST_RECV_LINE


def first(secs):
    # No syscall in the threads before they block (the tids are reported by the main thread):
    # their first stacks in Python are the blocks, within a millisecond of their start.
    import ctypes
    import socket
    tids = {}
    lock = threading.Lock()
    lock.acquire()
    a, b = socket.socketpair()

    def lx_first_from_c(arg):
        tids["first_from_c"] = threading.get_native_id()
        time.sleep(secs + 100)  # LX_FIRST_FROM_C_LINE
        return 0

    start = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
    callback = start(lx_first_from_c)
    libc = ctypes.CDLL(None)
    libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, start,
                                    ctypes.c_void_p]
    for target, arg in ((lx_first_sleeper, secs + 100), (lx_first_locker, lock),
                        (lx_first_receiver, a)):
        threading.Thread(target=target, args=(tids, arg), daemon=True).start()
    handle = ctypes.c_ulong()
    if libc.pthread_create(ctypes.byref(handle), None, callback, None):
        sys.exit("pthread_create failed")
    while len(tids) < 4:
        time.sleep(0.01)
    time.sleep(0.2)
    for role, tid in sorted(tids.items()):
        os.write(1, b"tid %s %d\n" % (role.encode(), tid))
    time.sleep(secs)
    # Out without waking them: each thread's last block is the one at its first line.
    os._exit(0)


def lx_deep_leaf(until):
    n = 0
    while time.thread_time() < until:  # LX_DEEP_LEAF_LINE
        n += 1
    return n


def lx_deep(depth, until):
    if depth <= 1:
        return lx_deep_leaf(until)
    return lx_deep(depth - 1, until)  # LX_DEEP_LINE


def deep(secs):
    report_tid("deep")
    lx_deep(100, time.thread_time() + secs)


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
    if sys.version_info[:2] == (3, 10):
        # The frame object is the frame: PyFrameObject.f_code.
        slot = ctypes.c_void_p.from_address(id(frame) + 32)
    else:
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


def lie_in_debug_offsets():
    import ctypes
    # _Py_DebugOffsets.thread_state.current_frame, the 24th word of the block that starts
    # _PyRuntime (3.13's internal/pycore_runtime.h): moved by a word, a lie only a reader of
    # the block believes. Before the recorder starts, which reads the block once.
    runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    word = ctypes.c_uint64.from_address(runtime + 23 * 8)
    word.value += 8


if __name__ == "__main__":
    report_lines()
    if sys.argv[1] == "offsets":
        lie_in_debug_offsets()
    if len(sys.argv) > 3 and sys.argv[3] == "wait":
        # Started before the recorder (lxtrace record -p PID): a line on stdin says go.
        sys.stdin.readline()
    {"spin": spin, "block": block, "forge": forge, "pingpong": pingpong,
     "offsets": spin, "view": view, "first": first, "deep": deep,
     "parked": lambda secs: view(secs, sys.argv[3])}[sys.argv[1]](float(sys.argv[2]))
