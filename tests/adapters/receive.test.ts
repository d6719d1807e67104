import type { InboundMessage } from '../../src/core/chat';
import { receive, type Received } from '../../src/adapters/receive';

/** A received room message whose rules a test sets; what the steps asked is recorded. */
function received(o: Partial<Received> & { asked?: string[] } = {}): Received {
  const asked = o.asked ?? [];
  return {
    platform: 'chatwork',
    senderAccountId: '1004',
    botAccountId: '9999',
    notAddressed: () => (asked.push('addressed'), null),
    organisation: async () => (asked.push('organisation'), { orgId: 'org-1', roomListed: true }),
    toInbound: (org) =>
      ({
        platform: 'chatwork',
        orgId: org.orgId,
        roomId: '7',
        senderAccountId: '1004',
        text: 'こんにちは',
        platformMessageId: 'm1',
      }) as InboundMessage,
    ...o,
  };
}

function store() {
  const stored: InboundMessage[] = [];
  return { stored, accept: async (m: InboundMessage) => (stored.push(m), { status: 'accepted' as const }) };
}

describe('the shared intake steps', () => {
  it('store an addressed message of an organisation once, with that organisation', async () => {
    const s = store();
    const out = await receive(received(), s);
    expect(out).toMatchObject({ status: 'accepted', message: { orgId: 'org-1' } });
    expect(s.stored).toHaveLength(1);
  });

  it("ignore the bot's own post before anything else is asked", async () => {
    const asked: string[] = [];
    const s = store();
    const out = await receive(received({ senderAccountId: '9999', asked }), s);
    expect(out).toEqual({ status: 'ignored', reason: 'own_message' });
    expect(asked).toEqual([]);
    expect(s.stored).toHaveLength(0);
  });

  it('ignore a message not addressed to the bot without looking up its room', async () => {
    const asked: string[] = [];
    const s = store();
    const out = await receive(received({ asked, notAddressed: () => (asked.push('addressed'), 'not_mentioned') }), s);
    expect(out).toEqual({ status: 'ignored', reason: 'not_mentioned' });
    expect(asked).toEqual(['addressed']);
    expect(s.stored).toHaveLength(0);
  });

  it('store nothing from a room of no organisation', async () => {
    const s = store();
    const out = await receive(received({ organisation: async () => null }), s);
    expect(out).toEqual({ status: 'ignored', reason: 'no_organisation' });
    expect(s.stored).toHaveLength(0);
  });

  it('let a failed store fail the receipt (the platform is told, nothing is acknowledged)', async () => {
    const failing = { accept: async () => Promise.reject(new Error('database down')) };
    await expect(receive(received(), failing)).rejects.toThrow('database down');
  });
});
