// One item of a `/kv_cache_events` array: its fields in any order (wrapped `{"event_id",…,"data":{…}}` or flat
// `{"type":"stored",…}`), then the domain event they make.
import type { EventDiff, HashAlgo, KvEvent, KvEventData, StoredBlock, WireBlockHash } from './kv-event.js';
import { failValue, skipValue } from './json-scan.js';
import {
  cursor,
  duplicate,
  eachElement,
  missing,
  nextMember,
  openObject,
  parseCount,
  parseHash,
  parseHashAlgo,
  parseNullableCount,
  parseNullableHash,
  parseString,
  readKey,
} from './kv-event-scan.js';
import { parseDiff, parseStoredBlock } from './kv-event-blocks.js';

/** Fields of an event object; the wrapped form fills one for the item and one for `data`, the flat form one. */
class EventFields {
  seen = 0;
  eventId: number | null = null;
  dataStart = -1;
  data: EventFields | null = null;
  windowSize: number | null = null;
  attentionDpRank: number | null = null;
  hashAlgo: HashAlgo | null = null;
  layerGroupId: number | null = null;
  type: string | null = null;
  typeStart = -1;
  parentHash: WireBlockHash | null = null;
  blocks: StoredBlock[] | null = null;
  blockHashes: WireBlockHash[] | null = null;
  blockHash: WireBlockHash | null = null;
  cacheLevel: EventDiff | null = null;
  priority: EventDiff | null = null;
  numBlocksPerCacheLevel: number[] | null = null;
}

const F_EVENT_ID = 1;
const F_DATA = 2;
const F_WINDOW = 4;
const F_RANK = 8;
const F_ALGO = 16;
const F_GROUP = 32;
const F_TYPE = 64;
const F_PARENT = 128;
const F_BLOCKS = 256;
const F_HASHES = 512;
const F_HASH = 1024;
const F_LEVEL = 2048;
const F_PRIORITY = 4096;
const F_NUM_BLOCKS = 8192;

function parseEventFields(text: string, i: number, top: boolean): EventFields {
  const f = new EventFields();
  let j = openObject(text, i, top ? 'event' : 'data');
  while (j >= 0) {
    const key = readKey(text, j);
    const v = cursor.pos;
    let bit = 0;
    switch (key) {
      case 'event_id':
        bit = F_EVENT_ID;
        f.eventId = parseNullableCount(text, v, 'event_id');
        break;
      case 'data':
        if (top) {
          bit = F_DATA;
          f.dataStart = v;
          f.data = parseEventFields(text, v, false);
        } else {
          cursor.pos = skipValue(text, v);
        }
        break;
      case 'window_size':
        bit = F_WINDOW;
        f.windowSize = parseNullableCount(text, v, 'window_size');
        break;
      case 'attention_dp_rank':
        bit = F_RANK;
        f.attentionDpRank = parseNullableCount(text, v, 'attention_dp_rank');
        break;
      case 'hash_algo':
        bit = F_ALGO;
        f.hashAlgo = parseHashAlgo(text, v);
        break;
      case 'layer_group_id':
        bit = F_GROUP;
        f.layerGroupId = parseNullableCount(text, v, 'layer_group_id');
        break;
      case 'type':
        bit = F_TYPE;
        f.typeStart = v;
        f.type = parseString(text, v, 'event type');
        break;
      case 'parent_hash':
        bit = F_PARENT;
        f.parentHash = parseNullableHash(text, v, 'parent_hash');
        break;
      case 'blocks': {
        bit = F_BLOCKS;
        const blocks: StoredBlock[] = [];
        eachElement(text, v, 'blocks', (start) => blocks.push(parseStoredBlock(text, start)));
        f.blocks = blocks;
        break;
      }
      case 'block_hashes': {
        bit = F_HASHES;
        const hashes: WireBlockHash[] = [];
        eachElement(text, v, 'block_hashes', (start) => hashes.push(parseHash(text, start, 'block_hashes item')));
        f.blockHashes = hashes;
        break;
      }
      case 'block_hash':
        bit = F_HASH;
        f.blockHash = parseHash(text, v, 'block_hash');
        break;
      case 'cache_level':
        bit = F_LEVEL;
        f.cacheLevel = parseDiff(text, v, 'cache_level diff');
        break;
      case 'priority':
        bit = F_PRIORITY;
        f.priority = parseDiff(text, v, 'priority diff');
        break;
      case 'num_blocks_per_cache_level': {
        bit = F_NUM_BLOCKS;
        const counts: number[] = [];
        eachElement(text, v, 'num_blocks_per_cache_level', (start) =>
          counts.push(parseCount(text, start, 'num_blocks_per_cache_level item')),
        );
        f.numBlocksPerCacheLevel = counts;
        break;
      }
      default:
        cursor.pos = skipValue(text, v);
    }
    if (f.seen & bit) duplicate(key, j);
    f.seen |= bit;
    j = nextMember(text, cursor.pos);
  }
  return f;
}

function buildData(f: EventFields, objectStart: number): KvEventData {
  switch (f.type) {
    case null:
      return missing(objectStart, 'type', 'event data');
    case 'created':
      if (f.numBlocksPerCacheLevel === null) missing(objectStart, 'num_blocks_per_cache_level', 'created event');
      return { type: 'created', numBlocksPerCacheLevel: f.numBlocksPerCacheLevel };
    case 'stored':
      if (f.blocks === null) missing(objectStart, 'blocks', 'stored event');
      return { type: 'stored', parentHash: f.parentHash, blocks: f.blocks };
    case 'removed':
      if (f.blockHashes === null) missing(objectStart, 'block_hashes', 'removed event');
      return { type: 'removed', blockHashes: f.blockHashes };
    case 'updated':
      if (f.blockHash === null) missing(objectStart, 'block_hash', 'updated event');
      return { type: 'updated', blockHash: f.blockHash, cacheLevel: f.cacheLevel, priority: f.priority };
    case 'all_cleared':
      return { type: 'all_cleared' };
    default:
      return failValue(
        'unknown-event-type',
        `unknown event type ${JSON.stringify(f.type)} at offset ${f.typeStart} (expected created, stored, removed, updated or all_cleared)`,
        f.typeStart,
      );
  }
}

export function parseItem(text: string, i: number): KvEvent {
  const f = parseEventFields(text, i, true);
  const end = cursor.pos;
  let data: KvEventData;
  let hashAlgo = f.hashAlgo;
  if (f.data !== null) {
    data = buildData(f.data, f.dataStart);
    if (!(f.seen & F_ALGO)) hashAlgo = f.data.hashAlgo;
  } else if (f.seen & F_TYPE) {
    data = buildData(f, i);
  } else {
    return missing(i, 'data', 'event');
  }
  cursor.pos = end;
  return {
    eventId: f.eventId,
    data,
    windowSize: f.windowSize,
    attentionDpRank: f.attentionDpRank,
    hashAlgo,
    layerGroupId: f.layerGroupId,
  };
}
