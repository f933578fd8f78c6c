// Fixed conversations for the render-parity tests: plain, multi-turn, tool calls and outputs, unicode and
// whitespace that byte-level pre-tokenizers split in particular ways.
export interface Conversation {
  readonly name: string;
  readonly messages: readonly Record<string, unknown>[];
  readonly tools?: readonly Record<string, unknown>[];
  readonly addGenerationPrompt?: boolean;
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name, e.g. Zürich' } },
      required: ['city'],
    },
  },
};

export const CONVERSATIONS: readonly Conversation[] = [
  { name: 'one user turn', messages: [{ role: 'user', content: 'hello world' }] },
  {
    name: 'system and multi-turn',
    messages: [
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'List the files.' },
      { role: 'assistant', content: 'README.md\nsrc/\ntest/' },
      { role: 'user', content: 'Open README.md' },
    ],
  },
  {
    name: 'tool calls and outputs',
    tools: [weatherTool],
    messages: [
      { role: 'user', content: 'Weather in Zürich and Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"temp": 3, "sky": "fog"}' },
      { role: 'tool', tool_call_id: 'c2', content: '{"temp": 7, "sky": "rain"}' },
      { role: 'assistant', content: 'Zürich 3 °C fog, Paris 7 °C rain.' },
      { role: 'user', content: 'Thanks!' },
    ],
  },
  {
    name: 'unicode and whitespace',
    messages: [
      { role: 'system', content: '  leading spaces, trailing spaces  \n\n\ttab, then CRLF\r\nend' },
      {
        role: 'user',
        content: '日本語のテキスト、中文文本, emoji 🚀🔥 and accents: naïve café — “quotes” 12345678901234',
      },
      { role: 'assistant', content: '```python\ndef f(x):\n    return x  ** 2   # comment\n```' },
      { role: 'user', content: 'a    b\n\n\n\nc' },
    ],
  },
  {
    name: 'no generation prompt',
    addGenerationPrompt: false,
    messages: [{ role: 'user', content: 'Summarise: the quick brown fox.' }],
  },
];

/**
 * A tool-aware template of the common shape (tools as JSON in the system turn, loop controls, whitespace control,
 * raise_exception), written for these tests: it checks the JavaScript engine on what the DeepSeek-V3 template does
 * not use.
 */
export const TOOLS_TEMPLATE = [
  '{%- if tools %}',
  '{{- bos_token }}<|system|>You may call tools:\n',
  '{%- for tool in tools %}',
  '{{- tool | tojson }}{% if not loop.last %}\n{% endif %}',
  '{%- endfor %}\n',
  '{%- else %}{{ bos_token }}{%- endif %}',
  '{%- for message in messages %}',
  "  {%- if message['role'] not in ['system', 'user', 'assistant', 'tool'] %}{{ raise_exception('bad role ' + message['role']) }}{% endif %}",
  "  {%- if message['role'] == 'tool' %}<|tool|>{{ message['content'] | trim }}",
  "  {%- elif message['content'] is none %}<|assistant|>",
  "    {%- for call in message['tool_calls'] %}{{ call['function']['name'] }}({{ call['function']['arguments'] }}){% if loop.index0 == 0 %};{% endif %}{% endfor %}",
  "  {%- else %}<|{{ message['role'] }}|>{{ message['content'] }}",
  '  {%- endif %}',
  '  {%- if loop.last and thinking is defined and thinking %}<think>{% endif %}',
  '{%- endfor %}',
  '{%- if add_generation_prompt %}<|assistant|>{% endif %}',
].join('\n');
