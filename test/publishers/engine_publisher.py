#!/usr/bin/python3
"""An independent KV-event publisher for kvsentinel's tests, written from the engines' source (it imports nothing of
them, nor of kvsentinel):

- vLLM: vllm/distributed/kv_events.py (ZmqEventPublisher: PUB [topic, seq u64 BE, payload], replay ROUTER answering
  ["", start_seq] with ["", seq, payload]... then ["", -1 as signed 8 bytes, ""]; EventBatch/KVCacheEvent are msgspec
  Structs with tag=True, omit_defaults=True and no array_like: a map batch {ts, events, data_parallel_rank} of map
  events {"type": "BlockStored", ...}), vllm/v1/core/block_pool.py (one BlockStored per run of newly cached GPU
  blocks, medium "GPU", lora_name, extra_keys per block; one BlockRemoved per evicted GPU copy; no deduplication:
  equal blocks cached twice are two copies), the offloading connector's take_events (tokenless CPU copies:
  token_ids [], block_size 0, parent None, medium "CPU") and vllm/v1/core/kv_cache_utils.py (hash_block_tokens:
  the default `sha256` is sha256(pickle.dumps((parent, tuple(tokens), extra_keys), HIGHEST_PROTOCOL)); extra_keys =
  (lora name, mm ids, cache_salt on the first block, ...) or None; bytes hashes unless int hashes are asked for).
- SGLang: python/sglang/srt/mem_cache/events.py (one BlockStored per page with medium, cache_salt, session_id,
  lora_name; EAGLE bigram pages publish token ids as [token, next] pairs; hashes int64 from sha256 hex, namespaced by
  the salt), disaggregation/kv_events.py ([ts, events] batches).

It also keeps the engine's truth the way vLLM's own subscriber contract counts it (docs/features/kv_events.md):
residency per (medium, hash) with duplicate references; vLLM's AllBlocksCleared clears the GPU pool only, SGLang's
reset clears everything.

Protocol: prints {"endpoint", "replay"} once bound, then reads one JSON command per stdin line and answers one JSON
line per command. Commands: store, offload, remove, clear, empty, batch (several events in one batch), truth, quit.
"""

import collections
import hashlib
import json
import os
import pickle
import sys
import threading
import time

import msgpack
import zmq

END_SEQ = (-1).to_bytes(8, "big", signed=True)


class Engine:
    def __init__(self, engine, int_hashes, block_size, seed):
        self.engine = engine
        self.int_hashes = int_hashes
        self.block_size = block_size
        # vLLM's NONE_HASH: hash_fn(PYTHONHASHSEED) when set, else os.urandom(32)
        self.none_hash = hashlib.sha256(pickle.dumps(seed, pickle.HIGHEST_PROTOCOL)).digest() if seed else os.urandom(32)
        self.refs = {}  # ref (hex) -> full hash (bytes for vLLM, int for SGLang)
        self.residency = collections.Counter()  # (medium, wire hash) -> copies

    # ---- hashes -------------------------------------------------------------------------------------------------
    def vllm_hash(self, parent, tokens, extra):
        return hashlib.sha256(pickle.dumps((parent, tuple(tokens), extra), pickle.HIGHEST_PROTOCOL)).digest()

    def sglang_hash(self, parent_hex, tokens, salt, lora):
        h = hashlib.sha256()
        if parent_hex:
            h.update(bytes.fromhex(parent_hex))
        for t in tokens:
            h.update(int(t).to_bytes(4, "little", signed=False))
        if salt is not None or lora is not None:
            h.update(("%s|%s" % (salt, lora)).encode())
        return h.hexdigest()

    def wire(self, full):
        """What the engine puts on the wire for a hash."""
        if self.engine == "sglang":
            v = int(full[:16], 16)
            return v - (1 << 64) if v >= (1 << 63) else v  # hash_str_to_int64
        return int.from_bytes(full, "big") & ((1 << 64) - 1) if self.int_hashes else full

    def key(self, wire_hash):
        return wire_hash if isinstance(wire_hash, int) else wire_hash.hex()

    # ---- events -------------------------------------------------------------------------------------------------
    def store(self, cmd):
        blocks = cmd["blocks"]
        medium = cmd.get("medium", "GPU")
        salt = cmd.get("salt")
        lora = cmd.get("lora")
        parent_ref = cmd.get("parent")
        parent = self.refs[parent_ref] if parent_ref is not None else None
        hashes, refs, extra_list = [], [], []
        prev = parent
        for i, tokens in enumerate(blocks):
            if self.engine == "vllm":
                parts = []
                if lora is not None:
                    parts.append(lora)
                if salt is not None and i == 0 and parent is None:
                    parts.append(salt)
                extra = tuple(parts) if parts else None
                full = self.vllm_hash(prev if prev is not None else self.none_hash, tokens, extra)
                extra_list.append(list(extra) if extra is not None else None)
            else:
                full = self.sglang_hash(prev, tokens, salt, lora)
            ref = full.hex() if isinstance(full, bytes) else full
            self.refs[ref] = full
            refs.append(ref)
            w = self.wire(full)
            hashes.append(w)
            self.residency[(medium, self.key(w))] += 1
            prev = full
        flat = [t for b in blocks for t in b]
        parent_wire = self.wire(parent) if parent is not None else None
        if self.engine == "vllm":
            event = {
                "type": "BlockStored",
                "block_hashes": hashes,
                "parent_block_hash": parent_wire,
                "token_ids": flat,
                "block_size": self.block_size,
                "lora_id": 1 if lora is not None else None,
                "medium": medium,
                "lora_name": lora,
            }
            if any(e is not None for e in extra_list):
                event["extra_keys"] = extra_list
        else:
            page_tokens = flat
            if cmd.get("bigram"):
                # the radix key holds bigrams: position j is (raw[j], raw[j + 1]); the last needs one more token
                raw = flat + [cmd.get("next_token", 0)]
                page_tokens = [[raw[j], raw[j + 1]] for j in range(len(flat))]
            event = {
                "type": "BlockStored",
                "block_hashes": hashes,
                "parent_block_hash": parent_wire,
                "token_ids": page_tokens,
                "block_size": self.block_size,
                "lora_id": None,
                "medium": medium,
                "cache_salt": salt,
                "session_id": None,
                "lora_name": lora,
            }
        return event, {"refs": refs}

    def offload(self, cmd):
        medium = cmd.get("medium", "CPU")
        hashes = []
        for ref in cmd["refs"]:
            full = self.refs[ref]
            # the offloading connector publishes its offload keys as bytes, whatever the GPU hashes are
            w = full if self.engine == "vllm" else self.wire(full)
            hashes.append(w)
            self.residency[(medium, self.key(self.wire(full)))] += 1
        return {
            "type": "BlockStored",
            "block_hashes": hashes,
            "parent_block_hash": None,
            "token_ids": [],
            "block_size": 0,
            "lora_id": None,
            "medium": medium,
            "lora_name": None,
        }, {}

    def remove(self, cmd):
        medium = cmd.get("medium", "GPU")
        hashes = []
        for ref in cmd["refs"]:
            w = self.wire(self.refs[ref]) if ref in self.refs else int(ref)
            hashes.append(w)
            k = (medium, self.key(w))
            if self.residency[k] > 0:
                self.residency[k] -= 1
        return {"type": "BlockRemoved", "block_hashes": hashes, "medium": medium}, {}

    def clear(self, _cmd):
        for k in list(self.residency):
            if self.engine == "sglang" or k[0] == "GPU":
                del self.residency[k]
        return {"type": "AllBlocksCleared"}, {}

    def truth(self):
        live = {k: n for k, n in self.residency.items() if n > 0}
        per_medium = collections.Counter(m for (m, _h) in live)
        return {
            "blocks": len({h for (_m, h) in live}),
            "per_medium": dict(per_medium),
            "copies": sum(live.values()),
        }

    def batch(self, rank, events):
        if self.engine == "vllm":
            return msgpack.packb({"ts": time.time(), "events": events, "data_parallel_rank": rank})
        return msgpack.packb([time.time(), events])


def main():
    args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    engine = Engine(args.get("engine", "vllm"), args.get("int_hashes", False), args.get("block_size", 4), args.get("seed"))
    buffer_steps = args.get("buffer_steps", 10_000)
    topic = args.get("topic", "").encode()
    ctx = zmq.Context.instance()
    pub = ctx.socket(zmq.PUB)
    pub.set_hwm(100_000)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    router = ctx.socket(zmq.ROUTER)
    rport = router.bind_to_random_port("tcp://127.0.0.1")
    buf = collections.deque(maxlen=buffer_steps)
    lock = threading.Lock()
    seq = [0]

    def serve_replay():
        poller = zmq.Poller()
        poller.register(router, zmq.POLLIN)
        while True:
            if not poller.poll(100):
                continue
            frame = router.recv_multipart()
            if len(frame) != 3:
                continue
            client, _, start = frame
            start_seq = int.from_bytes(start, "big")
            with lock:
                items = [(s, p) for s, p in buf if s >= start_seq]
            for s, p in items:
                router.send_multipart((client, b"", s.to_bytes(8, "big"), p))
            router.send_multipart((client, b"", END_SEQ, b""))

    threading.Thread(target=serve_replay, daemon=True).start()
    print(json.dumps({"endpoint": "tcp://127.0.0.1:%d" % port, "replay": "tcp://127.0.0.1:%d" % rport}), flush=True)
    ops = {"store": engine.store, "offload": engine.offload, "remove": engine.remove, "clear": engine.clear}

    def send(events):
        with lock:
            s = seq[0]
            seq[0] += 1
            payload = engine.batch(args.get("rank", 0), events)
            pub.send_multipart((topic, s.to_bytes(8, "big"), payload))
            buf.append((s, payload))
        return s

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "quit":
            break
        if op == "truth":
            print(json.dumps(engine.truth()), flush=True)
            continue
        if op == "empty":
            print(json.dumps({"seq": send([])}), flush=True)
            continue
        items = cmd["ops"] if op == "batch" else [cmd]
        events, answers = [], []
        for item in items:
            event, answer = ops[item["op"]](item)
            events.append(event)
            answers.append(answer)
        s = send(events)
        out = answers[0] if op != "batch" else {"answers": answers}
        out["seq"] = s
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
