#!/usr/bin/python3
"""A vLLM KV-event publisher for kvsentinel's lifecycle tests, written from vLLM's own source, not kvsentinel's.

It follows vllm/distributed/kv_events.py (ZmqEventPublisher) of the builds with and without `snapshot_endpoint`:
- the PUB socket binds when the endpoint has a wildcard ("*", "::") or is ipc/inproc, else it connects
  (`_is_bind_endpoint`); a ROUTER replay socket always binds;
- live messages are [topic, seq (8 bytes big-endian), payload]; the seq counts from 0 per process (`count()`), and
  a failed send still used its number;
- payloads are msgpack: EventBatch is array_like ([ts, events, data_parallel_rank]); events are tagged maps
  ({"type": "BlockStored", ...}) with omit_defaults (fields whose default is None are left out, fields without
  one are always present);
- the replay ROUTER answers [id, "", start_seq] with [id, "", topic, seq, payload] per buffered batch with
  seq >= start (a deque of `buffer_steps`), then [id, "", "", -1 (8 bytes signed), ""];
- with snapshots on, the publisher id is 16 random bytes per life (uuid4().bytes) and an idle publisher sends an
  empty batch every second (HEARTBEAT_INTERVAL_S). `--snapshot frame` is the first build: the id follows the seq in
  a 24-byte live sequence frame (replay frames stay 8 bytes). `--snapshot batch` is the current build: frames stay 8
  bytes and the id is the batch's last element (IdentifiedKVEventBatch: [ts, events, dp_rank, id]).

Commands, one JSON object per stdin line; each is answered with one JSON line on stdout:
  {"op": "store", "hashes": [hex], "parent": hex|null, "tokens": [int], "block_size": n, "medium": "GPU"}
  {"op": "remove", "hashes": [hex], "medium": "GPU"}
  {"op": "clear"}                 AllBlocksCleared (a prefix-cache reset)
  {"op": "empty"}                 an empty batch (what the engine publishes for a step without events)
  {"op": "lose", "n": k}          k seq numbers used by sends that failed (vLLM's except branch)
  {"op": "flush"}                 answers once every queued batch was sent, with the last seq
  {"op": "quit"}
The first line written is {"ready": true, "endpoint": ..., "replay": ..., "publisher_id": hex|null}.
"""

import argparse
import hashlib
import json
import queue
import sys
import threading
import time
import uuid
from collections import deque
from itertools import count

import msgpack
import zmq

END_SEQ = (-1).to_bytes(8, "big", signed=True)
HEARTBEAT_INTERVAL_S = 1.0


def is_bind_endpoint(endpoint):
    return "*" in endpoint or "::" in endpoint or endpoint.startswith(("ipc://", "inproc://"))


def offset_endpoint_port(endpoint, dp_rank):
    """vLLM's offset_endpoint_port: a tcp port (bound or connected) moves by the data-parallel rank."""
    if not endpoint or dp_rank == 0:
        return endpoint
    if "inproc" in endpoint:
        return f"{endpoint}_dp{dp_rank}"
    base, port = endpoint.rsplit(":", 1)
    return endpoint if int(port) == 0 else f"{base}:{int(port) + dp_rank}"


def resolved(sock, endpoint):
    """The address a test can connect to: tcp://*:0 becomes the port the OS chose."""
    last = sock.getsockopt_string(zmq.LAST_ENDPOINT)
    return last.replace("0.0.0.0", "127.0.0.1") if last else endpoint


def block_stored(cmd):
    event = {
        "type": "BlockStored",
        "block_hashes": [bytes.fromhex(h) for h in cmd["hashes"]],
        "parent_block_hash": bytes.fromhex(cmd["parent"]) if cmd.get("parent") else None,
        "token_ids": cmd["tokens"],
        "block_size": cmd["block_size"],
        "lora_id": None,
        "medium": cmd.get("medium", "GPU"),
        "lora_name": None,
    }
    return event


def block_removed(cmd):
    return {
        "type": "BlockRemoved",
        "block_hashes": [bytes.fromhex(h) for h in cmd["hashes"]],
        "medium": cmd.get("medium", "GPU"),
    }


class Publisher:
    def __init__(self, args):
        self.ctx = zmq.Context.instance()
        self.pub = self.ctx.socket(zmq.PUB)
        self.pub.set_hwm(100_000)
        endpoint = offset_endpoint_port(args.endpoint, args.dp_rank)
        if is_bind_endpoint(endpoint):
            self.pub.bind(endpoint)
            self.endpoint = resolved(self.pub, endpoint)
        else:
            self.pub.connect(endpoint)
            self.endpoint = endpoint
        self.replay = None
        self.replay_endpoint = None
        if args.replay_endpoint:
            self.replay = self.ctx.socket(zmq.ROUTER)
            replay = offset_endpoint_port(args.replay_endpoint, args.dp_rank)
            self.replay.bind(replay)
            self.replay_endpoint = resolved(self.replay, replay)
        self.snapshot = args.snapshot
        self.publisher_id = uuid.uuid4().bytes if args.snapshot != "none" else None
        self.topic = args.topic.encode("utf-8")
        self.dp_rank = args.dp_rank
        self.buffer = deque(maxlen=args.buffer_steps)
        self.seq_gen = count()
        self.queue = queue.Queue()
        self.last_seq = -1
        self.running = True
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def payload(self, events):
        batch = [time.time(), events, self.dp_rank]
        if self.snapshot == "batch":
            batch.append(self.publisher_id)
        return msgpack.packb(batch, use_bin_type=True)

    def seq_frame(self, seq):
        frame = seq.to_bytes(8, "big")
        return frame + self.publisher_id if self.snapshot == "frame" else frame

    def loop(self):
        last_send = time.monotonic()
        while self.running:
            if self.replay is not None and self.replay.poll(0):
                self.service_replay()
            try:
                item = self.queue.get(timeout=0.1)
            except queue.Empty:
                if self.publisher_id is None or time.monotonic() - last_send < HEARTBEAT_INTERVAL_S:
                    continue
                item = ("events", [])
            kind, value = item
            if kind == "flush":
                value.set()
                continue
            seq = next(self.seq_gen)
            self.last_seq = seq
            if kind == "lose":
                continue  # the number is used, nothing is sent or buffered
            payload = self.payload(value)
            self.pub.send_multipart((self.topic, self.seq_frame(seq), payload))
            self.buffer.append((seq, payload))
            last_send = time.monotonic()

    def service_replay(self):
        frame = self.replay.recv_multipart()
        if len(frame) != 3:
            return
        client_id, _, start = frame
        start_seq = int.from_bytes(start, "big")
        for seq, buf in list(self.buffer):
            if seq >= start_seq:
                self.replay.send_multipart((client_id, b"", self.topic, seq.to_bytes(8, "big"), buf))
        self.replay.send_multipart((client_id, b"", b"", END_SEQ, b""))

    def flush(self):
        done = threading.Event()
        self.queue.put(("flush", done))
        done.wait(10)
        return self.last_seq


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", default="tcp://*:0")
    parser.add_argument("--replay-endpoint", default=None)
    parser.add_argument("--buffer-steps", type=int, default=10_000)
    parser.add_argument("--topic", default="")
    parser.add_argument("--dp-rank", type=int, default=0)
    parser.add_argument("--snapshot", choices=("none", "frame", "batch"), default="none")
    # batches published at once after binding, before any command: a restarted engine's first steps, sent before
    # a subscriber's reconnection reaches the new socket (each stores one block chained to the previous one)
    parser.add_argument("--prelude", type=int, default=0)
    parser.add_argument("--prelude-seed", type=int, default=0)
    args = parser.parse_args()
    pub = Publisher(args)
    parent = None
    for i in range(args.prelude):
        digest = hashlib.sha256(f"{args.prelude_seed}-{i}".encode()).hexdigest()
        tokens = [(args.prelude_seed * 1000 + i * 4 + j) % 50_000 for j in range(4)]
        pub.queue.put(("events", [block_stored(
            {"hashes": [digest], "parent": parent, "tokens": tokens, "block_size": 4})]))
        parent = digest
    if args.prelude:
        pub.flush()

    def say(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    say({
        "ready": True,
        "endpoint": pub.endpoint,
        "replay": pub.replay_endpoint,
        "publisher_id": pub.publisher_id.hex() if pub.publisher_id else None,
    })
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "store":
            pub.queue.put(("events", [block_stored(cmd)]))
        elif op == "remove":
            pub.queue.put(("events", [block_removed(cmd)]))
        elif op == "clear":
            pub.queue.put(("events", [{"type": "AllBlocksCleared"}]))
        elif op == "empty":
            pub.queue.put(("events", []))
        elif op == "lose":
            for _ in range(cmd["n"]):
                pub.queue.put(("lose", None))
        elif op == "flush":
            pass
        elif op == "quit":
            break
        say({"ok": True, "op": op, "seq": pub.flush()})
    pub.running = False
    pub.thread.join(2)
    pub.pub.close(linger=0)
    if pub.replay is not None:
        pub.replay.close(linger=0)


if __name__ == "__main__":
    main()
