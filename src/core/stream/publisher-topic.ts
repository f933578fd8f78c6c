// Which server a message names when publishers connect to one socket kvsentinel binds (llm-d's central mode, and
// vLLM/SGLang publishers whose endpoint has no wildcard). Their frames carry no sender, so the topic must: llm-d
// configures each pod's vLLM with `topic: "kv@<pod-id>@<model>"` and its indexer splits on '@'
// (engineadapter/common.go parseTopic: three parts → pod and model, else the whole topic is the pod). kvsentinel
// reads it the same way; the server id is the pod part, or the whole topic when it is not in that form.

export interface PublisherTopic {
  readonly server: string;
  /** the model the topic names (llm-d's form), null otherwise */
  readonly model: string | null;
}

/** ids as the rest of kvsentinel takes them, plus ':' (llm-d pod ids can be IP:port) */
const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** The server a topic names, or null when it names none (empty, or not an id). */
export function serverFromTopic(topic: string): PublisherTopic | null {
  const parts = topic.split('@');
  const [server, model] = parts.length === 3 ? [parts[1]!, parts[2]!] : [topic, null];
  return SERVER_ID.test(server) ? { server, model } : null;
}
