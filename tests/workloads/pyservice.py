"""pyservice.py - a Python service of 200 threads seen from its start, for the first-sight
test (tests/integration/python.c): its libraries are loaded by its threads as they start, after
the recorder attached.

  pyservice.py serve PATH CPUSECS   waits for a line on stdin (lxtrace record -p attaches
                                    meanwhile), then serves on the Unix socket PATH until it
                                    has used CPUSECS of CPU time (its own: a busy machine makes
                                    it last longer, not do less), then exits 0
  pyservice.py client PATH CONNS    the client that drives it: CONNS connections, each a
                                    request at a time, one of them closed and opened again
                                    every 200 answers; ends when the service does

The service's threads, each in a function of its own (the tests look for these names):
  lx_accept      1   blocked in accept, handing connections to the handlers
  lx_handle     64   blocked in Queue.get for a connection, then in recv, answering with json
  lx_event_loop  1   an asyncio loop of 20 tasks (lx_tick) in epoll_wait
  lx_work_*     48   computing: 8 each of sha (hashlib: libcrypto), ssl (ssl.RAND_bytes:
                     libssl), zlib, decimal (libmpdec), json, sqlite (libsqlite3), each
                     importing its module as it starts
  lx_lock_wait  42   taking one threading.Lock in turn
  lx_cond_wait  43   waiting on a threading.Condition the main thread notifies every 10 ms
and the main thread: 200.

Reports as tests/workloads/workload.h says: "tid ROLE TID" for every thread but the main one
(ROLE: the function's name without lx_), each as it starts.
"""
import os
import queue
import socket
import sys
import threading
import time

HANDLERS = 64
WORKERS = ("sha", "ssl", "zlib", "decimal", "json", "sqlite")
PER_WORKER = 8
LOCKERS = 42
WAITERS = 43
TICKS = 20


def report_tid(role):
    # One write per line: threads report at once.
    os.write(1, b"tid %s %d\n" % (role.encode(), threading.get_native_id()))


def lx_accept(listener, conns):
    report_tid("accept")
    while True:
        conn, _ = listener.accept()
        conns.put(conn)


def lx_handle(conns):
    import json
    report_tid("handle")
    while True:
        conn = conns.get()
        with conn:
            while True:
                req = conn.recv(4096)
                if not req:
                    break
                n = json.loads(req)["n"]
                conn.sendall(json.dumps({"sum": sum(range(n)), "n": n}).encode())


def lx_event_loop():
    import asyncio
    report_tid("event_loop")

    async def lx_tick(i):
        while True:
            await asyncio.sleep(0.002 + i * 0.0001)
            sum(range(200))

    async def lx_serve():
        await asyncio.gather(*(lx_tick(i) for i in range(TICKS)))

    asyncio.run(lx_serve())


def lx_work_sha():
    import hashlib
    report_tid("work_sha")
    data = b"x" * 65536
    while True:
        hashlib.sha256(data).digest()
        time.sleep(0.001)


def lx_work_ssl():
    import ssl
    report_tid("work_ssl")
    while True:
        ssl.RAND_bytes(16384)
        time.sleep(0.001)


def lx_work_zlib():
    import zlib
    report_tid("work_zlib")
    data = bytes(range(256)) * 256
    while True:
        zlib.compress(data, 9)
        time.sleep(0.001)


def lx_work_decimal():
    import decimal
    report_tid("work_decimal")
    decimal.getcontext().prec = 200
    while True:
        decimal.Decimal(2).sqrt() ** 3
        time.sleep(0.001)


def lx_work_json():
    import json
    report_tid("work_json")
    doc = {"k%d" % i: [i, str(i), {"v": i * 0.5}] for i in range(200)}
    while True:
        json.loads(json.dumps(doc))
        time.sleep(0.001)


def lx_work_sqlite():
    import sqlite3
    report_tid("work_sqlite")
    db = sqlite3.connect(":memory:")
    db.execute("create table t (a integer, b text)")
    db.executemany("insert into t values (?, ?)", ((i, str(i)) for i in range(2000)))
    while True:
        db.execute("select count(*), sum(a) from t where b like '%7%'").fetchone()
        time.sleep(0.001)


def lx_lock_wait(lock):
    report_tid("lock_wait")
    while True:
        with lock:
            sum(range(300))
        time.sleep(0.001)


def lx_cond_wait(cond):
    report_tid("cond_wait")
    while True:
        with cond:
            cond.wait(0.05)


def serve(path, cpusecs):
    parent = os.getppid()
    sys.stdin.readline()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(HANDLERS)
    conns = queue.Queue()
    lock = threading.Lock()
    cond = threading.Condition()
    kinds = [[(lx_accept, (listener, conns))], [(lx_event_loop, ())],
             [(lx_handle, (conns,))] * HANDLERS, [(lx_lock_wait, (lock,))] * LOCKERS,
             [(lx_cond_wait, (cond,))] * WAITERS] + \
        [[(globals()["lx_work_" + w], ())] * PER_WORKER for w in WORKERS]
    # Started a kind after the other, one thread of each at a time: every kind from the first.
    for i in range(max(map(len, kinds))):
        for kind in kinds:
            if i < len(kind):
                target, args = kind[i]
                threading.Thread(target=target, args=args, daemon=True).start()
    while time.process_time() < cpusecs and os.getppid() == parent:
        time.sleep(0.01)
        with cond:
            cond.notify_all()
    os.unlink(path)
    # Daemon threads still run: leave without waiting for them.
    os._exit(0)


def client(path, nconns):
    import selectors
    sel = selectors.DefaultSelector()

    served = [False]

    def connect():
        # Until the service listens; once it has, a refusal is its end.
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                break
            except OSError:
                s.close()
                if served[0]:
                    return False
                time.sleep(0.01)
        served[0] = True
        s.sendall(b'{"n": 500}')
        sel.register(s, selectors.EVENT_READ, [0])
        return True

    for _ in range(nconns):
        if not connect():
            return
    while True:
        for key, _ in sel.select():
            s, answers = key.fileobj, key.data
            try:
                got = s.recv(4096)
            except OSError:
                got = b""
            if not got:
                return
            answers[0] += 1
            if answers[0] % 200 == 0:
                sel.unregister(s)
                s.close()
                if not connect():
                    return
            else:
                s.sendall(b'{"n": 500}')


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("serve", "client"):
        sys.stderr.write("usage: pyservice.py serve PATH CPUSECS | client PATH CONNS\n")
        sys.exit(2)
    if sys.argv[1] == "serve":
        serve(sys.argv[2], float(sys.argv[3]))
    else:
        client(sys.argv[2], int(sys.argv[3]))
