import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { InboundMessage } from '../../src/core/chat';
import { knowledgeReaderScope, mayReadKnowledge } from '../../src/authorization/knowledge-access';
import { SCOPE_FIELDS } from '../../src/authorization/scope';
import { ContextBuilder } from '../../src/context/context-builder';
import { defineSqlSource } from '../../src/context/sql-source';
import { TURN_CONTEXT_SOURCES } from '../../src/context/sources';
import { knowledgeSource } from '../../src/context/sources/knowledge.source';
import { silentLogger } from '../../src/observability/logger';
import type { SenderProfile } from '../../src/context/types';
import { sqlRunner, type Sql } from '../../src/db/sql';
import { knowledgeConfig } from '../../src/context/knowledge/config';
import { formatKnowledgeSummary, importKnowledge, type ImportSummary } from '../../src/context/knowledge/import';
import { focusWords, searchKnowledge } from '../../src/context/knowledge/search';
import { splitPassages } from '../../src/context/knowledge/passages';
import { passageTokens, searchWords } from '../../src/context/knowledge/tokens';
import { searchKnowledgeTool } from '../../handlers/knowledge';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { NOW, seedSample, toolContext } from '../handlers/tool-context';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'knowledge');
const config = { maxBytes: 4096, defaultLevel: 2 };

/** The fixture corpus copied to a temp folder, plus a Shift_JIS file and an oversize file made here. */
function corpus(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-knowledge-'));
  fs.cpSync(FIXTURES, dir, { recursive: true });
  // 「経費の精算について」 in Shift_JIS: not UTF-8.
  fs.writeFileSync(
    path.join(dir, '古い手順書.txt'),
    Buffer.from([
      0x8c, 0x6f, 0x94, 0xef, 0x82, 0xcc, 0x90, 0xb8, 0x8e, 0x5a, 0x82, 0xc9, 0x82, 0xc2, 0x82, 0xa2, 0x82, 0xc4,
    ]),
  );
  fs.writeFileSync(path.join(dir, '大きすぎる資料.md'), `# 大きすぎる資料\n\n${'経費の記録。'.repeat(1000)}\n`);
  fs.writeFileSync(path.join(dir, 'ロゴ.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  return dir;
}

function msgOf(text: string): InboundMessage {
  return {
    platform: 'console',
    orgId: 'acme',
    roomId: 'console-general',
    senderAccountId: 'x',
    text,
    rawText: text,
    mentions: [],
    platformMessageId: `m-${Math.random()}`,
    sentAt: NOW.toISOString(),
  };
}

function member(db: TestDatabase['db'], id: string) {
  return db.member.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id } } });
}

async function reader(db: TestDatabase['db'], id: string) {
  const m = await member(db, id);
  return { known: true, level: m.level, departmentId: m.departmentId };
}

describe('knowledge: import, search and reader filtering (R-X4)', () => {
  let t: TestDatabase;
  let dir: string;
  let first: ImportSummary;
  /** Every row the database returned to the search (to prove what never left it). */
  let returned: unknown[] = [];
  let sql: Sql;

  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
    dir = corpus();
    first = await importKnowledge(t.db, { orgId: 'acme', path: dir, config });
    const inner = sqlRunner(t.db);
    sql = async <T>(text: string, params?: unknown[]) => {
      const rows = await inner<T>(text, params);
      returned.push(...rows);
      return rows;
    };
  });
  afterAll(async () => t.close());
  beforeEach(() => {
    returned = [];
  });

  const search = async (who: string, query: string, limit = 5) =>
    searchKnowledge({ db: t.db, sql }, { orgId: 'acme', reader: await reader(t.db, who), query, limit });

  it('imports the Markdown and text files and skips the rest with path and reason', async () => {
    const rel = (p: string) => path.relative(dir, p);
    expect(first.added.map(rel).sort()).toEqual(
      ['就業規則.md', '役員会議事録.md', '社内FAQ.md', '経費精算の手順.md', path.join('総務', '備品管理.txt')].sort(),
    );
    expect(first.skipped.map((s) => [rel(s.path), s.reason]).sort()).toEqual([
      ['ロゴ.png', 'not a Markdown or text file (.md, .markdown, .txt)'],
      ['古い手順書.txt', 'not UTF-8 text'],
      ['大きすぎる資料.md', expect.stringMatching(/^larger than 4096 bytes \(\d+ bytes; KNOWLEDGE_MAX_BYTES\)$/)],
    ]);
    const docs = await t.db.knowledgeDocument.findMany({ orderBy: { title: 'asc' } });
    expect(docs.map((d) => [d.title, d.level, d.departmentId])).toEqual(
      expect.arrayContaining([
        ['就業規則', 1, null],
        ['経費精算の手順', 1, null],
        // No level in its front matter: the configured default.
        ['社内FAQ', 2, null],
        ['第12回役員会議事録', 5, null],
        // Department by name (管理部) stored as the directory's id.
        ['備品管理の手引き', 2, 'admin'],
      ]),
    );
    const passages = await t.db.knowledgePassage.findMany({ include: { document: true } });
    expect(passages.length).toBeGreaterThanOrEqual(15);
    expect(Math.max(...passages.map((p) => [...p.text].length))).toBeLessThanOrEqual(500);
    const leave = passages.find((p) => p.text.includes('10日の年次有給休暇'));
    expect(leave?.heading).toBe('就業規則 › 第2章 休暇 › 年次有給休暇');
    const summary = formatKnowledgeSummary(first, dir);
    expect(summary).toMatch(/^added 5, updated 0, unchanged 0, removed 0, skipped 3/);
    expect(summary).toContain('skipped    古い手順書.txt: not UTF-8 text');
  });

  it('a two-character query 経費 finds the expense passages', async () => {
    const hits = await search('watanabe-sho', '経費');
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.title === '経費精算の手順')).toBe(true);
    expect(hits.some((h) => h.text.includes('翌月5営業日まで'))).toBe(true);
  });

  it('a three-word query ranks the passage with all three words first', async () => {
    const hits = await search('watanabe-sho', '経費 申請 期限');
    expect(hits[0]).toMatchObject({ title: '経費精算の手順', heading: '経費精算の手順 › 申請の期限', wordsMatched: 3 });
    expect(hits[0]!.text).toContain('翌月5営業日まで');
    const leave = await search('watanabe-sho', '有給 申請 上長');
    expect(leave[0]).toMatchObject({ title: '就業規則', heading: '就業規則 › 第2章 休暇 › 年次有給休暇' });
    // Words run together in a sentence work the same (hiragana separates them).
    const sentence = await search('watanabe-sho', '在宅勤務は何日までできますか？');
    expect(sentence[0]!.text).toContain('週3日まで');
  });

  it('a level-1 reader never receives the level-5 document; a level-5 reader does', async () => {
    const low = await search('watanabe-sho', '大阪 統合 予算');
    expect(low.map((h) => h.title)).not.toContain('第12回役員会議事録');
    expect(JSON.stringify(returned)).not.toMatch(/役員会|統合|8000万円/);
    const high = await search('sato-misaki', '大阪 統合 予算');
    expect(high[0]).toMatchObject({ title: '第12回役員会議事録' });
    expect(high[0]!.text).toContain('東京営業課へ統合');
  });

  it('a department document is read by that department and those whose scope holds it, not by others', async () => {
    const query = '備品 台帳 返却';
    expect((await search('ito-yui', query)).map((h) => h.title)).not.toContain('備品管理の手引き');
    expect((await search('tanaka-hanako', query)).map((h) => h.title)).not.toContain('備品管理の手引き');
    expect((await search('sato-misaki', query))[0]?.title).toBe('備品管理の手引き');
    expect((await search('yamada-ichiro', query))[0]?.title).toBe('備品管理の手引き');
    // FAQ is level 2 (default): a level-1 contractor does not get it, a level-2 member does.
    expect((await search('watanabe-sho', 'VPN 接続')).map((h) => h.title)).not.toContain('社内FAQ');
    expect((await search('ito-yui', 'VPN 接続'))[0]?.title).toBe('社内FAQ');
  });

  it('the access rule: level, department by membership or scope, unknown and level 0 read nothing', async () => {
    const deps = await t.db.department.findMany({ where: { orgId: 'acme' }, select: SCOPE_FIELDS });
    const sales = { level: 1, departmentId: 'sales' };
    expect(mayReadKnowledge({ known: true, level: 1, departmentId: 'sales-tokyo' }, sales, deps)).toBe(true);
    expect(mayReadKnowledge({ known: true, level: 2, departmentId: 'sales-osaka' }, sales, deps)).toBe(true);
    expect(mayReadKnowledge({ known: true, level: 2, departmentId: 'dev' }, sales, deps)).toBe(false);
    expect(mayReadKnowledge({ known: true, level: 4, departmentId: 'dev' }, sales, deps)).toBe(false);
    expect(mayReadKnowledge({ known: true, level: 5, departmentId: 'dev' }, sales, deps)).toBe(true);
    expect(
      mayReadKnowledge({ known: true, level: 3, departmentId: 'sales' }, { level: 4, departmentId: null }, deps),
    ).toBe(false);
    expect(knowledgeReaderScope({ known: false, level: 1, departmentId: null }, deps)).toBeNull();
    expect(knowledgeReaderScope({ known: true, level: 0, departmentId: 'sales' }, deps)).toBeNull();
    expect(knowledgeReaderScope({ known: true, level: 7, departmentId: 'sales' }, deps)).toBeNull();
  });

  it('the search_knowledge tool returns titled passages with the same reader filtering', async () => {
    const low = await searchKnowledgeTool.handler({ query: '統合 予算' }, await toolContext(t.db, 'watanabe-sho'));
    expect(low.passages).toEqual([]);
    const high = await searchKnowledgeTool.handler({ query: '統合 予算' }, await toolContext(t.db, 'sato-misaki'));
    expect(high.passages[0]).toMatchObject({ title: '第12回役員会議事録', heading: expect.stringContaining('議題') });
    const expense = await searchKnowledgeTool.handler(
      { query: '経費 申請 期限' },
      await toolContext(t.db, 'watanabe-sho'),
    );
    expect(expense.passages[0]).toMatchObject({ title: '経費精算の手順' });
    expect(searchKnowledgeTool.output.safeParse(expense).success).toBe(true);
    await expect(searchKnowledgeTool.handler({ query: '経費' }, await toolContext(t.db, null))).rejects.toThrow(
      /known member/,
    );
    expect(searchKnowledgeTool).toMatchObject({ effects: [], risk: 'none', requiresConfirmation: false });
  });

  describe('context source', () => {
    const msg = (text: string): InboundMessage => ({
      platform: 'console',
      orgId: 'acme',
      roomId: 'console-general',
      senderAccountId: 'x',
      text,
      rawText: text,
      mentions: [],
      platformMessageId: `m-${Math.random()}`,
      sentAt: NOW.toISOString(),
    });
    const profile = async (id: string | null): Promise<SenderProfile> => {
      const m = id ? await member(t.db, id) : null;
      return {
        known: m !== null,
        memberId: m?.id ?? null,
        name: m?.name ?? 'unknown',
        level: m?.level ?? 1,
        departmentId: m?.departmentId ?? null,
        departmentName: null,
        title: null,
        preferences: {},
      };
    };
    const load = async (id: string | null, text: string) =>
      knowledgeSource.load({
        db: t.db,
        sql,
        msg: msg(text),
        sender: await profile(id),
        now: NOW,
        timezone: 'Asia/Tokyo',
      });

    it('puts the top 3 passages in the context as quoted data with their document title', async () => {
      const s = await load('watanabe-sho', '経費の申請期限はいつまで？');
      expect(s!.lines).toHaveLength(3);
      expect(s!.lines[0]).toMatch(
        /^文書「経費精算の手順」 見出し「経費精算の手順 › 申請の期限」 本文「経費は、使った月の翌月5営業日まで/,
      );
      expect(s!.lines.every((l) => !l.includes('\n'))).toBe(true);
    });

    it('gives a level-1 reader nothing of the level-5 document, and an unknown sender nothing at all', async () => {
      const low = await load('watanabe-sho', '大阪の統合と新規事業の予算はどうなった？');
      expect(JSON.stringify(low)).not.toMatch(/役員会|8000万円/);
      expect(JSON.stringify(returned)).not.toMatch(/役員会|8000万円/);
      const high = await load('yamada-ichiro', '大阪の統合と新規事業の予算はどうなった？');
      expect(high!.lines[0]).toContain('第12回役員会議事録');
      expect(await load(null, '経費の申請期限はいつまで？')).toBeNull();
      expect(await load('watanabe-sho', 'ありがとう')).toBeNull();
    });
  });

  describe('in the ContextBuilder (beside the combined read)', () => {
    const build = async (
      sources: ConstructorParameters<typeof ContextBuilder>[0]['sources'],
      authority: 'member' | 'public',
    ) => {
      const m = await member(t.db, 'watanabe-sho');
      const cb = new ContextBuilder({
        db: t.db,
        logger: silentLogger(),
        defaultTimezone: 'Asia/Tokyo',
        sources,
      });
      const text = '経費の申請期限はいつまで？';
      return cb.build({
        msg: { ...msgOf(text), senderAccountId: '1008' },
        sender: {
          known: true,
          memberId: m.id,
          name: m.name,
          level: m.level,
          departmentId: m.departmentId,
          departmentName: null,
          title: null,
          preferences: {},
        },
        room: { platform: 'console', roomId: 'console-general', name: null, authority },
        now: NOW,
      });
    };

    it('a member turn gets the knowledge section after the other sources; a public room gets none', async () => {
      const ctx = await build(TURN_CONTEXT_SOURCES, 'member');
      expect(ctx.degraded).toEqual([]);
      expect(ctx.sections.at(-1)!.lines[0]).toContain('文書「経費精算の手順」');
      const pub = await build(TURN_CONTEXT_SOURCES, 'public');
      expect(JSON.stringify(pub.sections)).not.toContain('経費精算の手順');
    });

    it('when the combined read fails, knowledge still arrives and only the failing source degrades', async () => {
      const broken = defineSqlSource<unknown>({
        name: 'broken',
        query: '(SELECT no_such_column FROM members WHERE "orgId" = $1)',
        render: () => ({ title: 'x', lines: ['x'] }),
      });
      const ctx = await build([broken, knowledgeSource], 'member');
      expect(ctx.degraded).toEqual(['broken']);
      expect(ctx.sections).toHaveLength(1);
      expect(ctx.sections[0]!.lines[0]).toContain('文書「経費精算の手順」');
    });
  });

  it('re-import: unchanged files stay, an edited file is updated, a deleted file is removed', async () => {
    const again = await importKnowledge(t.db, { orgId: 'acme', path: dir, config });
    expect(again.added).toEqual([]);
    expect(again.updated).toEqual([]);
    expect(again.unchanged).toHaveLength(5);
    const before = await t.db.knowledgeDocument.findFirstOrThrow({ where: { title: '社内FAQ' } });

    const faq = path.join(dir, '社内FAQ.md');
    fs.writeFileSync(
      faq,
      fs
        .readFileSync(faq, 'utf8')
        .replace('2週間先まで', '1か月先まで')
        .replace('title: 社内FAQ', 'title: 社内FAQ\nlevel: 1'),
    );
    fs.rmSync(path.join(dir, '役員会議事録.md'));
    const edited = await importKnowledge(t.db, { orgId: 'acme', path: dir, config });
    expect(edited.updated).toEqual([faq]);
    expect(edited.removed).toEqual([path.join(dir, '役員会議事録.md')]);
    expect(edited.unchanged).toHaveLength(3);
    const after = await t.db.knowledgeDocument.findFirstOrThrow({ where: { title: '社内FAQ' } });
    expect(after.id).toBe(before.id);
    expect(after.level).toBe(1);
    expect(await t.db.knowledgeDocument.count({ where: { title: '第12回役員会議事録' } })).toBe(0);
    expect(await t.db.knowledgePassage.count({ where: { text: { contains: '8000万円' } } })).toBe(0);
    const room = await search('watanabe-sho', '会議室 予約');
    expect(room[0]!.text).toContain('1か月先まで');
    expect(await t.db.knowledgePassage.count({ where: { text: { contains: '2週間先まで' } } })).toBe(0);
    expect(await search('yamada-ichiro', '統合 予算')).toEqual([]);

    // One file on its own: imported or updated, never removing its neighbours.
    const single = await importKnowledge(t.db, { orgId: 'acme', path: faq, config });
    expect(single).toMatchObject({ unchanged: [faq], removed: [] });
    expect(await t.db.knowledgeDocument.count()).toBe(4);
  });

  it('bad front matter or an unknown department skips the file and imports the rest', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-knowledge-bad-'));
    fs.writeFileSync(path.join(d, 'a.md'), '---\nlevel: 9\n---\n# A\n\n本文です。\n');
    fs.writeFileSync(path.join(d, 'b.md'), '---\ndepartment: 総務部\n---\n# B\n\n総務の本文です。\n');
    fs.writeFileSync(path.join(d, 'c.txt'), '出張の手配は旅行代理店に依頼します。\n');
    const s = await importKnowledge(t.db, { orgId: 'acme', path: d, config });
    expect(s.skipped.map((x) => [path.basename(x.path), x.reason])).toEqual([
      ['a.md', 'front matter level must be a whole number from 1 to 6'],
      ['b.md', 'unknown department "総務部" (not in the organisation directory)'],
    ]);
    expect(s.added).toEqual([path.join(d, 'c.txt')]);
    expect(await t.db.knowledgeDocument.findFirst({ where: { sourcePath: path.join(d, 'c.txt') } })).toMatchObject({
      title: 'c',
      level: 2,
    });
  });

  it('KNOWLEDGE_MAX_BYTES and KNOWLEDGE_DEFAULT_LEVEL are read and checked', () => {
    expect(knowledgeConfig({})).toEqual({ maxBytes: 1048576, defaultLevel: 2 });
    expect(knowledgeConfig({ KNOWLEDGE_MAX_BYTES: '2048', KNOWLEDGE_DEFAULT_LEVEL: '3' })).toEqual({
      maxBytes: 2048,
      defaultLevel: 3,
    });
    expect(() => knowledgeConfig({ KNOWLEDGE_DEFAULT_LEVEL: '7' })).toThrow(/KNOWLEDGE_DEFAULT_LEVEL/);
    expect(() => knowledgeConfig({ KNOWLEDGE_MAX_BYTES: 'big' })).toThrow(/KNOWLEDGE_MAX_BYTES/);
  });

  it('npm run knowledge:import prints the summary and exits 0', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-knowledge-cli-'));
    fs.writeFileSync(
      path.join(d, '出張規程.md'),
      '---\nlevel: 1\n---\n# 出張規程\n\n出張の宿泊費は1泊1万2000円までです。\n',
    );
    fs.writeFileSync(path.join(d, 'bad.txt'), Buffer.from([0xff, 0xfe, 0x41]));
    const run = promisify(execFile);
    const { stdout } = await run('npm', ['run', '--silent', 'knowledge:import', '--', d], {
      env: { ...process.env, DATABASE_URL: t.url, KNOWLEDGE_MAX_BYTES: '' },
      cwd: path.resolve(__dirname, '..', '..'),
    });
    expect(stdout).toContain(`Imported ${d} into organisation "acme"`);
    expect(stdout).toContain('added 1, updated 0, unchanged 0, removed 0, skipped 1');
    expect(stdout).toContain(`added      ${path.join(d, '出張規程.md')}`);
    expect(stdout).toContain(`skipped    ${path.join(d, 'bad.txt')}: not UTF-8 text`);
    expect((await search('watanabe-sho', '出張 宿泊'))[0]?.title).toBe('出張規程');
  }, 60000);
});

describe('search words', () => {
  it('Japanese runs split at hiragana give bigrams; Latin words are lower-case; single characters only alone', () => {
    expect(searchWords('経費の申請期限は？')).toEqual([['経費'], ['申請', '請期', '期限']]);
    expect(searchWords('VPN に接続できない')).toEqual([['接続'], ['vpn']]);
    expect(focusWords(searchWords('在宅勤務は何日まで'))).toEqual([['在宅', '宅勤', '勤務'], ['何日']]);
    expect(focusWords(searchWords('明日の会議は何時から'))).toEqual([['明日'], ['会議'], ['何時']]);
    expect(focusWords(searchWords('締め切り'))).toEqual([['締'], ['切']]);
    expect(searchWords('ありがとう！')).toEqual([]);
  });

  it('passages are cut at headings and paragraphs, at most 500 characters, with their heading path', () => {
    const long = '長い段落の文です。'.repeat(80);
    const parts = splitPassages(`# 規程\n\n前文。\n\n## 第1条\n\n${long}\n\n## 第2条\n\n短い。`, true);
    expect(parts[0]).toEqual({ heading: '規程', text: '前文。' });
    expect(parts.filter((p) => p.heading === '規程 › 第1条').length).toBeGreaterThan(1);
    expect(parts.every((p) => [...p.text].length <= 500)).toBe(true);
    expect(parts.at(-1)).toEqual({ heading: '規程 › 第2条', text: '短い。' });
    expect(passageTokens('経費精算 VPN')).toEqual(expect.arrayContaining(['経費', '費精', '精算', '経', 'vpn']));
  });
});
