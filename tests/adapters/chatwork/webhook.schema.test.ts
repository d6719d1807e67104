import { parseChatworkWebhook } from '../../../src/adapters/chatwork/webhook.schema';

const mention = {
  webhook_setting_id: '12345',
  webhook_event_type: 'mention_to_me',
  webhook_event_time: 1498028130,
  webhook_event: {
    from_account_id: 123456,
    to_account_id: 1484814,
    room_id: 567890123,
    message_id: '789012345',
    body: '[To:1484814]What do you like to eat？',
    send_time: 1498028125,
    update_time: 0,
  },
};

const created = {
  webhook_setting_id: 'xxxx',
  webhook_event_type: 'message_created',
  webhook_event_time: 1603899475,
  webhook_event: { message_id: 'mmmm', room_id: 1, account_id: 2, body: 'hi', send_time: 1603899474, update_time: 0 },
};

describe('parseChatworkWebhook', () => {
  it('parses the official mention_to_me sample', () => {
    const r = parseChatworkWebhook(mention);
    expect(r.success).toBe(true);
    if (!r.success || r.data.type !== 'mention_to_me') throw new Error('expected mention_to_me');
    expect(r.data.settingId).toBe('12345');
    expect(r.data.eventTime).toBe(1498028130);
    expect(r.data.event.from_account_id).toBe(123456);
  });

  it('parses message_created and message_updated with account_id', () => {
    for (const type of ['message_created', 'message_updated'] as const) {
      const r = parseChatworkWebhook({ ...created, webhook_event_type: type });
      expect(r.success && r.data.type).toBe(type);
    }
  });

  it('parses unknown event types as unknown, whatever their event object', () => {
    const r = parseChatworkWebhook({ ...created, webhook_event_type: 'room_deleted', webhook_event: 'anything' });
    expect(r).toEqual({
      success: true,
      data: { type: 'unknown', eventType: 'room_deleted', settingId: 'xxxx', eventTime: 1603899475 },
    });
  });

  it('rejects wrong shapes with field paths only', () => {
    const badId = parseChatworkWebhook({ ...created, webhook_event: { ...created.webhook_event, message_id: 5 } });
    expect(badId).toEqual({ success: false, issues: [expect.stringMatching(/^webhook_event\.message_id:/)] });
    // A mention_to_me has no account_id: the message shape is not accepted for it.
    expect(parseChatworkWebhook({ ...mention, webhook_event: created.webhook_event }).success).toBe(false);
    expect(parseChatworkWebhook({ ...created, room_id: 'x', webhook_event_time: 'now' }).success).toBe(false);
    for (const v of [null, 42, 'x', [], {}]) expect(parseChatworkWebhook(v).success).toBe(false);
  });

  it('does not echo field values in issues', () => {
    const r = parseChatworkWebhook({ ...created, webhook_event: { ...created.webhook_event, body: 12345678 } });
    expect(r.success).toBe(false);
    if (!r.success) expect(r.issues.join(' ')).not.toContain('12345678');
  });
});
