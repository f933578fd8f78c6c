// Child task: the floor for an offline audit — stream a bundle's observations.jsonl and JSON.parse every line
// (lossy and without any joins), to show how much of the audit's time is just reading the recording.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface JsonlReadParams {
  readonly file: string;
}

export async function runJsonlRead(params: JsonlReadParams): Promise<{ lines: number; seconds: number }> {
  const start = performance.now();
  let lines = 0;
  const rl = createInterface({ input: createReadStream(params.file), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.length === 0) continue;
    JSON.parse(line);
    lines++;
  }
  return { lines, seconds: (performance.now() - start) / 1000 };
}
