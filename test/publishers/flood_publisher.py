"""A vLLM-format KV-event publisher that floods a socket, written from vLLM's source
(vllm/distributed/kv_events.py: ZmqEventPublisher sends [topic, seq as 8-byte big-endian, msgpack payload] from a PUB
whose high-water mark defaults to 100,000; the payload is an EventBatch msgspec Struct without array_like, so a map
{ts, events, data_parallel_rank}; each event a tagged map: BlockStored {type, block_hashes, parent_block_hash,
token_ids, block_size, lora_id, medium, lora_name} (the fields without a default are always present, so lora_id and
lora_name are nil when unset), BlockRemoved {type, block_hashes, medium}). Hashes are what vLLM publishes by default
(VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1): the low 64 bits of a sha256 digest as an unsigned integer, so most need
msgpack's uint64 form. Each batch is the shape a fleet emits per engine step: a 4-block store and the removal of the
4 blocks stored `lag` batches earlier, so the engine holds `lag * 4` blocks at any time.

argv[1]: JSON {"batches": N, "lag": L, "block_size": B, "hwm": H, "rate": R}. Prints {"endpoint": ...}, waits for a
line "go" on stdin, sends the N batches (at R batches/s when R is given, else as fast as it can), prints
{"sent": N, "seconds": S, "resident": blocks} and waits for "quit".
"""

import json
import random
import sys
import time

import msgpack
import zmq

U64 = (1 << 64) - 1


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
    print(json.dumps({"endpoint": "tcp://127.0.0.1:%d" % port}), flush=True)
    while sys.stdin.readline().strip() != "go":
        pass
    # token ids of a real vocabulary (most need msgpack's uint32 form); every batch's first two differ, so its blocks
    # are new content (the same tokens under the same parent would be the same hash in vLLM)
    rng = random.Random(7)
    prompts = [[rng.randrange(150_000) for _ in range(block_size * 4 - 2)] for _ in range(16)]
    started = time.perf_counter()
    for seq in range(batches):
        if rate and seq % 64 == 0:
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
        pub.send_multipart((b"", seq.to_bytes(8, "big"), payload))
    seconds = time.perf_counter() - started
    print(json.dumps({"sent": batches, "seconds": seconds, "resident": min(batches, lag) * 4}), flush=True)
    while sys.stdin.readline().strip() not in ("quit", ""):
        pass


if __name__ == "__main__":
    main()
