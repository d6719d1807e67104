import type { ContextSource } from '../../src/context/context-builder';
import path from 'node:path';
import type { InboundMessage } from '../../src/core/chat';
import { goalsSource } from '../../src/context/sources/goals.source';
import { memoriesSource, overlapTokens } from '../../src/context/sources/memories.source';
import type { SenderProfile } from '../../src/context/types';
import type { Db } from '../../src/db/prisma';
import { importDirectoryFile } from '../../src/org/import-directory';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const NOW = new Date('2026-11-20T01:00:00.000Z');

function msg(text: string): InboundMessage {
  return {
    platform: 'console',
    orgId: 'acme',
    roomId: 'console-general',
    senderAccountId: 'x',
    text,
    rawText: text,
    mentions: [],
    platformMessageId: `p-${text.length}`,
    sentAt: NOW.toISOString(),
  };
}

function sender(memberId: string | null, level = 2): SenderProfile {
  return {
    known: memberId !== null,
    memberId,
    name: memberId ?? '不明',
    level,
    departmentId: null,
    departmentName: null,
    title: null,
    preferences: {},
  };
}

describe('goals and memories context sources', () => {
  let t: TestDatabase;
  let db: Db;
  const load = (src: ContextSource, who: SenderProfile, text = 'こんにちは') =>
    src.load({ db, msg: msg(text), sender: who, now: NOW, timezone: 'Asia/Tokyo' });

  beforeAll(async () => {
    t = await createTestDatabase();
    db = t.db;
    await importDirectoryFile(db, path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml'));
  });
  afterAll(async () => {
    await t.close();
  });

  describe('goalsSource', () => {
    beforeAll(async () => {
      const at = (n: number) => new Date(Date.UTC(2026, 0, n));
      await db.goal.createMany({
        data: [
          { id: 'g-new', orgId: 'acme', memberId: 'ito-yui', title: '英語学習', status: 'active', createdAt: at(3) },
          {
            id: 'g-old',
            orgId: 'acme',
            memberId: 'ito-yui',
            title: 'AWS資格',
            status: 'active',
            targetDate: new Date('2026-12-31T14:59:59Z'),
            createdAt: at(1),
          },
          { id: 'g-done', orgId: 'acme', memberId: 'ito-yui', title: '達成済み', status: 'achieved', createdAt: at(2) },
          {
            id: 'g-other',
            orgId: 'acme',
            memberId: 'takahashi-ryo',
            title: '他人の目標',
            status: 'active',
            createdAt: at(1),
          },
        ],
      });
      const task = (goalId: string, status: string) => ({
        orgId: 'acme',
        title: 't',
        assigneeMemberId: 'ito-yui',
        goalId,
        status,
      });
      await db.task.createMany({
        data: [task('g-old', 'done'), task('g-old', 'done'), task('g-old', 'open'), task('g-other', 'done')],
      });
    });

    it("lists the sender's active goals, oldest first, with completion rate and target date", async () => {
      const section = await load(goalsSource, sender('ito-yui'));
      expect(section?.lines).toEqual([
        '[g-old] 「AWS資格」 — 完了率 67% (2/3)、期限 2026-12-31',
        '[g-new] 「英語学習」 — タスク未設定',
      ]);
    });

    it('is null without goals or for unknown senders', async () => {
      expect(await load(goalsSource, sender('watanabe-sho'))).toBeNull();
      expect(await load(goalsSource, sender(null))).toBeNull();
    });
  });

  describe('memoriesSource', () => {
    beforeAll(async () => {
      await db.organization.create({ data: { id: 'other', name: 'Other' } });
      await db.memory.createMany({
        data: [
          {
            orgId: 'acme',
            kind: 'preference',
            subjectMemberId: 'yamada-ichiro',
            content: 'コーヒー派',
            createdByMemberId: 'yamada-ichiro',
          },
          {
            orgId: 'acme',
            kind: 'person',
            subjectMemberId: 'yamada-ichiro',
            content: '朝は会議が多い',
            createdByMemberId: 'sato-misaki',
          },
          { orgId: 'acme', kind: 'fact', content: '経費精算の締めは毎月25日', createdByMemberId: 'sato-misaki' },
          { orgId: 'acme', kind: 'fact', content: '社員旅行は春に行く', createdByMemberId: 'sato-misaki' },
          {
            orgId: 'acme',
            kind: 'person',
            subjectMemberId: 'tanaka-taro',
            content: '経費精算が遅れがち',
            createdByMemberId: 'yamada-ichiro',
          },
          {
            orgId: 'acme',
            kind: 'fact',
            subjectMemberId: 'ito-yui',
            content: '伊藤さんは経費精算の担当',
            createdByMemberId: 'yamada-ichiro',
          },
          { orgId: 'other', kind: 'fact', content: '経費精算は月末締め' },
        ],
      });
    });

    it('gives memories about the sender and facts sharing a bigram with the message, never other people', async () => {
      const section = await load(memoriesSource, sender('yamada-ichiro', 6), '経費精算っていつまでだっけ？');
      expect(section?.lines.sort()).toEqual(
        [
          '(好み) 「コーヒー派」',
          '(本人について) 「朝は会議が多い」',
          '(組織の事実) 「経費精算の締めは毎月25日」',
        ].sort(),
      );
    });

    it('leaves out unrelated facts, and is null when nothing fits', async () => {
      expect(await load(memoriesSource, sender('watanabe-sho'), 'よろしくお願いします')).toBeNull();
      expect((await load(memoriesSource, sender('watanabe-sho'), '社員旅行の予定は？'))?.lines).toEqual([
        '(組織の事実) 「社員旅行は春に行く」',
      ]);
      expect(await load(memoriesSource, sender(null), '経費精算')).toBeNull();
    });

    it('returns at most 8', async () => {
      await db.memory.createMany({
        data: Array.from({ length: 12 }, (_, i) => ({ orgId: 'acme', kind: 'fact', content: `締め切り情報${i}` })),
      });
      const section = await load(memoriesSource, sender('yamada-ichiro', 6), '締め切りはいつ？');
      expect(section?.lines).toHaveLength(8);
      expect(section?.lines.slice(0, 2).sort()).toEqual(
        ['(好み) 「コーヒー派」', '(本人について) 「朝は会議が多い」'].sort(),
      );
    });

    it('tokenises Japanese into bigrams without hiragana-only pairs, and Latin into words', () => {
      expect([...overlapTokens('経費精算して AWS')].sort()).toEqual(['aws', '精算', '算し', '経費', '費精'].sort());
    });
  });
});
