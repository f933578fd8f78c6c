import { describe, expect, it } from 'vitest';
import { serverFromTopic } from './publisher-topic.js';

describe('serverFromTopic', () => {
  it("reads llm-d's kv@<pod>@<model>, and any other id as the server itself", () => {
    expect(serverFromTopic('kv@10.0.0.5@Qwen/Qwen3-0.6B')).toEqual({ server: '10.0.0.5', model: 'Qwen/Qwen3-0.6B' });
    expect(serverFromTopic('kv@pod-a:8000@m')).toEqual({ server: 'pod-a:8000', model: 'm' });
    expect(serverFromTopic('worker-3')).toEqual({ server: 'worker-3', model: null });
  });

  it('names no server for an empty topic or one that is not an id', () => {
    expect(serverFromTopic('')).toBeNull();
    expect(serverFromTopic('kv@@m')).toBeNull();
    expect(serverFromTopic('has space')).toBeNull();
    expect(serverFromTopic('kv@a@b@c')).toBeNull(); // four parts: the whole topic, which is not an id
  });
});
