import type { Db } from '../../src/db/prisma';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import { ToolExecutor, canonicalJson, originKey } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { ToolError, type ToolContext } from '../../src/tools/types';

const calls: string[] = [];
let failNext = false;
const echo = defineTool({
  name: 'echo_tool',
  description: 'echo',
  triggerExamples: ['echo'],
  effects: ['test.echo'],
  effectKind: 'save',
  risk: 'none',
  input: z.object({ v: z.string() }),
  output: z.object({ v: z.string() }),
  handler: async (i) => {
    calls.push(`echo:${i.v}`);
    if (failNext) {
      failNext = false;
      throw new ToolError('flaky', 'FLAKY');
    }
    return { v: i.v };
  },
});
const other = defineTool({
  name: 'other_tool',
  description: 'other',
  triggerExamples: ['other'],
  effects: [],
  risk: 'none',
  input: z.object({ v: z.string() }),
  output: z.object({ w: z.string() }),
  handler: async (i) => {
    calls.push(`other:${i.v}`);
    return { w: i.v };
  },
});
const crash = defineTool({
  name: 'crash_tool',
  description: 'crash',
  triggerExamples: ['crash'],
  effects: [],
  risk: 'none',
  input: z.object({}),
  output: z.object({}),
  handler: async () => {
    throw new Error('database password=hunter2 leaked?');
  },
});

const ctx = (key: string): ToolContext => ({
  orgId: 'o',
  platform: 'console',
  roomId: 'r',
  member: null,
  idempotencyKey: key,
  now: () => new Date(),
  timezone: 'Asia/Tokyo',
  services: { db: {} as Db }, // these tools read no data
});

describe('ToolExecutor', () => {
  const ex = new ToolExecutor(new ToolRegistry([echo, other, crash]));
  beforeEach(() => {
    calls.length = 0;
  });

  it('keys a call by its origin (work item, tool, n-th call), not by its parameters', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe('{"a":[1,{"c":3,"d":2}],"b":1}');
    expect(originKey('msg:x', 'echo_tool')).toBe('msg:x:echo_tool#0');
    expect(originKey('msg:x', 'echo_tool', 1)).not.toBe(originKey('msg:x', 'echo_tool', 0));
    expect(originKey('msg:x', 'echo_tool')).not.toBe(originKey('msg:x', 'other_tool'));
    expect(originKey('msg:x', 'echo_tool')).not.toBe(originKey('msg:y', 'echo_tool'));
  });

  it("runs a call once per origin even when reworded, but never hands one tool another tool's result", async () => {
    expect(await ex.run('echo_tool', { v: 'a' }, ctx('k1'))).toMatchObject({ status: 'ok', output: { v: 'a' } });
    // The same origin again (a retried turn whose model reworded the call): the first result, nothing runs.
    const reworded = await ex.run('echo_tool', { v: 'a, reworded' }, ctx('k1'));
    expect(reworded).toMatchObject({ status: 'ok', output: { v: 'a' } });
    expect(await ex.run('other_tool', { v: 'a' }, ctx('k1'))).toMatchObject({ status: 'ok', output: { w: 'a' } });
    expect(calls).toEqual(['echo:a', 'other:a']);
  });

  it('does not cache failures: a retry runs again', async () => {
    failNext = true;
    expect(await ex.run('echo_tool', { v: 'z' }, ctx('k2'))).toMatchObject({ status: 'error', code: 'FLAKY' });
    expect(await ex.run('echo_tool', { v: 'z' }, ctx('k2'))).toMatchObject({ status: 'ok' });
    expect(calls).toEqual(['echo:z', 'echo:z']);
  });

  it('unknown tools and bad input are errors for the model; internal errors expose only an id', async () => {
    expect(await ex.run('nope', {}, ctx('k3'))).toMatchObject({ status: 'error', code: 'UNKNOWN_TOOL' });
    expect(await ex.run('echo_tool', { v: 3 }, ctx('k3'))).toMatchObject({ status: 'error', code: 'INVALID_INPUT' });
    const r = await ex.run('crash_tool', {}, ctx('k3'));
    expect(r).toMatchObject({ status: 'internal_error', errorId: expect.stringMatching(/^E-/) });
    expect(JSON.stringify(r)).not.toContain('hunter2');
  });
});
