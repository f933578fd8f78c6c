// The wire formats the simulator's workers can publish their KV events in over ZMQ (live driver only):
// live/zmq-kv-publisher.ts says what each is. 'none' keeps events on the pull path only.
export const PUBLISHER_FORMATS = ['trtllm', 'vllm', 'vllm-array', 'sglang'] as const;
export type PublisherFormat = (typeof PUBLISHER_FORMATS)[number];

/** What a vllm-format publisher puts in block_hashes: the simulator's own hashes, or vLLM's sha256_cbor (seed 0). */
export const VLLM_SIM_HASHES = ['sim', 'sha256_cbor', 'sha256_cbor_int'] as const;
export type VllmSimHashes = (typeof VLLM_SIM_HASHES)[number];
/** the PYTHONHASHSEED the simulated vLLM workers run with */
export const SIM_PYTHONHASHSEED = '0';
