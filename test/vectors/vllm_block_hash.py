#!/usr/bin/env python3
"""vLLM block hashes with the real Python cbor2, for kvsentinel's test vectors and parity test.

Mirrors vllm/v1/core/kv_cache_utils.py (hash_block_tokens, init_none_hash) and vllm/utils/hashing.py
(sha256_cbor) as read in the upstream source; it imports nothing of vLLM.

Reads cases as JSON on stdin, writes results as JSON on stdout:
  case:   {"name", "seed": "0" | null, "parent": HEX | null, "blocks": [{"tokens": [int], "extra": EXTRA | null}]}
  EXTRA:  a JSON array (a Python tuple); inside it strings, ints, arrays (tuples) and {"bytes": HEX} (bytes)
  result: {"name", "none_hash": HEX | null, "blocks": [{"cbor": HEX, "hash": HEX, "int": "DECIMAL"}]}
The root's parent is NONE_HASH = sha256_cbor(seed) unless "parent" gives the parent's bytes.

Committed vectors: /usr/bin/python3 test/vectors/vllm_block_hash.py < test/vectors/vllm-block-hash-cases.json \
  > test/vectors/vllm-block-hash.json   (Debian python3-cbor2)
"""
import hashlib
import json
import sys
from importlib.metadata import version

import cbor2


def sha256_cbor(value):
    return hashlib.sha256(cbor2.dumps(value, canonical=True)).digest()


def to_python(value):
    if isinstance(value, dict):
        return bytes.fromhex(value["bytes"])
    if isinstance(value, list):
        return tuple(to_python(v) for v in value)
    return value


def run(case):
    none_hash = sha256_cbor(case["seed"]) if case.get("seed") is not None else None
    parent = bytes.fromhex(case["parent"]) if case.get("parent") is not None else none_hash
    out = []
    for block in case["blocks"]:
        extra = block.get("extra")
        extra = None if extra is None else to_python(extra)
        key = (parent, tuple(block["tokens"]), extra)
        encoded = cbor2.dumps(key, canonical=True)
        digest = hashlib.sha256(encoded).digest()
        out.append({"cbor": encoded.hex(), "hash": digest.hex(), "int": str(int.from_bytes(digest, "big") & ((1 << 64) - 1))})
        parent = digest
    return {"name": case["name"], "none_hash": none_hash.hex() if none_hash is not None else None, "blocks": out}


def main():
    cases = json.load(sys.stdin)
    json.dump({"generator": "test/vectors/vllm_block_hash.py", "cbor2": version("cbor2"), "cases": [run(c) for c in cases]}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
