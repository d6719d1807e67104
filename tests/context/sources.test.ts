import type { InboundMessage } from '../../src/core/chat';
import { loadDirectory } from '../../src/authorization/directory';
import { personsSource } from '../../src/context/sources/persons.source';
import { formatDueJa, tasksSource } from '../../src/context/sources/tasks.source';
import type { SenderProfile } from '../../src/context/types';
import type { Db } from '../../src/db/prisma';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { NOW, seedSample } from '../handlers/tool-context';

const TZ = 'Asia/Tokyo';

function message(text: string): InboundMessage {
  return {
    platform: 'console',
    orgId: 'acme',
    roomId: 'console-general',
    senderAccountId: 'suzuki-kenji',
    text,
    rawText: text,
    mentions: [],
    platformMessageId: `m-${Math.random()}`,
    sentAt: NOW.toISOString(),
  };
}

function sender(memberId: string | null, name = '鈴木健二'): SenderProfile {
  return {
    known: memberId !== null,
    memberId,
    name,
    level: 4,
    departmentId: 'sales',
    departmentName: '営業部',
    title: null,
    preferences: {},
  };
}

describe('context sources', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());

  describe('persons', () => {
    const load = async (text: string) =>
      personsSource.load({ db: t.db, msg: message(text), sender: sender('suzuki-kenji'), now: NOW, timezone: TZ });

    it('lists the member named in full, without the shorter alias matching both 田中', async () => {
      expect(personsSource.name).toBe('persons');
      const s = await load('田中太郎さんに見積書のタスクをお願い');
      expect(s?.lines).toEqual(['田中太郎（id: tanaka-taro、東京営業課）']);
      expect(s?.title).toBeTruthy();
    });

    it('lists both 田中 and says 田中さん is ambiguous', async () => {
      const s = await load('田中さんに明日までに資料を送るよう伝えて');
      expect(s?.lines).toEqual([
        '田中花子（id: tanaka-hanako、大阪営業課）',
        '田中太郎（id: tanaka-taro、東京営業課）',
        '注意: 「田中さん」に当てはまる人が2人います（田中花子（id: tanaka-hanako、大阪営業課）、田中太郎（id: tanaka-taro、東京営業課））。どの方か分からないときは本人に確認すること。',
      ]);
    });

    it('finds people written in Latin letters by their readings: "Tanaka" is both 田中, "Taro Tanaka" one', async () => {
      const s = await load('Please give Tanaka the report task');
      expect(s?.lines).toEqual([
        '田中花子（id: tanaka-hanako、大阪営業課）',
        '田中太郎（id: tanaka-taro、東京営業課）',
        '注意: 「tanaka」に当てはまる人が2人います（田中花子（id: tanaka-hanako、大阪営業課）、' +
          '田中太郎（id: tanaka-taro、東京営業課））。どの方か分からないときは本人に確認すること。',
      ]);
      expect((await load('Ask Taro Tanaka-san to call me'))?.lines).toEqual([
        '田中太郎（id: tanaka-taro、東京営業課）',
      ]);
      expect(await load('Take a data tour')).toBeNull();
    });

    it('matches aliases with honorifics, several people, and full-width/space variants', async () => {
      const s = await load('社長と 佐藤 部長 と太郎さんに共有');
      expect(s?.lines).toEqual([
        '佐藤美咲（id: sato-misaki、管理部）',
        '田中太郎（id: tanaka-taro、東京営業課）',
        '山田一郎（id: yamada-ichiro、経営）',
      ]);
    });

    it('never lists members of a top-secret department the sender may not see', async () => {
      await t.db.department.create({
        data: { orgId: 'acme', id: 'ma-office', name: 'M&A準備室', parentId: 'exec', topSecret: true },
      });
      await t.db.member.create({
        data: {
          orgId: 'acme',
          id: 'kimura-ken',
          name: '木村健',
          aliases: ['木村さん'],
          level: 4,
          departmentId: 'ma-office',
        },
      });
      try {
        expect(await load('木村さんと田中太郎さんに共有')).toMatchObject({
          lines: ['田中太郎（id: tanaka-taro、東京営業課）'],
        });
        const ceo = { ...sender('yamada-ichiro', '山田一郎'), level: 6, departmentId: 'exec' };
        const s = await personsSource.load({
          db: t.db,
          msg: message('木村さんに共有'),
          sender: ceo,
          now: NOW,
          timezone: TZ,
        });
        expect(s?.lines).toEqual(['木村健（id: kimura-ken、M&A準備室）']);

        // One cached directory serves both senders (its name index is built once): neither sees the other's view.
        const cached = await loadDirectory(t.db, 'acme');
        const fromCache = (who: SenderProfile) =>
          personsSource.load({
            db: {} as Db, // the cache is all it reads: no statement per turn
            msg: message('木村さんと田中太郎さんに共有'),
            sender: who,
            now: NOW,
            timezone: TZ,
            directory: async () => cached,
          });
        for (let i = 0; i < 2; i++) {
          expect((await fromCache(ceo))?.lines).toEqual([
            '木村健（id: kimura-ken、M&A準備室）',
            '田中太郎（id: tanaka-taro、東京営業課）',
          ]);
          expect((await fromCache(sender('suzuki-kenji')))?.lines).toEqual(['田中太郎（id: tanaka-taro、東京営業課）']);
        }
      } finally {
        await t.db.member.delete({ where: { orgId_id: { orgId: 'acme', id: 'kimura-ken' } } });
        await t.db.department.delete({ where: { orgId_id: { orgId: 'acme', id: 'ma-office' } } });
      }
    });

    it('never shows levels or accounts, and returns null when nobody is named', async () => {
      const s = await load('鈴木さんと伊藤さん');
      expect(JSON.stringify(s)).not.toMatch(/level|1003|1007|chatwork/i);
      expect(await load('こんにちは、今日の予定は？')).toBeNull();
      expect(await load('昨日は会議がなかった、したなかったこともある')).toBeNull();
      expect((await load('たなかに伝えて'))?.lines).toEqual(['田中太郎（id: tanaka-taro、東京営業課）']);
      expect(await load('a')).toBeNull();
    });

    it('names room members the directory lacks (never directory members, the sender, or any authority)', async () => {
      const room = [
        { accountId: '1004', name: '田中 太郎' },
        { accountId: '1003', name: '鈴木 健二' },
        { accountId: '2001', name: '山本 京子' },
        { accountId: '2002', name: 'Lee Min' },
        { accountId: '2003', name: '田中太郎' },
      ];
      const cw = (text: string, from = '1003') =>
        personsSource.load({
          db: t.db,
          msg: { ...message(text), platform: 'chatwork', roomId: '5001', senderAccountId: from },
          sender: sender('suzuki-kenji'),
          now: NOW,
          timezone: TZ,
          roomMembers: room,
        });
      const guest = '「山本 京子」さん（このルームのメンバー、ディレクトリ未登録）';
      const s = await cw('山本さんと田中太郎さんに共有して');
      expect(s?.title).toBe('メッセージに出てくる人物（組織名簿とこのルームのメンバー）');
      // 1004 is tanaka-taro's ChatWork account and 2003 bears a directory member's name: neither is a guest.
      expect(s?.lines).toEqual(['田中太郎（id: tanaka-taro、東京営業課）', guest]);
      expect((await cw('山本京子さんとlee minさんは？'))?.lines).toEqual([
        guest,
        '「Lee Min」さん（このルームのメンバー、ディレクトリ未登録）',
      ]);
      // The sender is not listed as a guest of their own message; nobody named → nothing.
      expect(await cw('山本です、よろしく', '2001')).toBeNull();
      expect(await cw('こんにちは')).toBeNull();
    });
  });

  describe('open_tasks', () => {
    const load = async (memberId: string | null) =>
      tasksSource.load({ db: t.db, msg: message('タスクは？'), sender: sender(memberId), now: NOW, timezone: TZ });

    beforeAll(async () => {
      await t.db.task.deleteMany();
      const base = { orgId: 'acme' };
      await t.db.task.createMany({
        data: [
          {
            ...base,
            id: 'own-nodue',
            title: '期限なしの作業',
            assigneeMemberId: 'suzuki-kenji',
            createdByMemberId: 'yamada-ichiro',
          },
          {
            ...base,
            id: 'own-late',
            title: '請求書の確認',
            assigneeMemberId: 'suzuki-kenji',
            dueAt: new Date('2026-11-18T14:59:59Z'),
          },
          {
            ...base,
            id: 'own-soon',
            title: '会議資料',
            assigneeMemberId: 'suzuki-kenji',
            dueAt: new Date('2026-11-24T06:00:00Z'),
          },
          { ...base, id: 'own-done', title: '完了済み', assigneeMemberId: 'suzuki-kenji', status: 'done' },
          {
            ...base,
            id: 'given-1',
            title: '見積書を送る',
            assigneeMemberId: 'tanaka-taro',
            createdByMemberId: 'suzuki-kenji',
            dueAt: new Date('2026-11-25T14:59:59Z'),
          },
          {
            ...base,
            id: 'given-done',
            title: '終わった依頼',
            assigneeMemberId: 'tanaka-taro',
            createdByMemberId: 'suzuki-kenji',
            status: 'done',
          },
          {
            ...base,
            id: 'other',
            title: '他人のタスク',
            assigneeMemberId: 'ito-yui',
            createdByMemberId: 'takahashi-ryo',
          },
        ],
      });
    });

    it("lists the sender's open tasks due first, then tasks they gave to others", async () => {
      expect(tasksSource.name).toBe('open_tasks');
      const s = await load('suzuki-kenji');
      expect(s?.lines).toEqual([
        'あなたが担当する未完了タスク（3件）:',
        '- 「請求書の確認」（id: own-late、期限 11/18(水)、期限切れ）',
        '- 「会議資料」（id: own-soon、期限 11/24(火) 15:00）',
        '- 「期限なしの作業」（id: own-nodue、期限なし）',
        'あなたが依頼した未完了タスク（1件）:',
        '- 「見積書を送る」（担当: 田中太郎、id: given-1、期限 11/25(水)）',
      ]);
      expect(JSON.stringify(s)).not.toContain('他人のタスク');
    });

    it('caps the own list at 10 with a count of the rest', async () => {
      await t.db.task.createMany({
        data: Array.from({ length: 12 }, (_, i) => ({
          orgId: 'acme',
          id: `bulk-${i}`,
          title: `作業${i}`,
          assigneeMemberId: 'ito-yui',
        })),
      });
      const s = await load('ito-yui');
      expect(s?.lines[0]).toBe('あなたが担当する未完了タスク（13件）:');
      expect(s?.lines.filter((l) => l.startsWith('- '))).toHaveLength(10);
      expect(s?.lines).toContain('（ほか3件）');
    });

    it('returns null for a sender without open tasks and for unknown senders', async () => {
      expect(await load('sato-misaki')).toBeNull();
      expect(await load(null)).toBeNull();
    });

    it('formats dues in Japanese with the year only when it differs', () => {
      expect(formatDueJa(new Date('2027-01-05T14:59:59Z'), NOW, TZ)).toBe('期限 2027/1/5(火)');
      expect(formatDueJa(null, NOW, TZ)).toBe('期限なし');
    });
  });
});
