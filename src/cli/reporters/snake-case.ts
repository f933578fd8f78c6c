// JSON printed by the CLI uses one naming style, snake_case (as the audit and TensorRT-LLM's own JSON do), whatever
// the TypeScript field names are.

const snake = (key: string): string => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeCaseKeys(v)]));
}
