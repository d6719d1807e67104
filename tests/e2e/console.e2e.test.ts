import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';

interface ConsoleMessage {
  id: string;
  role: string;
  name: string | null;
  text: string;
  options: { answer: string; label: string; key?: string }[] | null;
}

describe('local console (a real adapter through the same pipeline)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();

  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(() => {
    llm.stop();
  });

  const send = (body: Record<string, unknown>) =>
    fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify(body),
    });
  const page = async (room: string) =>
    (await (await fetch(`${svc.url}/console/api/messages?room=${room}&after=0`)).json()) as {
      messages: (ConsoleMessage & { closed?: string | null })[];
      closed: { id: string; note: string | null }[];
    };
  const messages = async (room: string): Promise<ConsoleMessage[]> =>
    (
      (await (await fetch(`${svc.url}/console/api/messages?room=${room}&after=0`)).json()) as {
        messages: ConsoleMessage[];
      }
    ).messages;

  it('serves the page and the sample organisation out of the box', async () => {
    const page = await fetch(`${svc.url}/console`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Hisho コンソール');
    const state = (await (await fetch(`${svc.url}/console/api/state`)).json()) as {
      org: { name: string };
      members: { id: string }[];
      notice: string | null;
    };
    expect(state.org.name).toBe('株式会社アクメ');
    expect(state.members.map((m) => m.id)).toEqual(
      expect.arrayContaining(['tanaka-taro', 'tanaka-hanako', 'yamada-ichiro']),
    );
    expect(state.notice).toBeNull();
  });

  it('round trip: a member speaks, the brain replies in the room', async () => {
    llm.script(replyCall('田中さん、おはようウル！今日もよろしくウル🐺'));
    expect((await send({ memberId: 'tanaka-taro', text: 'おはよう', roomId: 'c-round' })).status).toBe(202);
    const msgs = await waitFor(
      async () => {
        const m = await messages('c-round');
        return m.length === 2 ? m : null;
      },
      8000,
      'reply',
    );
    expect(msgs[0]).toMatchObject({ role: 'user', name: '田中太郎', text: 'おはよう' });
    expect(msgs[1]).toMatchObject({ role: 'assistant', text: expect.stringContaining('おはようウル') });
    expect(JSON.stringify(llm.requests[0]!.messages)).toContain('田中太郎');
  });

  it('confirmation buttons: the console shows them and a click executes once; a stale click does not', async () => {
    llm.script(toolCall('create_task', { assignee: '田中花子', title: '出張の手配' }, { overall: 0.6 }));
    await send({ memberId: 'suzuki-kenji', text: '田中花子さんに出張の手配をお願い', roomId: 'c-confirm' });
    const q = await waitFor(
      async () => (await messages('c-confirm')).find((m) => m.role === 'assistant'),
      8000,
      'question',
    );
    expect(q.options).toHaveLength(2);
    const yes = q.options!.find((o) => o.answer === '1')!;
    expect(yes.key).toMatch(/^h1:[0-9a-f]{32}_a0$/);
    llm.script(replyCall('田中花子さんに出張の手配をお願いしたウル！'));
    expect((await send({ memberId: 'suzuki-kenji', text: yes.answer, key: yes.key, roomId: 'c-confirm' })).status).toBe(
      202,
    );
    await waitFor(async () => (await messages('c-confirm')).length === 4, 8000, 'report');
    expect(await svc.db.task.count({ where: { title: '出張の手配' } })).toBe(1);
    // The question now shows it was done, its buttons disabled.
    const closed = await waitFor(
      async () => {
        const r = await page('c-confirm');
        return r.closed.find((c) => c.id === q.id) ?? null;
      },
      8000,
      'question closed',
    );
    expect(closed.note).toMatch(/実行済み/);
    // The same button again (a page that had not caught up): the truth, to this clicker only; nothing more runs.
    const again = await send({ memberId: 'suzuki-kenji', text: yes.answer, key: yes.key, roomId: 'c-confirm' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { note: string }).note).toMatch(/もう実行済みウル: .*出張の手配/);
    await new Promise((r) => setTimeout(r, 500));
    expect(await messages('c-confirm')).toHaveLength(4);
    expect(await svc.db.task.count({ where: { title: '出張の手配' } })).toBe(1);
  });

  it('a text answer closes the buttons; a click after it, or on a cancelled one, is told privately', async () => {
    llm.script(toolCall('create_task', { assignee: '田中花子', title: '会議室の予約' }, { overall: 0.6 }));
    await send({ memberId: 'suzuki-kenji', text: '田中花子さんに会議室の予約をお願い', roomId: 'c-text' });
    const q = await waitFor(
      async () => (await messages('c-text')).find((m) => m.role === 'assistant'),
      8000,
      'question',
    );
    llm.script(replyCall('田中花子さんに会議室の予約をお願いしたウル！'));
    await send({ memberId: 'suzuki-kenji', text: 'はい', roomId: 'c-text' });
    await waitFor(async () => (await messages('c-text')).length === 4, 8000, 'report');
    const closed = await waitFor(
      async () => {
        const r = await page('c-text');
        return r.closed.find((c) => c.id === q.id) ?? null;
      },
      8000,
      'question closed',
    );
    expect(closed.note).toMatch(/実行済み/);
    // The page reading the history afresh draws the question with its buttons closed.
    expect((await page('c-text')).messages.find((m) => m.id === q.id)).toMatchObject({
      closed: expect.stringMatching(/実行済み/),
      options: q.options,
    });
    const yes = q.options!.find((o) => o.answer === '1')!;
    const click = await send({ memberId: 'suzuki-kenji', text: '1', key: yes.key, roomId: 'c-text' });
    expect(((await click.json()) as { note: string }).note).toMatch(/もう実行済みウル/);
    expect(await svc.db.task.count({ where: { title: '会議室の予約' } })).toBe(1);

    // Cancelled by text, then clicked.
    llm.script(toolCall('create_task', { assignee: '田中花子', title: '名刺の発注' }, { overall: 0.6 }));
    await send({ memberId: 'suzuki-kenji', text: '田中花子さんに名刺の発注をお願い', roomId: 'c-text' });
    const q2 = await waitFor(
      async () => (await messages('c-text')).filter((m) => m.role === 'assistant')[2],
      8000,
      'second question',
    );
    await send({ memberId: 'suzuki-kenji', text: 'いいえ', roomId: 'c-text' });
    await waitFor(async () => (await messages('c-text')).length === 8, 8000, 'cancelled');
    const yes2 = q2.options!.find((o) => o.answer === '1')!;
    const late = await send({ memberId: 'suzuki-kenji', text: '1', key: yes2.key, roomId: 'c-text' });
    expect(((await late.json()) as { note: string }).note).toMatch(/取り消し済み/);
    expect(await svc.db.task.count({ where: { title: '名刺の発注' } })).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await messages('c-text')).toHaveLength(8);
  });

  it('rejects bad input clearly', async () => {
    expect((await send({ memberId: 'tanaka-taro', text: '' })).status).toBe(400);
    expect((await send({ memberId: 'nobody', text: 'hi' })).status).toBe(404);
    expect((await send({ memberId: 'tanaka-taro', text: 'hi', key: 'forged' })).status).toBe(400);
  });
});

describe('console without ANTHROPIC_API_KEY', () => {
  it('starts, says what to set, and answers with the setup hint', async () => {
    const svc = await startTestService({ ANTHROPIC_API_KEY: '' });
    try {
      const state = (await (await fetch(`${svc.url}/console/api/state`)).json()) as { notice: string };
      expect(state.notice).toContain('ANTHROPIC_API_KEY');
      await fetch(`${svc.url}/console/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: svc.url },
        body: JSON.stringify({ memberId: 'tanaka-taro', text: 'こんにちは' }),
      });
      const reply = await waitFor(
        () => svc.db.conversationMessage.findFirst({ where: { role: 'assistant' } }),
        8000,
        'hint',
      );
      expect(reply.text).toContain('ANTHROPIC_API_KEY');
    } finally {
      await svc.close();
    }
  });
});

describe('console announcements', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });

  it('an approved announcement appears in the console room once', async () => {
    const room = 'c-announce';
    const send = (text: string) =>
      fetch(`${svc.url}/console/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: svc.url },
        body: JSON.stringify({ memberId: 'yamada-ichiro', text, roomId: room }),
      });
    const bot = () =>
      svc.db.conversationMessage.findMany({
        where: { platform: 'console', roomId: room, role: 'assistant' },
        orderBy: { id: 'asc' },
      });
    llm.script(
      toolCall('announce', { recipients: ['田中太郎', '佐藤美咲', '鈴木健二'], message: '金曜は全社会議です' }),
    );
    await send('3人に金曜は全社会議って知らせて');
    await waitFor(async () => (await bot()).length === 1, 8000, 'first confirmation');
    await send('はい');
    await waitFor(async () => (await bot()).length === 2, 8000, 'second confirmation');
    llm.script(replyCall('3人に知らせたウル！🐺'));
    await send('はい');
    const msgs = await waitFor(
      async () => {
        const m = await bot();
        return m.length === 4 ? m : null;
      },
      8000,
      'announcement and report',
    );
    expect(msgs.filter((m) => m.text === '金曜は全社会議です')).toHaveLength(1);
    expect(msgs.at(-1)!.text).toContain('知らせた');
  });
});
