import { lookupPerson } from '../../handlers/directory';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { seedSample, toolContext } from './tool-context';

interface Found {
  memberId: string;
  name: string;
  aliases: string[];
  department: string | null;
  title: string | null;
}

describe('lookup_person', () => {
  let t: TestDatabase;
  const exec = () => new ToolExecutor(new ToolRegistry([lookupPerson]));
  const lookup = async (query: string): Promise<Found[]> => {
    const r = await exec().run('lookup_person', { query }, await toolContext(t.db, 'watanabe-sho'));
    if (r.status !== 'ok') throw new Error(JSON.stringify(r));
    return (r.output as { members: Found[] }).members;
  };
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());

  it('finds both 田中 by the shared alias, with department and title but never levels or preferences', async () => {
    const found = await lookup('田中さん');
    expect(found.map((m) => m.memberId).sort()).toEqual(['tanaka-hanako', 'tanaka-taro']);
    expect(found.find((m) => m.memberId === 'tanaka-taro')).toEqual({
      memberId: 'tanaka-taro',
      name: '田中太郎',
      aliases: ['田中さん', 'たなか', '太郎さん'],
      department: '東京営業課',
      title: '東京営業課長',
    });
    for (const m of found)
      expect(Object.keys(m).sort()).toEqual(['aliases', 'department', 'memberId', 'name', 'title']);
    expect(JSON.stringify(found)).not.toMatch(/level|preferences|chatwork|1004/);
  });

  it('does not show members of a top-secret department below level 6 (except to its own members)', async () => {
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
    const as = async (memberId: string, query: string) => {
      const r = await exec().run('lookup_person', { query }, await toolContext(t.db, memberId));
      return (r.status === 'ok' ? (r.output as { members: Found[] }).members : []).map((m) => m.memberId);
    };
    try {
      expect(await as('sato-misaki', '木村')).toEqual([]);
      expect(await as('sato-misaki', 'M&A準備室')).toEqual([]);
      expect(await as('yamada-ichiro', '木村')).toEqual(['kimura-ken']);
      expect(await as('kimura-ken', '木村')).toEqual(['kimura-ken']);
    } finally {
      await t.db.member.delete({ where: { orgId_id: { orgId: 'acme', id: 'kimura-ken' } } });
      await t.db.department.delete({ where: { orgId_id: { orgId: 'acme', id: 'ma-office' } } });
    }
  });

  it('finds by member id, full name, alias with honorific, and full-width input', async () => {
    expect((await lookup('sato-misaki')).map((m) => m.memberId)).toEqual(['sato-misaki']);
    expect((await lookup('田中太郎')).map((m) => m.memberId)).toEqual(['tanaka-taro']);
    expect((await lookup('社長')).map((m) => m.memberId)).toEqual(['yamada-ichiro']);
    expect((await lookup('ゆいさん')).map((m) => m.memberId)).toEqual(['ito-yui']);
    expect((await lookup('ＳＵＺＵＫＩ')).map((m) => m.memberId)).toEqual(['suzuki-kenji']);
  });

  it('finds the members of a department by its name', async () => {
    expect((await lookup('東京営業課')).map((m) => m.memberId).sort()).toEqual(['tanaka-taro', 'watanabe-sho']);
  });

  it('returns nothing for no match and leaves out inactive members', async () => {
    expect(await lookup('木村')).toEqual([]);
    await t.db.member.update({ where: { orgId_id: { orgId: 'acme', id: 'ito-yui' } }, data: { active: false } });
    expect(await lookup('伊藤')).toEqual([]);
    await t.db.member.update({ where: { orgId_id: { orgId: 'acme', id: 'ito-yui' } }, data: { active: true } });
  });
});
