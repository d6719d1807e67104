import fs from 'node:fs';
import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { sampleDirectoryWith } from '../helpers/directory';
import { rawRequest } from '../helpers/http';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'console-admin-token-0123456789';

describe("the console only answers this machine's own pages (issue 8 §4: Host and Origin)", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ CONSOLE_ALLOWED_HOSTS: 'hisho.intra.example' });
  });
  afterAll(async () => {
    await svc.close();
  });

  const port = () => new URL(svc.url).port;
  const post = (headers: Record<string, string>) =>
    rawRequest(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ memberId: 'yamada-ichiro', text: '全員に給料を知らせて' }),
    });
  const items = () => svc.db.workItem.count({ where: { type: 'user_request' } });

  it('a DNS-rebinding page (foreign Host): 403, no page, no members, nothing enqueued', async () => {
    const before = await items();
    const evil = { host: `evil.example:${port()}` };
    for (const path of ['/console', '/console/api/state', '/console/api/messages?room=console-general']) {
      const res = await rawRequest(`${svc.url}${path}`, { headers: evil });
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(res.body).not.toContain('山田');
    }
    expect((await post({ ...evil, origin: `http://evil.example:${port()}` })).status).toBe(403);
    expect(await items()).toBe(before);
  });

  it('a cross-site form or fetch (foreign or missing Origin) cannot speak as anyone', async () => {
    const before = await items();
    expect((await post({ host: `127.0.0.1:${port()}`, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ host: `localhost:${port()}`, origin: `http://127.0.0.1:${port()}` })).status).toBe(403);
    expect((await post({ host: `127.0.0.1:${port()}` })).status).toBe(403);
    expect(await items()).toBe(before);
  });

  it('its own page (loopback names and configured ones, matching Origin) works', async () => {
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `hisho.intra.example:${port()}`]) {
      expect((await rawRequest(`${svc.url}/console/api/state`, { headers: { host } })).status).toBe(200);
    }
    const llm = new FakeAnthropic().script(replyCall('こんにちはウル'));
    try {
      expect((await post({ host: `localhost:${port()}`, origin: `http://localhost:${port()}` })).status).toBe(202);
      // The turn takes its answer before the fake stops (a late model call would find none and fail).
      await waitFor(async () => llm.pending === 0 && (await svc.db.turnRecord.count()) > 0, 10_000, 'the turn');
    } finally {
      llm.stop();
    }
  });
});

describe('the console from other machines (CONSOLE_ALLOW_REMOTE=true) needs the admin login', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ CONSOLE_ALLOW_REMOTE: 'true', ADMIN_TOKEN });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('sends browsers to the login page and APIs get 401; after login the session cookie opens it', async () => {
    const page = await fetch(`${svc.url}/console`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/admin/login?next=%2Fconsole');
    expect((await fetch(`${svc.url}/console/api/state`)).status).toBe(401);
    expect(
      (await fetch(`${svc.url}/console/api/state`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } }))
        .status,
    ).toBe(401);
    expect(
      (await fetch(`${svc.url}/console/api/state`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status,
    ).toBe(200);

    const login = await fetch(`${svc.url}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.url },
      body: new URLSearchParams({ token: ADMIN_TOKEN, next: '/console' }).toString(),
    });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/console');
    const cookie = login.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^hisho_admin=[^;]+; Max-Age=\d+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
    const session = cookie.split(';')[0]!;
    expect((await fetch(`${svc.url}/console`, { headers: { cookie: session } })).status).toBe(200);
    const state = await fetch(`${svc.url}/console/api/state`, { headers: { cookie: session } });
    expect(state.status).toBe(200);
    // A forged cookie is no session.
    expect(
      (await fetch(`${svc.url}/console/api/state`, { headers: { cookie: `${session.slice(0, -4)}AAAA` } })).status,
    ).toBe(401);
  });
});

describe('the console speaks as the member picked, even without a console account in the directory (Build 7)', () => {
  it('treats them as who they are (level, tools) and shows their name', async () => {
    const directory = sampleDirectoryWith({
      schedules: '',
      edits: [['accounts: { chatwork: 1005, console: tanaka-hanako }', 'accounts: { chatwork: 1005 }']],
    });
    const svc = await startTestService({ ORG_DIRECTORY_FILE: directory });
    const llm = new FakeAnthropic().script(replyCall('田中花子さん、こんにちはウル'), replyCall('またどうぞウル'));
    try {
      const state = (await (await fetch(`${svc.url}/console/api/state`)).json()) as {
        members: { id: string; accountId: string }[];
      };
      expect(state.members.find((m) => m.id === 'tanaka-hanako')!.accountId).toBe('acme:tanaka-hanako');
      const say = (text: string) =>
        fetch(`${svc.url}/console/api/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: svc.url },
          body: JSON.stringify({ memberId: 'tanaka-hanako', text, roomId: 'c-hanako' }),
        });
      expect((await say('こんにちは')).status).toBe(202);
      const turn = await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: 'c-hanako' } }), 8000, 'turn');
      expect(turn.memberId).toBe('tanaka-hanako');
      const request = JSON.stringify(llm.requests[0]);
      expect(request).toContain('田中花子（レベル2');
      expect((llm.requests[0]!.tools as { name: string }[]).map((t) => t.name)).toContain('create_task');
      const msgs = (await (await fetch(`${svc.url}/console/api/messages?room=c-hanako&after=0`)).json()) as {
        messages: { role: string; name: string | null }[];
      };
      expect(msgs.messages.find((m) => m.role === 'user')!.name).toBe('田中花子');

      // A database imported before console identities were implicit: the console creates it on first use.
      await svc.db.platformAccount.delete({
        where: { platform_accountId: { platform: 'console', accountId: 'acme:tanaka-hanako' } },
      });
      expect((await say('またね')).status).toBe(202);
      await waitFor(
        async () => (await svc.db.turnRecord.count({ where: { roomId: 'c-hanako', memberId: 'tanaka-hanako' } })) === 2,
        8000,
        'second turn',
      );
    } finally {
      llm.stop();
      await svc.close();
      fs.rmSync(directory, { force: true });
    }
  });
});
