import { ChatworkBotIdentity } from '../../../src/adapters/chatwork/bot-identity';
import { silentLogger } from '../../../src/observability/logger';

describe('ChatworkBotIdentity (GET /me, retried in the background)', () => {
  it('knows the account after the first answer and asks no more', async () => {
    const getMe = jest.fn(async () => ({ accountId: '9999', name: 'Hisho' }));
    const id = new ChatworkBotIdentity({ getMe, logger: silentLogger() });
    await id.start();
    expect(id.accountId).toBe('9999');
    expect(id.name).toBe('Hisho');
    await id.refresh();
    expect(getMe).toHaveBeenCalledTimes(1);
    id.stop();
  });

  it('keeps retrying after a failure at start until ChatWork answers', async () => {
    let calls = 0;
    const getMe = jest.fn(async () => {
      calls++;
      if (calls < 3) throw new Error('ChatWork API GET /me network error');
      return { accountId: '9999', name: 'Hisho' };
    });
    const id = new ChatworkBotIdentity({ getMe, logger: silentLogger(), retryMs: 10 });
    await id.start();
    expect(id.accountId).toBeUndefined();
    const until = Date.now() + 3000;
    while (!id.accountId && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(id.accountId).toBe('9999');
    expect(getMe).toHaveBeenCalledTimes(3);
    id.stop();
  });

  it('shares one request between concurrent callers, and stop() ends the retries', async () => {
    let release!: () => void;
    const getMe = jest.fn(
      () =>
        new Promise<never>((_, reject) => {
          release = () => reject(new Error('down'));
        }),
    );
    const id = new ChatworkBotIdentity({ getMe, logger: silentLogger(), retryMs: 5 });
    const all = Promise.all([id.refresh(), id.refresh(), id.refresh()]);
    release();
    expect(await all).toEqual([false, false, false]);
    expect(getMe).toHaveBeenCalledTimes(1);
    id.stop();
    await new Promise((r) => setTimeout(r, 30));
    expect(getMe).toHaveBeenCalledTimes(1);
  });

  it('uses a known account without asking', async () => {
    const getMe = jest.fn(async () => ({ accountId: '1', name: 'x' }));
    const id = new ChatworkBotIdentity({ getMe, logger: silentLogger(), known: { accountId: '9999' } });
    await id.start();
    expect(id.accountId).toBe('9999');
    expect(getMe).not.toHaveBeenCalled();
  });
});
