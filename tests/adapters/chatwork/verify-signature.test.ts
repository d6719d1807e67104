import { chatworkSignature, verifyChatworkSignature } from '../../../src/adapters/chatwork/verify-signature';

// Test vector from PLATFORMS.md A2 (note the full-width ？ in the body).
const TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
const BODY =
  '{"webhook_setting_id":"12345","webhook_event_type":"mention_to_me","webhook_event_time":1498028130,' +
  '"webhook_event":{"from_account_id":123456,"to_account_id":1484814,"room_id":567890123,' +
  '"message_id":"789012345","body":"[To:1484814]What do you like to eat？","send_time":1498028125,"update_time":0}}';
const SIGNATURE = 'pjdgKYtOBJdjwskz37peJ+p2YmYbRGGC1ViVja9bmRI=';

describe('chatworkSignature', () => {
  it('matches the documented test vector for string and Buffer bodies', () => {
    expect(chatworkSignature(BODY, TOKEN)).toBe(SIGNATURE);
    expect(chatworkSignature(Buffer.from(BODY, 'utf8'), TOKEN)).toBe(SIGNATURE);
  });

  it('keys the HMAC with the decoded token, not the token text', () => {
    expect(chatworkSignature(BODY, TOKEN)).not.toBe('11IlY0aV5Pc/i7NGOq/vwVigOOp1qHS2CfFK05Tw6NM=');
  });
});

describe('verifyChatworkSignature', () => {
  it('a token rotated in and out again: each signature verifies with its own token only', () => {
    const other = Buffer.from('another-webhook-token-of-32-bytes').toString('base64');
    const otherSig = chatworkSignature(BODY, other);
    expect(otherSig).not.toBe(SIGNATURE);
    for (let round = 0; round < 2; round += 1) {
      expect(verifyChatworkSignature(BODY, TOKEN, SIGNATURE)).toBe(true);
      expect(verifyChatworkSignature(BODY, other, SIGNATURE)).toBe(false);
      expect(verifyChatworkSignature(BODY, other, otherSig)).toBe(true);
      expect(verifyChatworkSignature(BODY, TOKEN, otherSig)).toBe(false);
    }
  });

  it('accepts the right signature', () => {
    expect(verifyChatworkSignature(Buffer.from(BODY), TOKEN, SIGNATURE)).toBe(true);
  });

  it('rejects a changed body, a wrong token and a wrong signature', () => {
    expect(verifyChatworkSignature(BODY.replace('eat', 'drink'), TOKEN, SIGNATURE)).toBe(false);
    expect(verifyChatworkSignature(BODY, 'b3RoZXItdG9rZW4=', SIGNATURE)).toBe(false);
    expect(verifyChatworkSignature(BODY, TOKEN, SIGNATURE.replace('p', 'q'))).toBe(false);
  });

  it('returns false (never throws) for missing, empty, short or odd signatures', () => {
    for (const sig of [undefined, null, '', 'abc', SIGNATURE + 'A', '💥'.repeat(22)]) {
      expect(verifyChatworkSignature(BODY, TOKEN, sig)).toBe(false);
    }
  });

  it('returns false for an empty token', () => {
    expect(verifyChatworkSignature(BODY, '', chatworkSignature(BODY, ''))).toBe(false);
  });
});
