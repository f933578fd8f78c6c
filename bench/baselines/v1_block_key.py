"""v1_block_key in plain Python (docs/trtllm-wire.md section 1.2), the way TensorRT-LLM's router computes it.

Modes (stdout is machine-read by bench/sections/hashing.ts):
  check   stdin lines "SALT LORA PARENT TOKENS" (SALT/LORA '-' for none, TOKENS comma-separated or '-')
          -> one unsigned decimal hash per line
  bench   --tokens N --block B --seed S --reps R -> one JSON line with per-rep wall and CPU seconds and the chain checksum
"""
import json
import sys
import time

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
C32 = 0x045D9F3B
K1 = 0xBF58476D1CE4E5B9
K2 = 0x94D049BB133111EB
G = 0x9E3779B9


def mix32(v, seed):
    v &= M32
    v = (((v >> 16) ^ v) * C32) & M32
    v = (((v >> 16) ^ v) * C32) & M32
    v = (v >> 16) ^ v
    v = (v + G) & M32
    return seed ^ ((v + (seed << 6) + (seed >> 2)) & M64)


def mix64(v, seed):
    v &= M64
    v = ((v ^ (v >> 30)) * K1) & M64
    v = ((v ^ (v >> 27)) * K2) & M64
    v ^= v >> 31
    return seed ^ ((v + G + (seed << 6) + (seed >> 2)) & M64)


def hash_block(tokens, parent=0, salt_id=None, lora_id=None):
    seed = (len(tokens) ^ ((parent * K1) & M64)) & M64
    if parent == 0 and salt_id is not None:
        seed = mix64(salt_id, seed)
    for t in tokens:
        seed = mix32(t, seed)
    if lora_id is not None:
        seed = mix64(lora_id, seed)
    return seed


def lcg_tokens(count, seed):
    x = seed & M32
    out = [0] * count
    for i in range(count):
        x = (x * 1664525 + 1013904223) & M32
        out[i] = x >> 15
    return out


def check():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        salt, lora, parent, toks = line.split(" ")
        tokens = [] if toks == "-" else [int(t) for t in toks.split(",")]
        print(hash_block(tokens, int(parent), None if salt == "-" else int(salt), None if lora == "-" else int(lora)))


def bench(argv):
    opts = dict(zip(argv[0::2], argv[1::2]))
    count = int(opts["--tokens"])
    block = int(opts["--block"])
    reps = int(opts["--reps"])
    tokens = lcg_tokens(count, int(opts["--seed"]))
    seconds = []
    cpu_seconds = []
    xor = 0
    last = 0
    for _ in range(reps):
        start = time.perf_counter()
        cpu = time.process_time()
        parent = 0
        xor = 0
        for b in range(0, count, block):
            parent = hash_block(tokens[b : b + block], parent)
            xor ^= parent
        seconds.append(time.perf_counter() - start)
        cpu_seconds.append(time.process_time() - cpu)
        last = parent
    print(json.dumps({"tokens": count, "seconds": seconds, "cpuSeconds": cpu_seconds, "xor": str(xor), "last": str(last)}))


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check()
    elif sys.argv[1] == "bench":
        bench(sys.argv[2:])
    else:
        raise SystemExit("usage: v1_block_key.py check|bench ...")
