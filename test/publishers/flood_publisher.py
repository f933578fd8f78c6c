"""A vLLM-format KV-event publisher that sends as fast as it can, written from vLLM's source
(vllm/distributed/kv_events.py: ZmqEventPublisher sends [topic, seq as 8-byte big-endian, msgpack payload]; the payload
is an EventBatch struct encoded as a map {ts, events, data_parallel_rank}; each event a tagged map: BlockStored
{type, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium}, BlockRemoved {type, block_hashes,
medium}). Each batch is the shape a fleet emits per engine step: a 4-block store and the removal of the 4 blocks
stored `lag` batches earlier, so the engine holds `lag * 4` blocks at any time.

argv[1]: JSON {"batches": N, "lag": L, "block_size": B, "hwm": H}. Prints {"endpoint": ...}, waits for a line "go"
on stdin, sends the N batches, prints {"sent": N, "seconds": S, "resident": [hashes...]} and waits for "quit".
"""

import json
import sys
import time

import msgpack
import zmq


def main():
    args = json.loads(sys.argv[1])
    batches, lag, block_size = args["batches"], args["lag"], args.get("block_size", 16)
    ctx = zmq.Context.instance()
    pub = ctx.socket(zmq.PUB)
    pub.set_hwm(args.get("hwm", 1000))
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    print(json.dumps({"endpoint": "tcp://127.0.0.1:%d" % port}), flush=True)
    while sys.stdin.readline().strip() != "go":
        pass
    tokens = list(range(block_size * 4))
    started = time.perf_counter()
    for seq in range(batches):
        stored = [seq * 4 + i + 1 for i in range(4)]
        events = [
            {
                "type": "BlockStored",
                "block_hashes": stored,
                "parent_block_hash": None,
                "token_ids": tokens,
                "block_size": block_size,
                "lora_id": None,
                "medium": "GPU",
            }
        ]
        if seq >= lag:
            old = seq - lag
            events.append({"type": "BlockRemoved", "block_hashes": [old * 4 + i + 1 for i in range(4)], "medium": "GPU"})
        payload = msgpack.packb({"ts": time.time(), "events": events, "data_parallel_rank": 0})
        pub.send_multipart((b"", seq.to_bytes(8, "big"), payload))
    seconds = time.perf_counter() - started
    first = max(0, batches - lag)
    resident = [s * 4 + i + 1 for s in range(first, batches) for i in range(4)]
    print(json.dumps({"sent": batches, "seconds": seconds, "resident": len(resident)}), flush=True)
    while sys.stdin.readline().strip() not in ("quit", ""):
        pass


if __name__ == "__main__":
    main()
