"""A vLLM-format KV-event publisher that floods a socket, written from vLLM's source
(vllm/distributed/kv_events.py: ZmqEventPublisher sends [topic, seq as 8-byte big-endian, msgpack payload] from a PUB
whose high-water mark defaults to 100,000; the payload is an EventBatch msgspec Struct without array_like, so a map
{ts, events, data_parallel_rank}; each event a tagged map: BlockStored {type, block_hashes, parent_block_hash,
token_ids, block_size, lora_id, medium, lora_name} (the fields without a default are always present, so lora_id and
lora_name are nil when unset), BlockRemoved {type, block_hashes, medium}). Hashes are what vLLM publishes by default
(VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1): the low 64 bits of a sha256 digest as an unsigned integer, so most need
msgpack's uint64 form. Each batch is the shape a fleet emits per engine step: a 4-block store and the removal of the
4 blocks stored `lag` batches earlier, so the engine holds `lag * 4` blocks at any time.

With "replay": true it also binds vLLM's replay ROUTER (created with the defaults, as vLLM's is: high-water mark
1,000) and keeps the last `buffer_steps` batches (vLLM's default 10,000). As in vLLM's publisher thread, the one thread
that sends also answers replay: before each batch it polls the ROUTER without waiting, and a request ["", start_seq]
is answered in one tight loop with ["", seq, payload] for every buffered batch from start_seq, then ["", -1 as signed
8 bytes, ""]; once the flood is sent it goes on answering until "quit".

argv[1]: JSON {"batches": N, "lag": L, "block_size": B, "hwm": H, "rate": R, "replay": bool, "buffer_steps": S,
"tail": T, "tail_rate": TR, "skip_every": K}. Prints {"endpoint": ..., "replay": ... or null}, waits for a line "go"
on stdin, sends the N batches (at R batches/s when R is given, else as fast as it can), then T more at TR batches/s
(default 200: the load has fallen, and these show a subscriber what it missed at the end). With K, every K-th seq is
never sent nor buffered (vLLM's publisher thread when a send fails: the seq was taken, the batch is gone), a loss
upstream of any subscriber. Prints {"sent": N + T, "seconds": S, "resident": blocks, "replay_requests": Q,
"late_requests": L} (L: requests from a seq the buffer no longer held) and waits for "quit".
"""

import collections
import json
import random
import sys
import time

import msgpack
import zmq

U64 = (1 << 64) - 1
END_SEQ = (-1).to_bytes(8, "big", signed=True)


def block_hash(n):
    """A well-spread 64-bit value per block number (a multiplicative hash), as vLLM's digests are."""
    return ((n + 1) * 0x9E3779B97F4A7C15) & U64


def main():
    args = json.loads(sys.argv[1])
    batches, lag, block_size = args["batches"], args["lag"], args.get("block_size", 16)
    rate = args.get("rate")
    ctx = zmq.Context.instance()
    pub = ctx.socket(zmq.PUB)
    pub.set_hwm(args.get("hwm", 100_000))
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    router = None
    replay_endpoint = None
    if args.get("replay"):
        router = ctx.socket(zmq.ROUTER)
        replay_endpoint = "tcp://127.0.0.1:%d" % router.bind_to_random_port("tcp://127.0.0.1")
    buffer = collections.deque(maxlen=args.get("buffer_steps", 10_000))
    replay_requests = [0]
    # requests for seqs the buffer had already let go (asked too late: what they miss is lost however the
    # subscriber reads the answer)
    late_requests = [0]

    def service_replay():
        frame = router.recv_multipart()
        if len(frame) != 3:
            return
        client_id, _, start_seq_bytes = frame
        replay_requests[0] += 1
        start_seq = int.from_bytes(start_seq_bytes, "big")
        if buffer and start_seq < buffer[0][0]:
            late_requests[0] += 1
        for seq, buf in buffer:
            if seq >= start_seq:
                router.send_multipart((client_id, b"", seq.to_bytes(8, "big"), buf))
        router.send_multipart((client_id, b"", END_SEQ, b""))

    print(json.dumps({"endpoint": "tcp://127.0.0.1:%d" % port, "replay": replay_endpoint}), flush=True)
    while sys.stdin.readline().strip() != "go":
        pass
    # token ids of a real vocabulary (most need msgpack's uint32 form); every batch's first two differ, so its blocks
    # are new content (the same tokens under the same parent would be the same hash in vLLM)
    rng = random.Random(7)
    prompts = [[rng.randrange(150_000) for _ in range(block_size * 4 - 2)] for _ in range(16)]
    tail, tail_rate = args.get("tail", 0), args.get("tail_rate", 200)
    skip_every = args.get("skip_every")
    started = time.perf_counter()
    for seq in range(batches + tail):
        if router is not None and router.poll(0):
            service_replay()
        if seq >= batches:
            if seq == batches:
                tail_started = time.perf_counter()
            ahead = tail_started + (seq - batches) / tail_rate - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        elif rate and seq % 64 == 0:
            ahead = started + seq / rate - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        events = [
            {
                "type": "BlockStored",
                "block_hashes": [block_hash(seq * 4 + i) for i in range(4)],
                "parent_block_hash": None,
                "token_ids": [seq % 150_000, seq // 150_000] + prompts[seq % 16],
                "block_size": block_size,
                "lora_id": None,
                "medium": "GPU",
                "lora_name": None,
            }
        ]
        if seq >= lag:
            old = seq - lag
            events.append(
                {"type": "BlockRemoved", "block_hashes": [block_hash(old * 4 + i) for i in range(4)], "medium": "GPU"}
            )
        payload = msgpack.packb({"ts": time.time(), "events": events, "data_parallel_rank": 0})
        if skip_every and seq % skip_every == skip_every - 1:
            continue
        pub.send_multipart((b"", seq.to_bytes(8, "big"), payload))
        if router is not None:
            buffer.append((seq, payload))
    seconds = time.perf_counter() - started
    resident = min(batches + tail, lag) * 4
    done = {
        "sent": batches + tail,
        "seconds": seconds,
        "resident": resident,
        "replay_requests": replay_requests[0],
        "late_requests": late_requests[0],
    }
    print(json.dumps(done), flush=True)
    poller = zmq.Poller()
    poller.register(sys.stdin.fileno(), zmq.POLLIN)
    if router is not None:
        poller.register(router, zmq.POLLIN)
    while True:
        ready = dict(poller.poll())
        if router is not None and router in ready:
            service_replay()
        if sys.stdin.fileno() in ready and sys.stdin.readline().strip() in ("quit", ""):
            return


if __name__ == "__main__":
    main()
