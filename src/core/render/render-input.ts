// What the router tokenizes itself (TensorRT-LLM `BlockHashMixin._tokenize`, router.py / router_utils.py): a chat
// request without `prompt_token_ids` is rendered with the model's chat template and encoded without special tokens;
// a text prompt goes through `tokenizer(prompt)["input_ids"]` (special tokens added). Requests that carry ids are
// used as sent, so they need no render. This reads a decoded request body into that choice; pure, never throws.

export type RenderInput =
  | {
      readonly kind: 'chat';
      /** the messages exactly as sent: the router hands them to the template as dicts, unconverted */
      readonly messages: readonly unknown[];
      /** tool definitions as sent, null when the request has none */
      readonly tools: readonly unknown[] | null;
      /** ChatCompletionRequest.add_generation_prompt, default true */
      readonly addGenerationPrompt: boolean;
      /** spread into the template's variables (enable_thinking, …) */
      readonly chatTemplateKwargs: Readonly<Record<string, unknown>>;
    }
  | {
      readonly kind: 'text';
      /** the first prompt (a decision is about the first prompt of a request) */
      readonly prompt: string;
    };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A tool as the router hands it to the template: `tool.model_dump()` of TensorRT-LLM's ChatCompletionToolsParam —
 * `type` then `function` with FunctionDefinition's fields in declaration order (name, description, parameters, strict;
 * unset ones as null), whatever order or subset the client sent. Anything that is not such a tool passes unchanged.
 */
export function routerTool(tool: unknown): unknown {
  if (!isRecord(tool) || !isRecord(tool['function'])) return tool;
  const { name, description, parameters, strict, ...functionExtra } = tool['function'];
  const { type, function: _fn, ...toolExtra } = tool;
  return {
    type: type ?? 'function',
    function: {
      name,
      description: description ?? null,
      parameters: parameters ?? null,
      strict: strict ?? null,
      ...functionExtra,
    },
    ...toolExtra,
  };
}

function hasIds(v: unknown): boolean {
  return (
    Array.isArray(v) && v.length > 0 && (typeof v[0] === 'number' || typeof v[0] === 'bigint' || Array.isArray(v[0]))
  );
}

/**
 * The render the router would do for this body, or null when it does none (ids sent, nothing to render) or the body
 * is not a completion request. `endpoint` tells a chat body from a text one when both members are absent.
 */
export function renderInputOf(body: unknown): RenderInput | null {
  if (!isRecord(body)) return null;
  if (Array.isArray(body['messages'])) {
    if (hasIds(body['prompt_token_ids'])) return null;
    const kwargs = body['chat_template_kwargs'];
    const tools = body['tools'];
    const agp = body['add_generation_prompt'];
    return {
      kind: 'chat',
      messages: body['messages'],
      tools: Array.isArray(tools) ? tools.map(routerTool) : null,
      addGenerationPrompt: typeof agp === 'boolean' ? agp : true,
      chatTemplateKwargs: isRecord(kwargs) ? kwargs : {},
    };
  }
  const prompt = body['prompt'];
  if (typeof prompt === 'string') return { kind: 'text', prompt };
  if (Array.isArray(prompt) && typeof prompt[0] === 'string') return { kind: 'text', prompt: prompt[0] };
  return null;
}
