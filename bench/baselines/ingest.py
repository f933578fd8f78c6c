"""The router's own event ingest in plain Python, as TensorRT-LLM's KvCacheAwareRouter does it
(docs/trtllm-wire.md sections 1.4 and 2.1): json.loads of each /kv_cache_events response, then update_with_events into one
Python set per (server, hash_algo): `stored` adds every block hash, `removed` discards, other types are ignored.

usage: ingest.py --passes N --warmup W FILE...   -> one JSON line: bytes, events, per-pass wall and CPU seconds, set size
"""
import json
import sys
import time


class ServerState:
    def __init__(self):
        self.tables = {}
        self.hash_algo = "v1_block_key"

    def update_with_events(self, events):
        for item in events:
            data = item["data"] if "data" in item else item
            algo = item.get("hash_algo") or data.get("hash_algo") or "v1_block_key"
            table = self.tables.get(algo)
            if table is None:
                table = self.tables[algo] = set()
            kind = data["type"]
            if kind == "stored":
                for block in data["blocks"]:
                    table.add(block["block_hash"])
            elif kind == "removed":
                for h in data["block_hashes"]:
                    table.discard(h)
            elif kind == "created":
                self.hash_algo = algo


def main(argv):
    passes = int(argv[argv.index("--passes") + 1])
    warmup = int(argv[argv.index("--warmup") + 1])
    files = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or not argv[i - 1].startswith("--"))]
    buffers = []
    for f in files:
        with open(f, "rb") as fh:
            buffers.append(fh.read())
    total = sum(len(b) for b in buffers)
    seconds = []
    cpu_seconds = []
    events = 0
    state = None
    for p in range(warmup + passes):
        start = time.perf_counter()
        cpu = time.process_time()
        state = ServerState()
        events = 0
        for buf in buffers:
            batch = json.loads(buf)
            events += len(batch)
            state.update_with_events(batch)
        if p >= warmup:
            seconds.append(time.perf_counter() - start)
            cpu_seconds.append(time.process_time() - cpu)
    blocks = len(state.tables.get("v1_block_key", ())) if state else 0
    print(json.dumps({"bytes": total, "events": events, "seconds": seconds, "cpuSeconds": cpu_seconds, "replicaBlocks": blocks}))


if __name__ == "__main__":
    main(sys.argv[1:])
