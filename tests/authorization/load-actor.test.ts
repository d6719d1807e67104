import { authorizeWithLookup, loadActor, loadDirectory, type LoadActorInput } from '../../src/authorization';
import { createDb, type Db } from '../../src/db/prisma';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { withDatabase } from '../helpers/db-url';
import { proposal, tool } from './fixtures';

describe('loadActor / authorizeWithLookup against PostgreSQL', () => {
  let t: TestDatabase;
  const base: LoadActorInput = { orgId: 'acme', platform: 'chatwork', roomId: 'r-member', accountId: 'a-tanaka' };

  beforeAll(async () => {
    t = await createTestDatabase();
    const db = t.db;
    await db.organization.createMany({
      data: [
        { id: 'acme', name: 'Acme' },
        { id: 'other', name: 'Other' },
      ],
    });
    await db.department.createMany({
      data: [
        { orgId: 'acme', id: 'hq', name: '本社', parentId: null },
        { orgId: 'acme', id: 'sales', name: '営業部', parentId: 'hq' },
        { orgId: 'acme', id: 'sales-east', name: '営業東', parentId: 'sales' },
        { orgId: 'acme', id: 'eng', name: '開発部', parentId: 'hq' },
      ],
    });
    await db.member.createMany({
      data: [
        { orgId: 'acme', id: 'm-tanaka', name: '田中 太郎', aliases: ['田中'], level: 3, departmentId: 'sales' },
        { orgId: 'acme', id: 'm-suzuki', name: '鈴木 一郎', level: 2, departmentId: 'sales-east' },
        { orgId: 'acme', id: 'm-ito', name: '伊藤 三郎', level: 2, departmentId: 'eng' },
        { orgId: 'acme', id: 'm-gone', name: '退職 者', level: 5, departmentId: 'hq', active: false },
        { orgId: 'other', id: 'm-outsider', name: '外部 者', level: 6, departmentId: null },
      ],
    });
    await db.platformAccount.createMany({
      data: [
        { platform: 'chatwork', accountId: 'a-tanaka', orgId: 'acme', memberId: 'm-tanaka' },
        { platform: 'chatwork', accountId: 'a-gone', orgId: 'acme', memberId: 'm-gone' },
        { platform: 'chatwork', accountId: 'a-outsider', orgId: 'other', memberId: 'm-outsider' },
      ],
    });
    await db.room.createMany({
      data: [
        { platform: 'chatwork', externalId: 'r-member', orgId: 'acme', authority: 'member' },
        { platform: 'chatwork', externalId: 'r-public', orgId: 'acme', authority: 'public' },
        { platform: 'chatwork', externalId: 'r-odd', orgId: 'acme', authority: 'weird' },
        { platform: 'chatwork', externalId: 'r-foreign', orgId: 'other', authority: 'member' },
      ],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('loads a known, active member with level and department from the directory', async () => {
    expect(await loadActor(t.db, base)).toEqual({
      known: true,
      memberId: 'm-tanaka',
      name: '田中 太郎',
      level: 3,
      departmentId: 'sales',
      roomAuthority: 'member',
      roomListed: true,
      source: 'directory',
    });
  });

  it('a known member keeps their level in a public room', async () => {
    expect(await loadActor(t.db, { ...base, roomId: 'r-public' })).toMatchObject({
      known: true,
      level: 3,
      roomAuthority: 'public',
    });
  });

  it('an unknown sender in a member room gets the default level (1 unless configured)', async () => {
    const unknown = { ...base, accountId: 'a-nobody' };
    expect(await loadActor(t.db, unknown)).toEqual({
      known: false,
      memberId: null,
      name: null,
      level: 1,
      departmentId: null,
      roomAuthority: 'member',
      roomListed: true,
      source: 'default',
    });
    expect((await loadActor(t.db, { ...unknown, defaultLevel: 2 })).level).toBe(2);
  });

  it('an unknown sender in a public room gets level 0', async () => {
    expect(
      await loadActor(t.db, { ...base, accountId: 'a-nobody', roomId: 'r-public', defaultLevel: 3 }),
    ).toMatchObject({ known: false, level: 0, roomAuthority: 'public', source: 'public_unknown' });
  });

  it('inactive members and accounts of another organisation count as unknown', async () => {
    expect(await loadActor(t.db, { ...base, accountId: 'a-gone' })).toMatchObject({
      known: false,
      level: 1,
      memberId: null,
    });
    expect(await loadActor(t.db, { ...base, accountId: 'a-outsider' })).toMatchObject({
      known: false,
      level: 1,
      memberId: null,
    });
  });

  it(
    'an unknown sender in a DM or an unlisted room is a stranger with ' +
      'level 0, whatever the default level (issue 8)',
    async () => {
      for (const over of [
        { roomId: 'dm-channel', fallbackAuthority: 'member' as const },
        { roomId: 'r-unlisted', fallbackAuthority: 'public' as const },
      ]) {
        expect(await loadActor(t.db, { ...base, accountId: 'a-nobody', defaultLevel: 3, ...over })).toMatchObject({
          known: false,
          level: 0,
          roomListed: false,
          source: 'stranger',
        });
      }
      expect(await loadActor(t.db, { ...base, roomId: 'r-unlisted', fallbackAuthority: 'public' })).toMatchObject({
        known: true,
        level: 3,
        roomAuthority: 'public',
        roomListed: false,
        source: 'directory',
      });
    },
  );

  it('a missing room is a member room; an unrecognised or foreign room is public', async () => {
    expect((await loadActor(t.db, { ...base, roomId: 'r-missing' })).roomAuthority).toBe('member');
    expect((await loadActor(t.db, { ...base, roomId: 'r-odd' })).roomAuthority).toBe('public');
    expect((await loadActor(t.db, { ...base, accountId: 'a-nobody', roomId: 'r-foreign' })).level).toBe(0);
  });

  it('loadDirectory returns departments and active members only', async () => {
    const dir = await loadDirectory(t.db, 'acme');
    expect(dir.departments).toHaveLength(4);
    expect(dir.members.map((m) => m.id).sort()).toEqual(['m-ito', 'm-suzuki', 'm-tanaka']);
  });

  it('authorizeWithLookup decides from the database', async () => {
    const view = tool({ requiredLevel: 2 });
    const ask = (parameters: Record<string, unknown>, over: Partial<LoadActorInput> = {}) =>
      authorizeWithLookup(t.db, { ...base, ...over, tool: view, proposal: proposal(parameters) });
    expect(await ask({ user: 'm-suzuki' })).toMatchObject({ result: 'ALLOWED', reasonCode: 'Z_OK' });
    expect(await ask({ user: 'm-ito' })).toMatchObject({ result: 'DENIED', reasonCode: 'Z_OUT_OF_SCOPE_USER' });
    expect(await ask({ user: 'm-gone' })).toMatchObject({ result: 'DENIED', reasonCode: 'Z_UNKNOWN_TARGET' });
    expect(await ask({}, { accountId: 'a-nobody' })).toMatchObject({ result: 'DENIED', reasonCode: 'Z_LEVEL_TOO_LOW' });
  });

  it(
    'a database error propagates from loadActor and becomes ' + 'DENIED Z_LOOKUP_ERROR in authorizeWithLookup',
    async () => {
      const boom = () => Promise.reject(new Error('connection refused'));
      const broken = {
        platformAccount: { findUnique: boom, findMany: boom },
        room: { findUnique: boom },
        department: { findMany: boom },
        member: { findMany: boom },
      } as unknown as Db;
      await expect(loadActor(broken, base)).rejects.toThrow('connection refused');
      const seen: unknown[] = [];
      const d = await authorizeWithLookup(broken, {
        ...base,
        tool: tool(),
        proposal: proposal({}),
        onError: (e) => seen.push(e),
      });
      expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_LOOKUP_ERROR' });
      expect(d.reason).not.toContain('connection refused');
      expect(seen).toHaveLength(1);
    },
  );

  it('a throwing onError callback still yields DENIED', async () => {
    const broken = {
      platformAccount: {
        findUnique: () => {
          throw new Error('sync');
        },
      },
    } as unknown as Db;
    const d = await authorizeWithLookup(broken, {
      ...base,
      tool: tool(),
      proposal: proposal({}),
      onError: () => {
        throw new Error('logger');
      },
    });
    expect(d.reasonCode).toBe('Z_LOOKUP_ERROR');
  });

  it('an unreachable database yields DENIED Z_LOOKUP_ERROR', async () => {
    const bad = createDb({ url: withDatabase(t.url, 'hisho_no_such_database'), connectionTimeoutMs: 2000 });
    try {
      expect(await authorizeWithLookup(bad, { ...base, tool: tool(), proposal: proposal({}) })).toMatchObject({
        result: 'DENIED',
        reasonCode: 'Z_LOOKUP_ERROR',
      });
    } finally {
      await bad.$disconnect();
    }
  });
});
