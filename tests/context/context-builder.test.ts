import type { InboundMessage } from '../../src/core/chat';
import { ContextBuilder } from '../../src/context/context-builder';
import { personsSource } from '../../src/context/sources/persons.source';
import { defineSqlSource } from '../../src/context/sql-source';
import type { SenderProfile } from '../../src/context/types';
import { silentLogger } from '../../src/observability/logger';
import { importDirectoryFile } from '../../src/org/import-directory';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const msg = (text: string): InboundMessage => ({
  platform: 'console',
  orgId: 'acme',
  roomId: 'r1',
  senderAccountId: 'tanaka-taro',
  text,
  rawText: text,
  mentions: [],
  platformMessageId: `m-${text}`,
  sentAt: new Date().toISOString(),
});
const sender: SenderProfile = {
  known: true,
  memberId: 'tanaka-taro',
  name: '田中太郎',
  level: 3,
  departmentId: 'sales-tokyo',
  departmentName: '東京営業課',
  title: null,
  preferences: {},
};

describe('ContextBuilder', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await importDirectoryFile(t.db, 'config/org.sample.yaml');
    await t.db.conversationMessage.createMany({
      data: [
        {
          orgId: 'acme',
          platform: 'console',
          roomId: 'r1',
          accountId: 'tanaka-taro',
          role: 'user',
          text: '前の質問',
          platformMessageId: 'old',
          sentAt: new Date(),
        },
        {
          orgId: 'acme',
          platform: 'console',
          roomId: 'r1',
          accountId: 'tanaka-taro',
          role: 'assistant',
          text: '前の答え',
          sentAt: new Date(),
        },
      ],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('reads history, organisation, policies and sources, and renders them', async () => {
    const cb = new ContextBuilder({
      db: t.db,
      logger: silentLogger(),
      defaultTimezone: 'Asia/Tokyo',
      sources: [personsSource],
    });
    const ctx = await cb.build({
      msg: msg('鈴木さんに聞いて'),
      sender,
      room: { platform: 'console', roomId: 'r1', name: null, authority: 'member' },
      now: new Date('2026-11-22T01:00:00Z'),
    });
    expect(ctx.history.map((h) => h.text)).toEqual(['前の質問', '前の答え']);
    expect(ctx.org.name).toBe('株式会社アクメ');
    expect(ctx.policies.length).toBeGreaterThan(0);
    expect(ctx.sections.map((s) => s.lines.join())).toEqual([expect.stringContaining('鈴木健二')]);
    expect(ctx.nowText).toBe('2026年11月22日(日) 10:00 (Asia/Tokyo)');
    expect(ctx.degraded).toEqual([]);
  });

  it('adds the business calendar line with the organisation closing days from the directory', async () => {
    const cb = new ContextBuilder({ db: t.db, logger: silentLogger(), defaultTimezone: 'Asia/Tokyo' });
    const build = (now: string) =>
      cb.build({
        msg: msg('年明けの予定は？'),
        sender,
        room: { platform: 'console', roomId: 'r1', name: null, authority: 'member' },
        now: new Date(now),
      });
    expect((await build('2026-11-22T01:00:00Z')).calendarText).toBe(
      '今日 11/22（日）は休日（日曜日）。次の営業日: 11/24（火）。今後14日の祝日・休業日: 11/23（月）勤労感謝の日',
    );
    // 23:30 JST on Christmas Friday: still Friday; the sample directory closes 12/29–1/3.
    expect((await build('2026-12-25T14:30:00Z')).calendarText).toBe(
      '今日 12/25（金）は営業日。次の営業日: 12/28（月）。今後14日の祝日・休業日: 12/29（火）〜1/3（日）年末年始休業',
    );
  });

  it('a failing source degrades only itself (R-X2)', async () => {
    const broken = defineSqlSource<unknown>({
      name: 'broken',
      query: '(SELECT no_such_column FROM members WHERE "orgId" = $1 AND id = $2)',
      render: () => ({ title: 'x', lines: ['x'] }),
    });
    const cb = new ContextBuilder({
      db: t.db,
      logger: silentLogger(),
      defaultTimezone: 'Asia/Tokyo',
      sources: [broken, personsSource],
    });
    const ctx = await cb.build({
      msg: msg('鈴木さんに聞いて'),
      sender,
      room: { platform: 'console', roomId: 'r1', name: null, authority: 'member' },
      now: new Date(),
    });
    expect(ctx.degraded).toEqual(['broken']);
    expect(ctx.history).toHaveLength(2);
    expect(ctx.sections.map((s) => s.lines.join())).toEqual([expect.stringContaining('鈴木健二')]);
  });

  it.each([
    ['a known member in a public room', sender, 'public' as const],
    [
      'a stranger in a DM (level 0)',
      { ...sender, known: false, memberId: null, name: 'stranger', level: 0, departmentId: null, departmentName: null },
      'member' as const,
    ],
  ])(
    '%s is a public audience: no directory, task, goal or memory data is read (issue 8)',
    async (_name, who, authority) => {
      const cb = new ContextBuilder({
        db: t.db,
        logger: silentLogger(),
        defaultTimezone: 'Asia/Tokyo',
        sources: [personsSource],
      });
      const ctx = await cb.build({
        msg: msg('鈴木さんと田中さんの連絡先を教えて'),
        sender: who,
        room: { platform: 'console', roomId: 'r1', name: null, authority },
        now: new Date(),
      });
      expect(ctx.audience).toBe('public');
      expect(ctx.sections).toEqual([]);
      expect(JSON.stringify(ctx)).not.toContain('鈴木健二');
    },
  );
});
