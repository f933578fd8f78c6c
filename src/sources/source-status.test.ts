import { describe, expect, it } from 'vitest';
import { SourceStatusBoard } from './source-status.js';

describe('SourceStatusBoard.list', () => {
  it('lists sources by name, whatever order they first reported in', () => {
    const status = new SourceStatusBoard({ sink: { apply: () => undefined }, clock: () => 0 });
    status.ok('zmq:ctx0/rank1');
    status.fail('relay:ctx0', 'timeout', 'slow');
    status.ok('zmq:ctx0/rank0');
    expect(status.list().map((s) => [s.source, s.up])).toEqual([
      ['relay:ctx0', false],
      ['zmq:ctx0/rank0', true],
      ['zmq:ctx0/rank1', true],
    ]);
  });
});
