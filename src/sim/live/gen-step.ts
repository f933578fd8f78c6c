// The live orchestrator's GEN step, in-process: decode time on the model's clock, then the client's answer (JSON, or
// SSE with usage in the final chunk) with usage rewritten from the CTX response, as the disaggregated server does.
import type { ServerResponse } from 'node:http';
import type { GenConfig } from '../sim-config.js';
import { sendJsonText, sseData, startSse } from './http-kit.js';
import type { LiveScheduler } from './live-scheduler.js';
import type { OpenAiRequest } from './openai-request.js';
import { chunkBody, fillerText, responseBody, type ResponseHead } from './openai-response.js';

/** what the GEN step needs of the client's request */
export type GenRequest = Pick<OpenAiRequest, 'endpoint' | 'model' | 'maxTokens' | 'stream'>;

export async function generate(
  scheduler: LiveScheduler,
  gen: GenConfig,
  request: GenRequest,
  res: ServerResponse,
  requestId: string,
  ctx: { promptTokens: number; cachedTokens: number },
): Promise<void> {
  const outputTokens = request.maxTokens ?? 16;
  const head: ResponseHead = {
    endpoint: request.endpoint,
    id: requestId,
    created: Math.floor(Date.now() / 1000),
    model: request.model,
  };
  const usage = { promptTokens: ctx.promptTokens, completionTokens: outputTokens, cachedTokens: ctx.cachedTokens };
  const genMs = gen.overheadMs + outputTokens * gen.msPerToken;
  if (request.stream) {
    startSse(res);
    sseData(res, chunkBody(head, fillerText(1), null, null));
  }
  await new Promise<void>((resolve) => {
    scheduler.at(scheduler.now() + genMs, resolve);
    if (scheduler.stopped) resolve();
  });
  if (!request.stream) {
    sendJsonText(res, 200, responseBody(head, fillerText(outputTokens), usage, null));
    return;
  }
  sseData(res, chunkBody(head, fillerText(outputTokens - 1), 'length', usage));
  sseData(res, '[DONE]');
  res.end();
}
