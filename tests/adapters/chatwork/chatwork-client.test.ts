import nock from 'nock';
import { ChatworkClient } from '../../../src/adapters/chatwork/chatwork-client';
import { AppError } from '../../../src/core/app-error';
import { silentLogger } from '../../../src/observability/logger';
import { fakeTimer } from './fake-timer';
import { captureLogger } from '../../helpers/logs';

/** A network error as node:http reports it (an Error with a `code`; nock 14 needs an Error to emit it). */
const netError = (code: string, message: string) => Object.assign(new Error(message), { code });

const ORIGIN = 'https://api.chatwork.test';
const TOKEN = 'cw-api-token-0123456789abcdef';

function setup(extra: Partial<ConstructorParameters<typeof ChatworkClient>[0]> = {}) {
  const timer = fakeTimer();
  const client = new ChatworkClient({
    apiToken: TOKEN,
    baseUrl: `${ORIGIN}/v2`,
    logger: silentLogger(),
    now: timer.now,
    sleep: timer.sleep,
    random: () => 0.5,
    ...extra,
  });
  return { client, timer, api: nock(ORIGIN, { reqheaders: { 'x-chatworktoken': TOKEN } }) };
}

async function caught(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a rejection');
}

afterEach(() => expect(nock.pendingMocks()).toEqual([]));

describe('ChatworkClient requests', () => {
  it('getMe sends the token header and maps the account', async () => {
    const { client, api } = setup();
    api.get('/v2/me').reply(200, { account_id: 123, name: 'Hisho', room_id: 1 });
    await expect(client.getMe()).resolves.toEqual({ accountId: '123', name: 'Hisho' });
  });

  it('postMessage sends a form-urlencoded body', async () => {
    const { client, api } = setup();
    api
      .post('/v2/rooms/42/messages', 'body=Hello+Chatwork%21+%26+%5BTo%3A1%5D')
      .matchHeader('content-type', 'application/x-www-form-urlencoded')
      .reply(200, { message_id: '1234' });
    await expect(client.postMessage('42', 'Hello Chatwork! & [To:1]')).resolves.toEqual({ messageId: '1234' });
  });

  it('createTask sends to_ids, limit and limit_type', async () => {
    const { client, api } = setup();
    api
      .post('/v2/rooms/42/tasks', { body: 'Buy milk', to_ids: '1,3,6', limit: '1385996399', limit_type: 'date' })
      .reply(200, { task_ids: [123, 124] });
    await expect(
      client.createTask('42', { body: 'Buy milk', toIds: ['1', '3', '6'], limit: 1385996399, limitType: 'date' }),
    ).resolves.toEqual({ taskIds: ['123', '124'] });
  });

  it('updateTaskStatus sends the status in the form field "body"', async () => {
    const { client, api } = setup();
    api.put('/v2/rooms/42/tasks/7/status', { body: 'done' }).reply(200, { task_id: 7 });
    await expect(client.updateTaskStatus('42', '7', 'done')).resolves.toBeUndefined();
  });

  it('getRoomMembers maps members and reads unknown roles as readonly', async () => {
    const { client, api } = setup();
    api.get('/v2/rooms/42/members').reply(200, [
      { account_id: 1, name: 'A', role: 'admin', chatwork_id: 'a' },
      { account_id: 2, name: 'B', role: 'owner' },
    ]);
    await expect(client.getRoomMembers('42')).resolves.toEqual([
      { accountId: '1', name: 'A', role: 'admin' },
      { accountId: '2', name: 'B', role: 'readonly' },
    ]);
  });

  it('getRoomMembers treats 204 as an empty list', async () => {
    const { client, api } = setup();
    api.get('/v2/rooms/42/members').reply(204);
    await expect(client.getRoomMembers('42')).resolves.toEqual([]);
  });

  it('sends nothing that matches without the right token header', async () => {
    const { client, api } = setup({ apiToken: 'another-token', maxRetries: 0 });
    const scope = api.get('/v2/me').reply(200, { account_id: 1, name: 'x' });
    expect((await caught(client.getMe())).code).toBe('EXTERNAL_API_FAILED');
    expect(scope.isDone()).toBe(false);
    nock.cleanAll();
  });

  it('rejects non-numeric ids before any request', async () => {
    const { client } = setup();
    expect((await caught(client.postMessage('42/../me', 'x'))).code).toBe('VALIDATION_FAILED');
    expect((await caught(client.createTask('42', { body: 'x', toIds: ['1,2'] }))).code).toBe('VALIDATION_FAILED');
  });

  it('fails on an unexpected response shape', async () => {
    const { client, api } = setup();
    api.get('/v2/me').reply(200, { hello: 'world' });
    expect((await caught(client.getMe())).code).toBe('EXTERNAL_API_FAILED');
  });
});

describe('ChatworkClient retries and rate limits', () => {
  it('on 429 waits until x-ratelimit-reset, then retries', async () => {
    const { client, api, timer } = setup();
    const reset = timer.now() / 1000 + 7;
    api
      .post('/v2/rooms/42/messages')
      .reply(
        429,
        { errors: ['Rate limit exceeded'] },
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      )
      .post('/v2/rooms/42/messages')
      .reply(200, { message_id: '9' });
    await expect(client.postMessage('42', 'hi')).resolves.toEqual({ messageId: '9' });
    expect(timer.state.sleeps).toEqual([7000]);
  });

  it('caps the 429 wait', async () => {
    const { client, api, timer } = setup({ maxRateLimitWaitMs: 5000 });
    api
      .get('/v2/me')
      .reply(429, {}, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(timer.now() / 1000 + 300) })
      .get('/v2/me')
      .reply(200, { account_id: 1, name: 'x' });
    await client.getMe();
    expect(timer.state.sleeps).toEqual([5000]);
  });

  it('waits the room window on a per-room 429', async () => {
    const { client, api, timer } = setup();
    api
      .post('/v2/rooms/42/messages')
      .reply(
        429,
        { errors: ['Rate limit for message posting per room exceeded.'] },
        {
          'x-ratelimit-remaining': '250',
          'x-ratelimit-reset': String(timer.now() / 1000 + 200),
        },
      )
      .post('/v2/rooms/42/messages')
      .reply(200, { message_id: '9' });
    await client.postMessage('42', 'hi');
    expect(timer.state.sleeps).toEqual([10_000]);
  });

  it('waits for the reset before sending when the global budget is spent', async () => {
    const { client, api, timer } = setup();
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(timer.now() / 1000 + 30) };
    api
      .get('/v2/me')
      .reply(200, { account_id: 1, name: 'x' }, headers)
      .get('/v2/me')
      .reply(200, { account_id: 1, name: 'x' });
    await client.getMe();
    expect(timer.state.sleeps).toEqual([]);
    await client.getMe();
    expect(timer.state.sleeps).toEqual([30_000]);
  });

  it('queues posts beyond 10 per 10 s in one room instead of failing', async () => {
    const { client, api, timer } = setup();
    api.post('/v2/rooms/42/messages').times(11).reply(200, { message_id: '1' });
    api.post('/v2/rooms/43/messages').reply(200, { message_id: '2' });
    await Promise.all(Array.from({ length: 11 }, () => client.postMessage('42', 'x')));
    expect(timer.state.sleeps).toEqual([10_000]);
    await client.postMessage('43', 'y');
    expect(timer.state.sleeps).toHaveLength(1);
  });

  it('logs a post the room limit held back, with the wait (an operator sees why a reply came late)', async () => {
    const { logger, lines } = captureLogger('info');
    const { client, api } = setup({ logger });
    api.post('/v2/rooms/42/messages').times(11).reply(200, { message_id: '1' });
    await Promise.all(Array.from({ length: 11 }, () => client.postMessage('42', 'x')));
    const paced = lines.filter((l) => l.msg === 'chatwork.room_paced');
    expect(paced).toEqual([expect.objectContaining({ path: '/rooms/42/messages', pacedMs: 10_000 })]);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
  });

  it('retries a 500 with backoff, then succeeds', async () => {
    const { client, api, timer } = setup();
    api.get('/v2/me').reply(500).get('/v2/me').reply(503).get('/v2/me').reply(200, { account_id: 1, name: 'x' });
    await client.getMe();
    // Jitter fixed at 0.5: 3/4 of 500·2^n.
    expect(timer.state.sleeps).toEqual([375, 750]);
  });

  it('retries network errors and gives up after maxRetries', async () => {
    const { client, api, timer } = setup({ maxRetries: 2 });
    api.get('/v2/me').times(3).replyWithError(netError('ECONNRESET', 'socket hang up'));
    const err = await caught(client.getMe());
    expect(err.code).toBe('EXTERNAL_API_FAILED');
    expect(err.message).toMatch(/network error .*after 3 attempts/);
    expect(timer.state.sleeps).toHaveLength(2);
  });

  it('gives up on persistent 5xx after maxRetries', async () => {
    const { client, api } = setup({ maxRetries: 1 });
    api
      .get('/v2/me')
      .times(2)
      .reply(502, { errors: ['Bad gateway'] });
    expect((await caught(client.getMe())).message).toMatch(/HTTP 502 .*Bad gateway.*after 2 attempts/);
  });

  it('does not retry a 401 and reports status and errors without the token', async () => {
    const { client, api, timer } = setup();
    api
      .get('/v2/me')
      .once()
      .reply(401, { errors: ['Invalid API token', `token ${TOKEN} rejected`] });
    const err = await caught(client.getMe());
    expect(err.code).toBe('EXTERNAL_API_FAILED');
    expect(err.message).toContain('HTTP 401');
    expect(err.message).toContain('Invalid API token');
    expect(err.message).not.toContain(TOKEN);
    expect(JSON.stringify(err.cause ?? null)).not.toContain(TOKEN);
    expect(timer.state.sleeps).toEqual([]);
  });

  it('does not retry other 4xx', async () => {
    const { client, api } = setup();
    api
      .post('/v2/rooms/42/messages')
      .once()
      .reply(400, { errors: ['Parameter body is too long'] });
    expect((await caught(client.postMessage('42', 'x'))).message).toMatch(/HTTP 400 .*too long/);
  });
});

describe('ChatworkClient: posting never repeats a request that may have landed', () => {
  it.each([
    [
      'a 500',
      (api: nock.Scope, path: string) =>
        api
          .post(path)
          .once()
          .reply(500, { errors: ['Internal'] }),
    ],
    ['a 502 from a proxy', (api: nock.Scope, path: string) => api.post(path).once().reply(502)],
    [
      'a reset connection',
      (api: nock.Scope, path: string) => api.post(path).once().replyWithError(netError('ECONNRESET', 'socket hang up')),
    ],
  ])('a message post answered with %s is sent once and reported as uncertain', async (_n, reply) => {
    const { client, api, timer } = setup();
    reply(api, '/v2/rooms/42/messages');
    const err = await caught(client.postMessage('42', 'x'));
    expect(err.uncertain).toBe(true);
    expect(err.message).toMatch(/may have been processed/);
    expect(timer.state.sleeps).toEqual([]);
  });

  it('a task post answered with a 503 is sent once and reported as uncertain', async () => {
    const { client, api } = setup();
    api.post('/v2/rooms/42/tasks').once().reply(503);
    const err = await caught(client.createTask('42', { body: 'b', toIds: ['1'] }));
    expect(err.uncertain).toBe(true);
  });

  it('a post that times out is sent once and reported as uncertain', async () => {
    const { client, api } = setup({ timeoutMs: 50 });
    api.post('/v2/rooms/42/messages').once().delay(300).reply(200, { message_id: '1' });
    const err = await caught(client.postMessage('42', 'x'));
    expect(err.uncertain).toBe(true);
  });

  it('a 200 whose answer is unreadable has landed: uncertain, not failed', async () => {
    const { client, api } = setup();
    api.post('/v2/rooms/42/messages').once().reply(200, 'not json');
    expect((await caught(client.postMessage('42', 'x'))).uncertain).toBe(true);
  });

  it('retries a post that surely never arrived (connection refused), and after a 429', async () => {
    const { client, api, timer } = setup();
    api
      .post('/v2/rooms/42/messages')
      .once()
      .replyWithError(netError('ECONNREFUSED', 'connect ECONNREFUSED'))
      .post('/v2/rooms/42/messages')
      .once()
      .reply(
        429,
        { errors: ['Rate limit exceeded'] },
        { 'x-ratelimit-reset': String(Math.floor(timer.now() / 1000) + 2) },
      )
      .post('/v2/rooms/42/messages')
      .once()
      .reply(200, { message_id: '77' });
    await expect(client.postMessage('42', 'x')).resolves.toEqual({ messageId: '77' });
    expect(timer.state.sleeps).toHaveLength(2);
  });

  it('a post refused with a 4xx is a plain failure (nothing landed)', async () => {
    const { client, api } = setup();
    api
      .post('/v2/rooms/42/messages')
      .once()
      .reply(403, { errors: ['No permission'] });
    expect((await caught(client.postMessage('42', 'x'))).uncertain).toBe(false);
  });

  it("reads the room's latest messages with force=1 (204: none)", async () => {
    const { client, api } = setup();
    api
      .get('/v2/rooms/42/messages')
      .query({ force: '1' })
      .reply(200, [
        {
          message_id: '5',
          account: { account_id: 9999, name: 'Hisho', avatar_image_url: 'https://example.com/a.png' },
          body: 'Hello',
          send_time: 1384242850,
          update_time: 0,
        },
      ])
      .get('/v2/rooms/43/messages')
      .query({ force: '1' })
      .reply(204);
    await expect(client.getMessages('42')).resolves.toEqual([
      { messageId: '5', accountId: '9999', body: 'Hello', sendTime: 1384242850 },
    ]);
    await expect(client.getMessages('43')).resolves.toEqual([]);
  });
});
