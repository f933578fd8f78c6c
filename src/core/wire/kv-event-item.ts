// One item of a `/kv_cache_events` array: its fields in any order (wrapped `{"event_id",…,"data":{…}}` or flat
// `{"type":"stored",…}`), then the domain event they make.
import type { EventDiff, HashAlgo, KvEvent, KvEventData, StoredBlock, WireBlockHash } from './kv-event.js';
import { failValue } from './scan-failure.js';
import { StringTable } from './string-table.js';
import {
  duplicate,
  missing,
  openObject,
  parseCount,
  parseEnum,
  parseHash,
  parseHashAlgo,
  parseNullableCount,
  parseNullableHash,
  type KvEventScanner,
} from './kv-event-scan.js';
import { eachElement, parseDiff, parseStoredBlock } from './kv-event-blocks.js';

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
  /** id in EVENT_TYPES, -2 when absent, -1 when unknown */
  type = -2;
  typeStart = -1;
  parentHash: WireBlockHash | null = null;
  blocks: StoredBlock[] | null = null;
  blockHashes: WireBlockHash[] | null = null;
  blockHash: WireBlockHash | null = null;
  cacheLevel: EventDiff | null = null;
  priority: EventDiff | null = null;
  numBlocksPerCacheLevel: number[] | null = null;
}

const EVENT_KEYS = new StringTable([
  'event_id',
  'data',
  'window_size',
  'attention_dp_rank',
  'hash_algo',
  'layer_group_id',
  'type',
  'parent_hash',
  'blocks',
  'block_hashes',
  'block_hash',
  'cache_level',
  'priority',
  'num_blocks_per_cache_level',
]);
const F_ALGO = 1 << 4;
const F_TYPE = 1 << 6;
const EVENT_TYPES = new StringTable(['created', 'stored', 'removed', 'updated', 'all_cleared']);

function parseEventFields(s: KvEventScanner, i: number, top: boolean): EventFields {
  const f = new EventFields();
  let j = openObject(s, i, top ? 'event' : 'data');
  while (j >= 0) {
    const key = s.keyId(j, EVENT_KEYS);
    const v = s.pos;
    let bit = key < 0 ? 0 : 1 << key;
    switch (key) {
      case 0:
        f.eventId = parseNullableCount(s, v, 'event_id');
        break;
      case 1:
        if (top) {
          f.dataStart = v;
          f.data = parseEventFields(s, v, false);
        } else {
          bit = 0;
          s.pos = s.skipValue(v);
        }
        break;
      case 2:
        f.windowSize = parseNullableCount(s, v, 'window_size');
        break;
      case 3:
        f.attentionDpRank = parseNullableCount(s, v, 'attention_dp_rank');
        break;
      case 4:
        f.hashAlgo = parseHashAlgo(s, v);
        break;
      case 5:
        f.layerGroupId = parseNullableCount(s, v, 'layer_group_id');
        break;
      case 6:
        f.typeStart = v;
        f.type = parseEnum(s, v, 'event type', EVENT_TYPES);
        break;
      case 7:
        f.parentHash = parseNullableHash(s, v, 'parent_hash');
        break;
      case 8: {
        const blocks: StoredBlock[] = [];
        eachElement(s, v, 'blocks', (start) => blocks.push(parseStoredBlock(s, start)));
        f.blocks = blocks;
        break;
      }
      case 9: {
        const hashes: WireBlockHash[] = [];
        eachElement(s, v, 'block_hashes', (start) => hashes.push(parseHash(s, start, 'block_hashes item')));
        f.blockHashes = hashes;
        break;
      }
      case 10:
        f.blockHash = parseHash(s, v, 'block_hash');
        break;
      case 11:
        f.cacheLevel = parseDiff(s, v, 'cache_level diff');
        break;
      case 12:
        f.priority = parseDiff(s, v, 'priority diff');
        break;
      case 13: {
        const counts: number[] = [];
        eachElement(s, v, 'num_blocks_per_cache_level', (start) =>
          counts.push(parseCount(s, start, 'num_blocks_per_cache_level item')),
        );
        f.numBlocksPerCacheLevel = counts;
        break;
      }
      default:
        s.pos = s.skipValue(v);
    }
    if (f.seen & bit) duplicate(s, j);
    f.seen |= bit;
    j = s.nextMember(s.pos);
  }
  return f;
}

function buildData(s: KvEventScanner, f: EventFields, objectStart: number): KvEventData {
  switch (f.type) {
    case -2:
      return missing(objectStart, 'type', 'event data');
    case 0:
      if (f.numBlocksPerCacheLevel === null) missing(objectStart, 'num_blocks_per_cache_level', 'created event');
      return { type: 'created', numBlocksPerCacheLevel: f.numBlocksPerCacheLevel };
    case 1:
      if (f.blocks === null) missing(objectStart, 'blocks', 'stored event');
      return { type: 'stored', parentHash: f.parentHash, blocks: f.blocks };
    case 2:
      if (f.blockHashes === null) missing(objectStart, 'block_hashes', 'removed event');
      return { type: 'removed', blockHashes: f.blockHashes };
    case 3:
      if (f.blockHash === null) missing(objectStart, 'block_hash', 'updated event');
      return { type: 'updated', blockHash: f.blockHash, cacheLevel: f.cacheLevel, priority: f.priority };
    case 4:
      return { type: 'all_cleared' };
    default: {
      const type = s.decodeString(f.typeStart, s.scanString(f.typeStart));
      return failValue(
        'unknown-event-type',
        `unknown event type ${JSON.stringify(type)} at offset ${f.typeStart} (expected created, stored, removed, updated or all_cleared)`,
        f.typeStart,
      );
    }
  }
}

export function parseItem(s: KvEventScanner, i: number): KvEvent {
  const f = parseEventFields(s, i, true);
  const end = s.pos;
  let data: KvEventData;
  let hashAlgo = f.hashAlgo;
  if (f.data !== null) {
    data = buildData(s, f.data, f.dataStart);
    if (!(f.seen & F_ALGO)) hashAlgo = f.data.hashAlgo;
  } else if (f.seen & F_TYPE) {
    data = buildData(s, f, i);
  } else {
    return missing(i, 'data', 'event');
  }
  s.pos = end;
  return {
    eventId: f.eventId,
    data,
    windowSize: f.windowSize,
    attentionDpRank: f.attentionDpRank,
    hashAlgo,
    layerGroupId: f.layerGroupId,
  };
}
