"""Memory of the router's block table in Python: one set of N distinct unsigned 64-bit ints (block hashes).

usage: set_memory.py N  -> one JSON line: retained bytes per block (sys.getsizeof of the set and every int, i.e. the
objects the set keeps alive) and RSS growth per block.
"""
import json
import random
import sys
import time


def rss_bytes():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE")


def main():
    n = int(sys.argv[1])
    rng = random.Random(n)
    before = rss_bytes()
    start = time.perf_counter()
    table = set()
    while len(table) < n:
        table.add(rng.getrandbits(64))
    build = time.perf_counter() - start
    after = rss_bytes()
    retained = sys.getsizeof(table) + sum(sys.getsizeof(h) for h in table)
    print(json.dumps({
        "blocks": n,
        "retainedBytesPerBlock": retained / n,
        "rssBytesPerBlock": (after - before) / n,
        "buildSeconds": build,
    }))


if __name__ == "__main__":
    main()
