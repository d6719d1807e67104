import { loadDirectory, matchMembers } from '../../src/authorization';
import { directoryRows } from '../../src/org/directory-rows';
import { importDirectory } from '../../src/org/import-directory';
import { readNames, withDictionaryReadings } from '../../src/org/name-readings';
import { parseDirectory } from '../../src/org/parse-directory';
import type { Directory } from '../../src/org/directory.schema';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { kanjiOnlySample } from '../helpers/directory';

const KANJI_ONLY = kanjiOnlySample();

function parse(text: string): Directory {
  const r = parseDirectory(text, 'org.yaml');
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.directory;
}

/** Issue 40: readings for names the directory gives only in kanji, from the dictionary at import. */
describe('dictionary readings of kanji-only names', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  it('reads names as people say them (family and given name apart)', async () => {
    const r = await readNames(['田中太郎', '佐藤美咲', '渡辺翔', '佐々木', '長谷川健太']);
    expect(Object.fromEntries(r)).toEqual({
      田中太郎: 'たなか たろう',
      佐藤美咲: 'さとう みさき',
      渡辺翔: 'わたなべ しょう',
      佐々木: 'ささき',
      長谷川健太: 'はせがわ けんた',
    });
  });

  it('stores them at import; "Tanaka" then fits both 田中, "Taro Tanaka" and 「たなかはなこ」 one each', async () => {
    expect(KANJI_ONLY).not.toMatch(/reading:|romaji:/);
    const summary = await importDirectory(t.db, parse(KANJI_ONLY));
    expect(summary.readings).toEqual({ read: 8, analysed: 8 });
    const taro = await t.db.member.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'tanaka-taro' } } });
    expect(taro).toMatchObject({ reading: null, romaji: null, dictionaryReading: 'たなか たろう' });
    const { members } = await loadDirectory(t.db, 'acme');
    expect(matchMembers('Tanaka', members).map((m) => m.id)).toEqual(['tanaka-hanako', 'tanaka-taro']);
    expect(matchMembers('Taro Tanaka', members).map((m) => m.id)).toEqual(['tanaka-taro']);
    expect(matchMembers('たなかはなこ', members).map((m) => m.id)).toEqual(['tanaka-hanako']);
    expect(matchMembers('Mr. Suzuki', members).map((m) => m.id)).toEqual(['suzuki-kenji']);
  });

  it('importing the same names again reads nothing (no dictionary loaded) and changes nothing', async () => {
    let asked = 0;
    const counting = (names: readonly string[]) => {
      asked += names.length;
      return readNames(names);
    };
    const { outcome } = await withDictionaryReadings(t.db, directoryRows(parse(KANJI_ONLY)), counting);
    expect(asked).toBe(0);
    expect(outcome).toEqual({ read: 8, analysed: 0 });
    const again = await importDirectory(t.db, parse(KANJI_ONLY));
    expect(again.changed).toBe(false);
  });

  it("the directory's reading wins: a member given one keeps it and loses the dictionary's", async () => {
    const text = KANJI_ONLY.replace('    name: 高橋亮\n', '    name: 高橋亮\n    reading: たかはし りょう\n');
    await importDirectory(t.db, parse(text));
    const ryo = await t.db.member.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'takahashi-ryo' } } });
    expect(ryo).toMatchObject({ reading: 'たかはし りょう', dictionaryReading: null });
    const { members } = await loadDirectory(t.db, 'acme');
    expect(matchMembers('Ryo Takahashi', members).map((m) => m.id)).toEqual(['takahashi-ryo']);
  });

  it('when the dictionary cannot be used the import still lands, and says so', async () => {
    const text = KANJI_ONLY.replace('name: 渡辺翔', 'name: 渡邊翔');
    const broken = () => Promise.reject(new Error('analyzer missing'));
    const { rows, outcome } = await withDictionaryReadings(t.db, directoryRows(parse(text)), broken);
    expect(outcome.failed).toBe('analyzer missing');
    expect(rows.members.find((m) => m.id === 'watanabe-sho')?.dictionaryReading).toBeNull();
    expect(rows.members.find((m) => m.id === 'tanaka-taro')?.dictionaryReading).toBe('たなか たろう');
  });
});
