import { addDays, formatYMD, localDate, parseYMD } from '../../src/core/zoned-time';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import {
  FAKE_BOT,
  FAKE_CHANNEL_ID,
  FAKE_GUILD_ID,
  startFakeDiscord,
  type Click,
  type FakeDiscord,
  type PostedMessage,
} from '../fakes/discord-server';
import { TANAKA, YAMADA, discordDirectory } from '../helpers/discord';
import { startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 44's 「変更する」 through the service's real discord.js client against the local Discord-compatible server:
 * the button opens a form (modal) with the pending task's values; a submitted change goes through the same path as a
 * typed one (the Guardian and the Gate again, the diff shown, a new round); a change the Gate refuses is refused;
 * only the requester may open it; a decided confirmation's form says privately that it is closed.
 */
describe('Discord: 「変更する」 on a confirmation (real discord.js client, local server)', () => {
  let discord: FakeDiscord;
  let svc: TestService;
  const llm = new FakeAnthropic();
  const mention = `<@${FAKE_BOT.id}>`;
  const inDays = (n: number) => formatYMD(addDays(parseYMD(localDate(new Date(), 'Asia/Tokyo'))!, n));

  beforeAll(async () => {
    discord = await startFakeDiscord();
    svc = await startTestService({
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_BASE_URL: discord.apiBaseUrl,
      CONSOLE_ENABLED: 'false',
      ORG_DIRECTORY_FILE: discordDirectory(FAKE_GUILD_ID, FAKE_CHANNEL_ID),
    });
    await waitFor(() => discord.readySessions === 1, 10000, 'gateway session');
    await waitFor(() => discord.commands.length === 2, 10000, 'commands registered');
  }, 30000);
  afterAll(async () => {
    await svc.close();
    await discord.stop();
    llm.stop();
  });

  const buttons = (m: PostedMessage) => m.components.flatMap((r) => r.components);
  const button = (m: PostedMessage, label: string) => buttons(m).find((b) => b.label === label)!.custom_id!;
  const callback = (c: Click) => discord.interactionResponses.find((r) => r.interactionId === c.interactionId);
  const settle = () => new Promise((r) => setTimeout(r, 700));
  const pendingOf = (title: string) =>
    svc.db.pendingAction
      .findMany({ where: { roomId: FAKE_CHANNEL_ID }, orderBy: { createdAt: 'asc' } })
      .then((rows) => rows.filter((r) => JSON.stringify(r.proposal).includes(title)));

  /** Tanaka (level 3, 東京営業課) asks for a task for 渡辺翔 (his section) with a due date: a question with buttons. */
  async function askQuestion(title: string, due: string): Promise<PostedMessage> {
    llm.script(toolCall('create_task', { assignee: '渡辺翔', title, due }, { overall: 0.6 }));
    const before = discord.posted.length;
    discord.say({ author: TANAKA, content: `${mention} 渡辺さんに${title}をお願い`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.posted.length > before, 10000, 'confirmation question');
    const question = discord.posted.at(-1)!;
    expect(buttons(question).map((b) => b.label)).toEqual(['承認', 'キャンセル', '変更する']);
    const delivered = { platformMessageId: question.id, status: 'sent' };
    await waitFor(() => svc.db.outboundMessage.findFirst({ where: delivered }), 5000, 'question delivered');
    return question;
  }

  /** Clicks 「変更する」 and returns the form Discord shows. */
  async function openForm(user: typeof TANAKA, q: PostedMessage) {
    const c = discord.click({ user, messageId: q.id, customId: button(q, '変更する') });
    await waitFor(() => callback(c), 3000, 'first response');
    return { click: c, modal: discord.modals.find((m) => m.interactionId === c.interactionId) };
  }

  it('the form shows the values; a new due date is checked again, asked with the diff; approving runs it', async () => {
    const [first, changed] = [inDays(7), inDays(10)];
    const q = await askQuestion('見積書の再送', first);
    const { click, modal } = await openForm(TANAKA, q);
    expect(callback(click)!.type).toBe(9);
    expect(modal!.inputs.map((i) => [i.custom_id, i.label, i.value ?? ''])).toEqual([
      ['assignee', '担当', '渡辺翔'],
      ['title', '内容', '見積書の再送'],
      ['due', '期限', first],
    ]); // the note was not in the question: not offered

    const before = discord.posted.length;
    const submitted = discord.submitModal({ modal: modal!, user: TANAKA, values: { due: changed } });
    await waitFor(() => discord.posted.length > before, 10000, 'the new question');
    expect(callback(submitted)!.type).toBe(6);
    const again = discord.posted.at(-1)!;
    expect(again.content).toContain('【変更点】');
    expect(again.content).toContain('見積書の再送');
    expect(buttons(again).map((b) => b.label)).toEqual(['承認', 'キャンセル', '変更する']);
    // No model was asked for the change: the form's values are the call (the model has nothing scripted here).
    const rows = await pendingOf('見積書の再送');
    expect(rows.map((r) => r.status)).toEqual(['cancelled', 'pending']);
    expect((rows[1]!.proposal as { parameters: Record<string, unknown> }).parameters).toMatchObject({
      assignee: '渡辺翔',
      due: changed,
    });
    // The first question's buttons are gone (it can no longer be answered).
    await waitFor(() => discord.originalEdits.find((e) => e.token === submitted.token), 5000, 'buttons removed');

    llm.script(replyCall('渡辺翔さんに見積書の再送をお願いしたウル！🐺'));
    discord.click({ user: TANAKA, messageId: again.id, customId: button(again, '承認') });
    await waitFor(() => discord.lastPostContaining('見積書の再送をお願いしたウル'), 10000, 'report');
    const task = await svc.db.task.findFirst({ where: { title: '見積書の再送' } });
    expect(task?.dueAt).toBeTruthy();
    expect(localDate(task!.dueAt!, 'Asia/Tokyo')).toBe(changed);
  });

  it('a change the Gate refuses (an assignee outside Tanaka’s scope) is refused: no question, no task', async () => {
    const q = await askQuestion('経費精算の確認', inDays(5));
    const { modal } = await openForm(TANAKA, q);
    const [before, asked] = [discord.posted.length, llm.requests.length];
    discord.submitModal({ modal: modal!, user: TANAKA, values: { assignee: '佐藤美咲' } });
    await waitFor(() => discord.posted.length > before, 10000, 'the answer');
    const answer = discord.posted.at(-1)!;
    expect(answer.components).toEqual([]);
    expect(answer.content).toMatch(/権限ではできない.*受け付けなかった/);
    expect(llm.requests.length).toBe(asked); // said from the template: the model never proposed this call
    // The turn record says the Gate decided it.
    const denied = { decision: 'DENIED', model: 'form' };
    const record = await waitFor(() => svc.db.turnRecord.findFirst({ where: denied }), 5000, 'turn record');
    expect(record).toMatchObject({ authResult: 'DENIED', authReason: 'Z_OUT_OF_SCOPE_USER', model: 'form' });
    const rows = await pendingOf('経費精算の確認');
    expect(rows.map((r) => r.status)).toEqual(['cancelled']);
    expect(await svc.db.task.count({ where: { title: '経費精算の確認' } })).toBe(0);
  });

  it('someone else’s 「変更する」: told privately it is not theirs, no form; the requester still can', async () => {
    const q = await askQuestion('名刺の追加発注', inDays(3));
    const stranger = await openForm(YAMADA, q);
    expect(stranger.modal).toBeUndefined();
    expect(callback(stranger.click)).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(String(callback(stranger.click)!.data!.content)).toMatch(/依頼した方だけ/);
    const own = await openForm(TANAKA, q);
    expect(own.modal).toBeDefined();
    // Submitted without a change: told privately, the question stays as it is.
    const posts = discord.posted.length;
    const same = discord.submitModal({ modal: own.modal!, user: TANAKA, values: {} });
    const note = await waitFor(() => discord.followUps.find((f) => f.token === same.token), 10000, 'note');
    expect(note).toMatchObject({ ephemeral: true, content: expect.stringMatching(/どの項目も変わっていなかった/) });
    await settle();
    expect(discord.posted.length).toBe(posts);
    expect((await pendingOf('名刺の追加発注')).map((r) => r.status)).toEqual(['pending']);
    // Tanaka cancels it (the next test asks a new question in the same conversation).
    const before = discord.posted.length;
    discord.say({ author: TANAKA, content: 'いいえ', replyTo: q.id });
    await waitFor(() => discord.posted.length > before, 10000, 'cancellation');
  });

  it('after the confirmation was decided: the button and a form left open say privately it is closed', async () => {
    const q = await askQuestion('会議室の予約', inDays(4));
    const { modal } = await openForm(TANAKA, q); // opened before the answer
    const before = discord.posted.length;
    discord.say({ author: TANAKA, content: 'いいえ', replyTo: q.id });
    await waitFor(() => discord.posted.length > before, 10000, 'cancellation');
    const after = discord.posted.length;

    const late = await openForm(TANAKA, q);
    expect(late.modal).toBeUndefined();
    expect(callback(late.click)).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(String(callback(late.click)!.data!.content)).toMatch(/取り消し済み/);

    const submitted = discord.submitModal({ modal: modal!, user: TANAKA, values: { due: inDays(6) } });
    const note = await waitFor(() => discord.followUps.find((f) => f.token === submitted.token), 10000, 'note');
    expect(note.ephemeral).toBe(true);
    expect(note.content).toMatch(/取り消し済み/);
    await settle();
    expect(discord.posted.length).toBe(after);
    expect((await pendingOf('会議室の予約')).map((r) => r.status)).toEqual(['cancelled']);
  });

  it('a question asked privately (/hisho): its form and the new question stay private', async () => {
    const before = discord.posted.length;
    llm.script(
      toolCall('create_task', { assignee: '渡辺翔', title: '備品リストの更新', due: inDays(8) }, { overall: 0.6 }),
    );
    const c = discord.slash({ user: TANAKA, options: { request: '渡辺さんに備品リストの更新をお願い' } });
    const question = await waitFor(() => discord.followUps.find((f) => f.token === c.token), 10000, 'question');
    expect(question.ephemeral).toBe(true);
    const delivered = { platformMessageId: question.id, status: 'sent' };
    await waitFor(() => svc.db.outboundMessage.findFirst({ where: delivered }), 5000, 'question delivered');
    const edit = question.components.flatMap((r) => r.components).find((b) => b.label === '変更する')!;
    const click = discord.click({ user: TANAKA, messageId: question.id, customId: edit.custom_id! });
    const modal = await waitFor(
      () => discord.modals.find((m) => m.interactionId === click.interactionId),
      3000,
      'form',
    );

    const submitted = discord.submitModal({ modal, user: TANAKA, values: { due: inDays(11) } });
    const again = await waitFor(
      () => discord.followUps.find((f) => f.token === submitted.token),
      10000,
      'new question',
    );
    expect(again.ephemeral).toBe(true);
    expect(again.content).toContain('【変更点】');
    await settle();
    expect(discord.posted.length).toBe(before);
  });
});
