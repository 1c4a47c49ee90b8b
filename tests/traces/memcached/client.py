"""The load of tests/traces/record_memcached.sh: a memcached text-protocol
client (Python standard library only, runs natively) with a skewed key set
whose hot keys change half-way.

  python3 client.py PORT KEYS GETS

Phase 0 stores KEYS keys ("key:000000"...) with values of 100-3,000 bytes
(uniform). Phases 1 and 2 each make GETS gets whose keys follow Zipf(0.99)
popularity (rank r has weight 1/(r+1)^0.99) over one half of the keys:
phase 1 ranks the first half (stored first) in a shuffled order, phase 2
the second half in another. memcached fills each slab class's pages in
store order, so the hot items of phase 2 are on other slab pages.
Requests go in pipelined batches of 50 (one write, then all the replies),
which keeps the server's per-request system-call overhead low. Blocking
socket, no timeout: under Valgrind the server is ~100x slower, which a
client timeout (libmemcached's is 5 s) would turn into errors.
Deterministic: random.Random(1) (Mersenne Twister; random(), randint(),
shuffle() and choices(cum_weights=) draw the same numbers on every Python 3
since 3.6).
"""
import random
import socket
import sys

BATCH = 50


def read_replies(f, n, expect_value):
    """Reads n replies: STORED for a set, VALUE ... END for a get."""
    for _ in range(n):
        line = f.readline()
        if expect_value:
            if not line.startswith(b'VALUE '):
                raise SystemExit('unexpected reply %r' % line)
            size = int(line.split()[3])
            f.read(size + 2)
            if f.readline() != b'END\r\n':
                raise SystemExit('missing END')
        elif line != b'STORED\r\n':
            raise SystemExit('unexpected reply %r' % line)


def main():
    port, keys, gets = (int(a) for a in sys.argv[1:4])
    r = random.Random(1)
    sock = socket.create_connection(('127.0.0.1', port))
    f = sock.makefile('rb')
    names = [b'key:%06d' % i for i in range(keys)]
    # Phase 0: load.
    for start in range(0, keys, BATCH):
        batch = []
        for name in names[start:start + BATCH]:
            size = r.randint(100, 3000)
            batch.append(b'set %s 0 0 %d\r\n%s\r\n' % (name, size, b'v' * size))
        sock.sendall(b''.join(batch))
        read_replies(f, len(batch), False)
    sys.stderr.write('loaded %d keys\n' % keys)
    # Phases 1 and 2: Zipf(0.99) gets over the first, then the second half.
    for phase, half in ((1, names[:keys // 2]), (2, names[keys // 2:])):
        order = list(half)
        r.shuffle(order)
        cum = []
        total = 0.0
        for rank in range(len(order)):
            total += 1.0 / (rank + 1) ** 0.99
            cum.append(total)
        for start in range(0, gets, BATCH):
            n = min(BATCH, gets - start)
            picks = r.choices(order, cum_weights=cum, k=n)
            sock.sendall(b''.join(b'get %s\r\n' % k for k in picks))
            read_replies(f, n, True)
        sys.stderr.write('phase %d: %d gets\n' % (phase, gets))
    sock.sendall(b'quit\r\n')
    sock.close()


if __name__ == '__main__':
    main()
