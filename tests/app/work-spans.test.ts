import { workItemHandlers } from '../../src/app/compose-stages';
import { installTracing, type SpanOptions, type TracingBackend } from '../../src/observability/tracing';
import type { ClaimedItem } from '../../src/queue/work-queue';

/** A backend that records the spans made, with their options, and runs each function. */
function recordingBackend(spans: { name: string; opts: SpanOptions }[]): TracingBackend {
  return {
    inSpan: (name, opts, fn) => {
      spans.push({ name, opts });
      return fn({ set: () => undefined, link: () => undefined, fail: () => undefined });
    },
    traceparent: () => undefined,
    stepWatch: () => (_name, run) => run((next) => next()),
    captureContent: false,
  };
}

const item = (payload: unknown, traceContext: string | null = null): ClaimedItem => ({
  id: 42n,
  type: 'work',
  payload,
  orderingKey: 'k',
  attempts: 2,
  maxAttempts: 3,
  claimToken: 't',
  dedupeKey: 'd',
  traceContext,
});

/**
 * Issue 43: background items (multi-step work, conversation summaries, self-critiques) call the model outside any
 * turn; each runs in a `work <kind>` span so those calls are one trace, joined to the span that stored the item.
 */
describe('work items in spans of their own', () => {
  const ran: string[] = [];
  const handlers = workItemHandlers(
    {
      runner: {} as never,
      notices: {} as never,
      work: { handle: async () => void ran.push('work') } as never,
      summaries: { handle: async () => void ran.push('summary') } as never,
      critic: { handle: async () => void ran.push('critique') } as never,
    },
    ['work'],
  );
  const spans: { name: string; opts: SpanOptions }[] = [];
  beforeAll(() => installTracing(recordingBackend(spans)));
  afterAll(() => installTracing(null));
  beforeEach(() => {
    spans.length = 0;
    ran.length = 0;
  });

  it('names the span by kind, with the item and its attempt, under the span that stored it', async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await handlers.work!(item({ kind: 'background_work' }, parent));
    await handlers.work!(item({ kind: 'conversation_summary', platform: 'chatwork', roomId: '1', accountId: '2' }));
    await handlers.work!(item({ kind: 'self_critique' }));
    expect(ran).toEqual(['work', 'summary', 'critique']);
    expect(spans.map((s) => s.name)).toEqual([
      'work background_work',
      'work conversation_summary',
      'work self_critique',
    ]);
    expect(spans[0]!.opts).toMatchObject({
      kind: 'consumer',
      parent,
      attributes: { 'hisho.work.kind': 'background_work', 'hisho.work_item.id': '42', 'hisho.work_item.attempt': 2 },
    });
    expect(spans[1]!.opts.parent).toBeNull();
  });

  it('makes no span with tracing off and still runs the item', async () => {
    installTracing(null);
    await handlers.work!(item({ kind: 'background_work' }));
    expect(ran).toEqual(['work']);
    expect(spans).toEqual([]);
    installTracing(recordingBackend(spans));
  });
});
