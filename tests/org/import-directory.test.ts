import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../src/db/prisma';
import { DirectoryImportError, importDirectory, importDirectoryFile } from '../../src/org/import-directory';
import { parseDirectory } from '../../src/org/parse-directory';
import type { Directory } from '../../src/org/directory.schema';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const SAMPLE_PATH = path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml');
const sample = fs.readFileSync(SAMPLE_PATH, 'utf8');

function parse(text: string): Directory {
  const r = parseDirectory(text, 'test.yaml');
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.directory;
}

/** Every row the directory import owns, in a stable order (timestamps included: nothing may change). */
async function snapshot(db: Db): Promise<unknown> {
  return {
    organizations: await db.organization.findMany({ orderBy: { id: 'asc' } }),
    departments: await db.department.findMany({ orderBy: [{ orgId: 'asc' }, { id: 'asc' }] }),
    members: await db.member.findMany({ orderBy: [{ orgId: 'asc' }, { id: 'asc' }] }),
    accounts: await db.platformAccount.findMany({ orderBy: [{ platform: 'asc' }, { accountId: 'asc' }] }),
    rooms: await db.room.findMany({ orderBy: [{ platform: 'asc' }, { externalId: 'asc' }] }),
    policies: await db.policy.findMany({ orderBy: [{ orgId: 'asc' }, { id: 'asc' }] }),
    schedules: await db.schedule.findMany({ orderBy: { id: 'asc' } }),
  };
}

describe('importDirectory', () => {
  let t: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-org-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await t.db.schedule.deleteMany({});
    await t.db.organization.deleteMany({}); // cascades to departments, members, accounts, rooms, policies
  });

  it('imports the sample file', async () => {
    const summary = await importDirectoryFile(t.db, SAMPLE_PATH);
    expect(summary.orgId).toBe('acme');
    expect(summary.organization).toBe('created');
    expect(summary.changed).toBe(true);
    expect(summary.counts).toEqual({
      departments: { total: 6, created: 6, updated: 0, removed: 0 },
      members: { total: 8, created: 8, updated: 0, removed: 0 },
      platformAccounts: { total: 20, created: 20, updated: 0, removed: 0 },
      rooms: { total: 4, created: 4, updated: 0, removed: 0 },
      policies: { total: 3, created: 3, updated: 0, removed: 0 },
      schedules: { total: 3, created: 3, updated: 0, removed: 0 },
    });

    const org = await t.db.organization.findUniqueOrThrow({ where: { id: 'acme' } });
    expect(org).toMatchObject({ name: '株式会社アクメ', timezone: 'Asia/Tokyo' });
    expect(org.values).not.toBe('');
    expect(
      await t.db.department.findUnique({ where: { orgId_id: { orgId: 'acme', id: 'sales-tokyo' } } }),
    ).toMatchObject({ name: '東京営業課', parentId: 'sales' });
    const tanakas = await t.db.member.findMany({
      where: { orgId: 'acme', aliases: { has: '田中さん' } },
      orderBy: { id: 'asc' },
    });
    expect(tanakas.map((m) => m.name)).toEqual(['田中花子', '田中太郎']);
    expect(
      await t.db.platformAccount.findUnique({
        where: { platform_accountId: { platform: 'chatwork', accountId: '1004' } },
      }),
    ).toMatchObject({ orgId: 'acme', memberId: 'tanaka-taro' });
    expect(
      await t.db.platformAccount.findUnique({
        where: { platform_accountId: { platform: 'console', accountId: 'tanaka-hanako' } },
      }),
    ).toMatchObject({ memberId: 'tanaka-hanako' });
    expect(await t.db.member.findUnique({ where: { orgId_id: { orgId: 'acme', id: 'ito-yui' } } })).toMatchObject({
      noticesOptOut: true,
      level: 2,
      active: true,
    });
    expect(
      await t.db.room.findUnique({
        where: { platform_externalId: { platform: 'discord', externalId: '1122334455667788' } },
      }),
    ).toMatchObject({ orgId: 'acme', authority: 'public', noticesEnabled: false });
    const policy = await t.db.policy.findUniqueOrThrow({
      where: { orgId_id: { orgId: 'acme', id: 'no-mass-mention' } },
    });
    expect(policy.rule).toEqual({ tools: ['announce'], action: 'confirm' });
    expect(
      (await t.db.policy.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'bad-news-first' } } })).rule,
    ).toBeNull();
    expect(await t.db.schedule.findUnique({ where: { id: 'acme:daily-digest' } })).toMatchObject({
      orgId: 'acme',
      kind: 'daily_digest',
      platform: 'console',
      roomId: 'console-general',
      timezone: 'Asia/Tokyo',
      enabled: true,
    });
  });

  it('imports the Discord guild allow-list and top-secret departments, idempotently (issue 8)', async () => {
    const withTrust = sample
      .replace(
        '  timezone: Asia/Tokyo\n',
        '  timezone: Asia/Tokyo\n  discord_guilds: ["222222222222222222", "111111111111111111"]\n',
      )
      .replace(
        '  - { id: dev, name: 開発部, parent: exec, aliases: [開発, Dev, Engineering] }\n',
        '  - { id: dev, name: 開発部, parent: exec, aliases: [開発, Dev, Engineering] }\n' +
          '  - { id: ma-office, name: M&A準備室, parent: exec, top_secret: true }\n',
      );
    const file = path.join(tmp, 'trust.yaml');
    fs.writeFileSync(file, withTrust);
    await importDirectoryFile(t.db, file);
    expect((await t.db.organization.findUniqueOrThrow({ where: { id: 'acme' } })).discordGuildIds).toEqual([
      '111111111111111111',
      '222222222222222222',
    ]);
    expect(
      await t.db.department.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'ma-office' } } }),
    ).toMatchObject({ topSecret: true });
    expect(
      await t.db.department.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'dev' } } }),
    ).toMatchObject({ topSecret: false });
    const before = await snapshot(t.db);
    expect((await importDirectoryFile(t.db, file)).changed).toBe(false);
    expect(await snapshot(t.db)).toEqual(before);
    const bad = parseDirectory(withTrust.replace('"111111111111111111"', '111111111111111111'), 'bad.yaml');
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.errors.join('\n')).toMatch(/organization\.discord_guilds\[1\]: must be a Discord guild id in quotes/);
    await importDirectoryFile(t.db, SAMPLE_PATH);
    expect((await t.db.organization.findUniqueOrThrow({ where: { id: 'acme' } })).discordGuildIds).toEqual([]);
  });

  it('stores the closing days, idempotently, and replaces them on a changed import', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    const org = () => t.db.organization.findUniqueOrThrow({ where: { id: 'acme' } });
    expect((await org()).closingDays).toEqual([{ name: '年末年始休業', from: '12-29', to: '01-03' }]);
    const before = await snapshot(t.db);
    expect((await importDirectoryFile(t.db, SAMPLE_PATH)).changed).toBe(false);
    expect(await snapshot(t.db)).toEqual(before);
    const file = path.join(tmp, 'closing.yaml');
    fs.writeFileSync(
      file,
      sample.replace('{ name: 年末年始休業, from: "12-29", to: "01-03" }', '{ name: 創立記念日, from: "06-01" }'),
    );
    const summary = await importDirectoryFile(t.db, file);
    expect(summary.organization).toBe('updated');
    expect((await org()).closingDays).toEqual([{ name: '創立記念日', from: '06-01', to: '06-01' }]);
  });

  it('is idempotent: a second import writes nothing and reports the same state', async () => {
    const first = await importDirectoryFile(t.db, SAMPLE_PATH);
    const before = await snapshot(t.db);
    const second = await importDirectoryFile(t.db, SAMPLE_PATH);
    expect(await snapshot(t.db)).toEqual(before); // updatedAt included: no row was rewritten
    expect(second.changed).toBe(false);
    expect(second.organization).toBe('unchanged');
    for (const [entity, c] of Object.entries(second.counts)) {
      expect([entity, c]).toEqual([
        entity,
        { total: first.counts[entity as keyof typeof first.counts].total, created: 0, updated: 0, removed: 0 },
      ]);
    }
    expect(await t.db.member.count()).toBe(8);
    expect(await t.db.platformAccount.count()).toBe(20);
  });

  it('serialises concurrent imports (several instances starting together)', async () => {
    const results = await Promise.all([
      importDirectoryFile(t.db, SAMPLE_PATH),
      importDirectoryFile(t.db, SAMPLE_PATH),
      importDirectoryFile(t.db, SAMPLE_PATH),
    ]);
    expect(results.map((r) => r.organization).sort()).toEqual(['created', 'unchanged', 'unchanged']);
    expect(await t.db.member.count()).toBe(8);
  });

  it('leaves a database holding a good import untouched when the file is invalid', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    const before = await snapshot(t.db);
    const bad = path.join(tmp, 'bad.yaml');
    fs.writeFileSync(
      bad,
      sample.replace('name: 田中太郎', 'name: 田中一郎').replace('    level: 6\n', '    level: 9\n'),
    );
    const err = await importDirectoryFile(t.db, bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DirectoryImportError);
    expect((err as Error).message).toContain(`Invalid organisation directory file ${bad}`);
    expect((err as DirectoryImportError).errors).toEqual([
      expect.stringMatching(/^members\[0\]\.level: must be between 1 and 6 \(line \d+\)$/),
    ]);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('rolls back everything when the database refuses a write half-way (one transaction)', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    await t.db.organization.create({ data: { id: 'other', name: 'Other' } });
    await t.db.schedule.create({
      data: { id: 'acme:weekly', orgId: 'other', kind: 'daily_digest', cron: '0 9 * * 1' },
    });
    const before = await snapshot(t.db);
    // Members and accounts are written before schedules; the clashing schedule id fails the last step.
    const changed =
      sample.replace('name: 田中太郎', 'name: 田中一郎').replace('chatwork: 1008', 'chatwork: 1009') +
      '  - { id: weekly, kind: goal_checkin, cron: "0 10 * * 1" }\n';
    await expect(importDirectory(t.db, parse(changed))).rejects.toThrow(/unique constraint/i);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('refuses rooms and accounts that belong to another organisation, writing nothing', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    const before = await snapshot(t.db);
    const other = parse(
      'organization: { id: beta, name: Beta }\n' +
        'members:\n  - { id: b1, name: B, level: 2, accounts: { chatwork: 1004 } }\n' +
        'rooms:\n  - { platform: chatwork, id: "5001" }\n',
    );
    const err = await importDirectory(t.db, other).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DirectoryImportError);
    expect((err as DirectoryImportError).errors).toEqual([
      'rooms[0]: chatwork room "5001" already belongs to organisation "acme"',
      'member "b1": chatwork account "1004" already belongs to organisation "acme"',
    ]);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('marks a removed member inactive, drops their accounts, and reactivates them when they return', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    const start = sample.indexOf('  - id: watanabe-sho');
    const end = sample.indexOf('\n\n', start);
    const without = sample.slice(0, start) + sample.slice(end + 2);
    const removed = await importDirectory(t.db, parse(without));
    expect(removed.counts.members).toEqual({ total: 7, created: 0, updated: 0, removed: 1 });
    expect(removed.counts.platformAccounts).toMatchObject({ total: 18, removed: 2 });
    expect(removed.inactiveMembers).toBe(1);
    expect(await t.db.member.findUnique({ where: { orgId_id: { orgId: 'acme', id: 'watanabe-sho' } } })).toMatchObject({
      active: false,
      name: '渡辺翔',
    });
    expect(await t.db.platformAccount.count({ where: { memberId: 'watanabe-sho' } })).toBe(0);
    expect(await t.db.member.count({ where: { orgId: 'acme', active: true } })).toBe(7);

    const again = await importDirectory(t.db, parse(without));
    expect(again.changed).toBe(false);
    expect(again.inactiveMembers).toBe(1);

    const back = await importDirectoryFile(t.db, SAMPLE_PATH);
    expect(back.counts.members).toEqual({ total: 8, created: 0, updated: 1, removed: 0 });
    expect(await t.db.member.findUnique({ where: { orgId_id: { orgId: 'acme', id: 'watanabe-sho' } } })).toMatchObject({
      active: true,
    });
    expect(await t.db.platformAccount.count({ where: { memberId: 'watanabe-sho' } })).toBe(2);
  });

  it('updates changed entries, deletes removed ones and keeps data the file does not own', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    await t.db.member.update({
      where: { orgId_id: { orgId: 'acme', id: 'tanaka-taro' } },
      data: { preferences: { drink: 'coffee' } },
    });
    await t.db.schedule.update({
      where: { id: 'acme:daily-digest' },
      data: { lastFiredAt: new Date('2026-01-05T00:00:00Z') },
    });
    const edited = sample
      .replace('    level: 3\n', '    level: 4\n')
      .replace('chatwork: 1005', 'chatwork: 2005')
      .replace('  - { platform: chatwork, id: "5001", name: 営業部, authority: member }\n', '')
      .replace(/\n {2}- id: bad-news-first[\s\S]*?priority: 10\n/, '\n')
      .replace('cron: "30 8 * * 1-5"', 'cron: "45 8 * * 1-5"')
      .replace(
        '{ id: dev, name: 開発部, parent: exec, aliases: [開発, Dev, Engineering] }',
        '{ id: dev, name: 開発本部, parent: exec }',
      );
    const summary = await importDirectory(t.db, parse(edited));
    expect(summary.counts).toEqual({
      departments: { total: 6, created: 0, updated: 1, removed: 0 },
      members: { total: 8, created: 0, updated: 1, removed: 0 },
      platformAccounts: { total: 20, created: 1, updated: 0, removed: 1 },
      rooms: { total: 3, created: 0, updated: 0, removed: 1 },
      policies: { total: 2, created: 0, updated: 0, removed: 1 },
      schedules: { total: 3, created: 0, updated: 1, removed: 0 },
    });
    const taro = await t.db.member.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'tanaka-taro' } } });
    expect(taro).toMatchObject({ level: 4, preferences: { drink: 'coffee' } });
    expect(
      await t.db.platformAccount.findUnique({
        where: { platform_accountId: { platform: 'chatwork', accountId: '2005' } },
      }),
    ).toMatchObject({ memberId: 'tanaka-hanako' });
    expect(
      await t.db.platformAccount.findUnique({
        where: { platform_accountId: { platform: 'chatwork', accountId: '1005' } },
      }),
    ).toBeNull();
    expect(await t.db.room.count({ where: { orgId: 'acme' } })).toBe(3);
    expect(await t.db.policy.findUnique({ where: { orgId_id: { orgId: 'acme', id: 'bad-news-first' } } })).toBeNull();
    expect(await t.db.schedule.findUniqueOrThrow({ where: { id: 'acme:daily-digest' } })).toMatchObject({
      cron: '45 8 * * 1-5',
      lastFiredAt: new Date('2026-01-05T00:00:00Z'),
    });
  });

  it('imports a JSON file and keeps organisations apart', async () => {
    await importDirectoryFile(t.db, SAMPLE_PATH);
    const file = path.join(tmp, 'beta.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        organization: { id: 'beta', name: 'Beta', timezone: 'Europe/Berlin' },
        departments: [{ id: 'sales', name: 'Sales' }],
        members: [
          {
            id: 'tanaka-taro',
            name: 'Taro Tanaka',
            level: 5,
            department: 'sales',
            accounts: { chatwork: 9001, discord: '1' },
          },
        ],
        schedules: [{ id: 'daily-digest', kind: 'daily_digest', cron: '0 8 * * *' }],
      }),
    );
    const summary = await importDirectoryFile(t.db, file);
    expect(summary.counts.members.total).toBe(1);
    expect(await t.db.schedule.findUniqueOrThrow({ where: { id: 'beta:daily-digest' } })).toMatchObject({
      orgId: 'beta',
      timezone: 'Europe/Berlin',
      platform: null,
    });
    expect(await t.db.member.count({ where: { orgId: 'acme', active: true } })).toBe(8);
    expect(await t.db.department.count({ where: { orgId: 'acme' } })).toBe(6);
    expect((await importDirectoryFile(t.db, SAMPLE_PATH)).changed).toBe(false);
  });

  it('names the file when it cannot be read', async () => {
    const missing = path.join(tmp, 'missing.yaml');
    await expect(importDirectoryFile(t.db, missing)).rejects.toThrow(`Invalid organisation directory file ${missing}`);
  });
});
