// Every WireIssue code the input parsers emit, with what it means: stable values for metric labels and docs.
// WireIssue.code is typed by this catalog, so a code missing here does not compile.
// 'syntax' codes break the document (later items are not read); the others skip one item or field.

export const WIRE_ISSUE_CODES = {
  // JSON syntax (the document stops here; items completed before are kept)
  'empty-input': 'the body is empty or whitespace',
  'truncated-json': 'the input ends inside a value (offset = input length)',
  'invalid-json': 'an unexpected character where JSON requires something else',
  'invalid-number': 'a number not in JSON grammar (leading zero, missing digits)',
  'control-character': 'a raw control character inside a string',
  'invalid-escape': 'a backslash escape JSON does not define',
  'invalid-unicode':
    'text that is not UTF-8: an escaped unpaired surrogate (ends the document), or bytes that are not UTF-8 (the item is skipped)',
  'too-deep': 'nesting deeper than 256 levels',
  'trailing-garbage': 'non-whitespace after the top-level value',
  // structure and values (the item, or the field, is skipped)
  'not-an-array': 'the top level is not the expected array',
  'missing-field': 'a field every TensorRT-LLM build writes is absent (path names the field)',
  'wrong-type': 'a value of the wrong JSON type',
  'wrong-type-tag': 'a nested object whose "type" tag is not the expected one',
  'duplicate-key': 'a key repeated in one object',
  'unknown-event-type': 'data.type is not created, stored, removed, updated or all_cleared',
  'unknown-hash-algo': 'hash_algo / kv_cache_hash_algo is not a known algorithm',
  'hash-float': 'a hash written with a fraction (1.5, 1.0): the producer lost precision',
  'hash-exponent': 'a hash written in exponent form (1e19): the producer lost precision',
  'hash-negative': 'a negative hash (wire hashes are unsigned 64-bit)',
  'hash-out-of-range': 'a hash above 2^64-1',
  'invalid-hash-string': 'a string hash that is not 64 hex digits',
  'token-id-out-of-range': 'a token id (or extra id) outside 0..2^32-1',
  'not-an-integer': 'a count written with a fraction or exponent',
  'number-out-of-range': 'a count that is negative or above 2^53-1',
  'issues-suppressed': 'more bad items than the issue limit: the count of the unlisted ones',
  internal: 'a bug in the parser, caught: the input position is reported when known',
  // the relay's array splitter (items are delimited, not parsed: it never edits the stream)
  'trailing-comma': "a comma before the array's closing ']'",
  'expected-comma': "an array item not followed by ',' or ']'",
  'empty-item': 'an array item with nothing in it (`[,1]`)',
  // token-id lists (flags, request-log fields)
  'empty-token': 'an empty token id between separators',
  'not-a-token-id': 'a token id that is not an unsigned integer',
  // request-log and perf-metrics lines
  'bad-token-ids': 'prompt_token_ids that are not integers 0..2^32-1',
  'no-server': 'a perf-metrics line without ctx_server',
  // ZMQ event stream (msgpack)
  'stream-bad-frames': 'a ZMQ message without the expected frames ([topic, seq, payload])',
  'stream-bad-seq': 'a sequence frame that is not 8 bytes (u64 big-endian) or 24 (with a publisher id)',
  'stream-not-msgpack': 'a payload that is not msgpack',
  'stream-bad-batch': 'a msgpack payload that is not an event batch',
  'stream-block-size-inconsistent': 'a BlockStored whose block_size does not match its token_ids',
  'stream-unnamed-publisher': 'a message on a bound socket whose topic names no server (kv@POD@MODEL or an id)',
  'stream-too-many-publishers': 'a message on a bound socket from a server past the bound of publishers it follows',
  // recorded bundles (JSONL)
  'bad-json': 'a bundle line that is not JSON',
  'bad-record': 'a bundle line that is JSON but not a recorded observation (path names the field)',
} as const;

export type WireIssueCode = keyof typeof WIRE_ISSUE_CODES;
