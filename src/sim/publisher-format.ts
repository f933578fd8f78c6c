// The wire formats the simulator's workers can publish their KV events in over ZMQ (live driver only):
// live/zmq-kv-publisher.ts says what each is. 'none' keeps events on the pull path only.
export const PUBLISHER_FORMATS = ['trtllm', 'vllm', 'vllm-array', 'sglang'] as const;
export type PublisherFormat = (typeof PUBLISHER_FORMATS)[number];
export type KvEventsPublisher = 'none' | PublisherFormat;
