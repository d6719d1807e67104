import fs from 'node:fs';
import path from 'node:path';
import { parseDirectory, type ParseDirectoryResult } from '../../src/org/parse-directory';

const SAMPLE_PATH = path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml');
const sample = fs.readFileSync(SAMPLE_PATH, 'utf8');
const CRON = 'must be a valid cron expression with five fields (minute hour day month weekday), e.g. "0 9 * * 1-5"';

/** The 1-based line of the first line of `sample` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`not in text: ${needle}`);
  return i + 1;
}

function errorsOf(result: ParseDirectoryResult): string[] {
  if (result.ok) throw new Error('expected the directory to be invalid');
  return result.errors;
}

function edit(from: string, to: string): string {
  expect(sample).toContain(from);
  return sample.replace(from, to);
}

describe('parseDirectory', () => {
  it('accepts the sample directory with ids normalised to strings', () => {
    const r = parseDirectory(sample, 'org.sample.yaml');
    if (!r.ok) throw new Error(r.errors.join('\n'));
    const d = r.directory;
    expect(d.organization).toMatchObject({ id: 'acme', name: '株式会社アクメ', timezone: 'Asia/Tokyo' });
    expect(d.members.map((m) => m.level).sort()).toEqual([1, 2, 2, 3, 4, 4, 5, 6]);
    expect(d.members.filter((m) => m.aliases?.includes('田中さん')).map((m) => m.name)).toEqual([
      '田中太郎',
      '田中花子',
    ]);
    expect(d.members.every((m) => m.accounts?.console === m.id)).toBe(true);
    expect(d.members[0]?.accounts?.chatwork).toBe('1001');
    expect(d.rooms.map((r) => [r.platform, r.id, r.authority])).toEqual([
      ['console', 'console-general', 'member'],
      ['chatwork', '5001', 'member'],
      ['discord', '1122334455667788', 'public'],
      ['console', 'console-admin', 'member'],
    ]);
    expect(d.rooms.filter((r) => r.admin).map((r) => r.id)).toEqual(['console-admin']);
    expect(d.organization.quiet_hours).toBe('21:00-08:00');
    expect(d.organization.closing_days).toEqual([{ name: '年末年始休業', from: '12-29', to: '01-03' }]);
    expect(d.policies.find((p) => p.id === 'no-mass-mention')?.rule).toEqual({
      tools: ['announce'],
      action: 'confirm',
    });
    expect(d.schedules.map((s) => s.kind).sort()).toEqual(['daily_digest', 'deadline_reminder', 'goal_checkin']);
  });

  it('accepts JSON and converts numeric ids to strings', () => {
    const json = JSON.stringify(
      {
        organization: { id: 'beta', name: 'Beta' },
        members: [{ id: 'a', name: 'A', level: 2, accounts: { chatwork: 42 } }],
        rooms: [{ platform: 'chatwork', id: 7001 }],
      },
      null,
      2,
    );
    const r = parseDirectory(json, 'org.json');
    if (!r.ok) throw new Error(r.errors.join('\n'));
    expect(r.directory.members[0]?.accounts?.chatwork).toBe('42');
    expect(r.directory.rooms[0]).toEqual({ platform: 'chatwork', id: '7001', authority: 'member' });
    expect(r.directory.departments).toEqual([]);
  });

  it('names an unknown key and its line', () => {
    const text = edit('    title: 東京営業課長\n', '    titel: 東京営業課長\n');
    expect(errorsOf(parseDirectory(text, 'org.yaml'))).toEqual([
      `members[3].titel: unknown key (line ${lineOf(text, 'titel:')})`,
    ]);
  });

  it('reports a misspelt required key as unknown and the real key as missing', () => {
    const text = edit('    level: 3\n', '    levl: 3\n');
    const errors = errorsOf(parseDirectory(text, 'org.yaml'));
    expect(errors).toContain(`members[3].levl: unknown key (line ${lineOf(text, 'levl:')})`);
    expect(errors).toContain(`members[3].level: is required (line ${lineOf(text, 'id: tanaka-taro')})`);
  });

  it('rejects unknown keys at every depth, including the top level and policy rules', () => {
    const text = edit('action: confirm }', 'action: confirm, when: always }') + 'extra: 1\n';
    const errors = errorsOf(parseDirectory(text, 'org.yaml'));
    expect(errors).toEqual([
      `policies[1].rule.when: unknown key (line ${lineOf(text, 'when: always')})`,
      `extra: unknown key (line ${lineOf(text, 'extra: 1')})`,
    ]);
  });

  it('reads readings in kana and romaji in Latin letters, and names a reading or romaji written otherwise', () => {
    const r = parseDirectory(sample, 'org.sample.yaml');
    if (!r.ok) throw new Error(r.errors.join('\n'));
    expect(r.directory.members.find((m) => m.id === 'tanaka-taro')).toMatchObject({
      reading: 'たなか たろう',
      romaji: 'Tanaka Taro',
    });
    const kanji = edit('    reading: たなか たろう\n', '    reading: 田中 太郎\n');
    expect(errorsOf(parseDirectory(kanji, 'org.yaml'))).toEqual([
      `members[3].reading: must be written in kana, e.g. "たなか たろう" (line ${lineOf(kanji, 'reading: 田中')})`,
    ]);
    const kana = edit('    romaji: Tanaka Taro\n', '    romaji: たなか\n');
    expect(errorsOf(parseDirectory(kana, 'org.yaml'))[0]).toMatch(
      /^members\[3\]\.romaji: must be written in Latin letters/,
    );
  });

  it('rejects a level outside 1..6 with its line', () => {
    const text = edit('    level: 6\n', '    level: 7\n');
    expect(errorsOf(parseDirectory(text, 'org.yaml'))).toEqual([
      `members[0].level: must be between 1 and 6 (line ${lineOf(text, 'level: 7')})`,
    ]);
    expect(errorsOf(parseDirectory(edit('    level: 6\n', '    level: 0\n'), 'org.yaml'))[0]).toMatch(
      /^members\[0\]\.level: must be between 1 and 6 \(line \d+\)$/,
    );
    expect(errorsOf(parseDirectory(edit('    level: 6\n', '    level: "6"\n'), 'org.yaml'))[0]).toMatch(
      /^members\[0\]\.level: must be a whole number between 1 and 6/,
    );
  });

  it('rejects bad enum values, time zones and cron expressions', () => {
    const text = edit('action: confirm', 'action: deny')
      .replace('authority: public', 'authority: everyone')
      .replace('"30 8 * * 1-5"', '"every morning"');
    const errors = errorsOf(parseDirectory(text, 'org.yaml'));
    expect(errors).toEqual([
      `rooms[2].authority: must be one of: member, public (line ${lineOf(text, 'everyone')})`,
      `policies[1].rule.action: must be one of: confirm, block (line ${lineOf(text, 'deny')})`,
      `schedules[1].cron (schedule "daily-digest"): ${CRON} (line ${lineOf(text, 'every morning')})`,
    ]);
    const tz = edit('  timezone: Asia/Tokyo\n  values', '  timezone: Tokyo\n  values');
    expect(errorsOf(parseDirectory(tz, 'org.yaml'))).toEqual([
      `organization.timezone: must be an IANA time zone such as Asia/Tokyo (line ${lineOf(tz, 'timezone: Tokyo')})`,
    ]);
  });

  it('rejects closing days that are not "MM-DD" / "YYYY-MM-DD" or mix the two', () => {
    const closing = (entry: string) =>
      errorsOf(parseDirectory(edit('{ name: 年末年始休業, from: "12-29", to: "01-03" }', entry), 'org.yaml')).join(
        '\n',
      );
    expect(closing('{ name: 年末年始休業, from: "12/29", to: "01-03" }')).toMatch(
      /organization\.closing_days\[0\]\.from: must be "MM-DD" \(every year\) or "YYYY-MM-DD" \(once\)/,
    );
    expect(closing('{ name: 夏季休業, from: "2026-08-13", to: "08-16" }')).toMatch(/both be "MM-DD" or both/);
    expect(closing('{ name: 夏季休業, from: "2026-08-16", to: "2026-08-13" }')).toMatch(/must not be before "from"/);
    const once = edit('{ name: 年末年始休業, from: "12-29", to: "01-03" }', '{ name: 夏季休業, from: "2026-08-13" }');
    expect(parseDirectory(once, 'org.yaml').ok).toBe(true);
  });

  it('names the schedule whose cron or time zone does not parse, and wants five cron fields', () => {
    const sixFields = edit('cron: "0 9 * * 1-5"', 'cron: "*/10 * * * * *"');
    expect(errorsOf(parseDirectory(sixFields, 'org.yaml'))).toEqual([
      `schedules[0].cron (schedule "deadline-reminder"): ${CRON} (line ${lineOf(sixFields, '*/10')})`,
    ]);
    const tz = edit(
      '    cron: "30 8 * * 1-5"\n    timezone: Asia/Tokyo',
      '    cron: "30 8 * * 1-5"\n    timezone: Mars/Olympus',
    );
    expect(errorsOf(parseDirectory(tz, 'org.yaml'))).toEqual([
      `schedules[1].timezone (schedule "daily-digest"): must be an IANA time zone such as Asia/Tokyo ` +
        `(line ${lineOf(tz, 'Mars/Olympus')})`,
    ]);
  });

  it('checks quiet hours and allows one admin room per platform', () => {
    const quiet = edit('quiet_hours: "21:00-08:00"', 'quiet_hours: "9pm-8am"');
    expect(errorsOf(parseDirectory(quiet, 'org.yaml'))).toEqual([
      `organization.quiet_hours: must be "HH:MM-HH:MM", e.g. "21:00-08:00" (line ${lineOf(quiet, '9pm')})`,
    ]);
    const twoAdmins = edit(
      'name: コンソール（全体）, authority: member }',
      'name: コンソール（全体）, authority: member, admin: true }',
    );
    expect(errorsOf(parseDirectory(twoAdmins, 'org.yaml'))).toEqual([
      `rooms[3].admin: console already has an admin room (rooms[0]) (line ${lineOf(twoAdmins, 'console-admin')})`,
    ]);
  });

  it('asks for Discord ids in quotes (they exceed exact JavaScript numbers)', () => {
    const text = edit('discord: "402938475612345601"', 'discord: 402938475612345601');
    const line = lineOf(text, 'discord: 402938475612345601');
    expect(errorsOf(parseDirectory(text, 'org.yaml'))[0]).toMatch(
      new RegExp(`^members\\[0\\]\\.accounts\\.discord: must be a Discord user id in quotes.*\\(line ${line}\\)$`),
    );
  });

  it('rejects a parent department that does not exist', () => {
    const text = edit(
      '{ id: sales-osaka, name: 大阪営業課, parent: sales }',
      '{ id: sales-osaka, name: 大阪営業課, parent: sales-west }',
    );
    expect(errorsOf(parseDirectory(text, 'org.yaml'))).toEqual([
      `departments[3].parent: unknown department "sales-west" (line ${lineOf(text, 'sales-west')})`,
    ]);
  });

  it('rejects department cycles and unknown member departments', () => {
    const text = edit('{ id: exec, name: 経営 }', '{ id: exec, name: 経営, parent: dev }').replace(
      'department: admin',
      'department: hr',
    );
    expect(errorsOf(parseDirectory(text, 'org.yaml'))).toEqual([
      `departments[0].parent: department cycle: exec → dev → exec (line ${lineOf(text, 'id: exec')})`,
      `members[1].department: unknown department "hr" (line ${lineOf(text, 'department: hr')})`,
    ]);
  });

  it('rejects the same platform account on two members', () => {
    const text = edit('chatwork: 1005', 'chatwork: 1004');
    expect(errorsOf(parseDirectory(text, 'org.yaml'))).toEqual([
      'members[4].accounts.chatwork: chatwork account "1004" is already used by member "tanaka-taro" ' +
        `(line ${lineOf(text, 'chatwork: 1004, console: tanaka-hanako')})`,
    ]);
  });

  it('rejects duplicate ids of members, departments, rooms and policies', () => {
    const text = edit('id: ito-yui', 'id: tanaka-taro')
      .replace(
        '  - { id: dev, name: 開発部, parent: exec, aliases: [開発, Dev, Engineering] }\n',
        '  - { id: dev, name: 開発部, parent: exec, aliases: [開発, Dev, Engineering] }\n' +
          '  - { id: admin, name: 総務部, parent: exec }\n',
      )
      .replace('{ platform: chatwork, id: "5001"', '{ platform: discord, id: "1122334455667788"')
      .replace('id: bad-news-first', 'id: no-mass-mention');
    const errors = errorsOf(parseDirectory(text, 'org.yaml'));
    expect(errors).toEqual([
      expect.stringMatching(
        /^departments\[6\]\.id: duplicate department id "admin" \(already used by departments\[4\]\) \(line \d+\)$/,
      ),
      expect.stringMatching(/^members\[6\]\.id: duplicate member id "tanaka-taro" \(already used by members\[3\]\)/),
      expect.stringMatching(
        /^rooms\[2\]\.id: duplicate room "discord:1122334455667788" \(already used by rooms\[1\]\)/,
      ),
      expect.stringMatching(/^policies\[2\]\.id: duplicate policy id "no-mass-mention"/),
    ]);
  });

  it('rejects a schedule room that is not listed in rooms', () => {
    const text = sample.replace(
      /room: \{ platform: console, id: console-general \}/,
      'room: { platform: console, id: nowhere }',
    );
    expect(errorsOf(parseDirectory(text, 'org.yaml'))).toEqual([
      'schedules[0].room (schedule "deadline-reminder"): room console "nowhere" is not listed in rooms ' +
        `(line ${lineOf(text, 'nowhere')})`,
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    const text = edit(
      '  - { id: sales, name: 営業部, parent: exec, aliases: [営業, Sales] }',
      '  - { id: sales, name: 営業部',
    );
    const errors = errorsOf(parseDirectory(text, 'org.yaml'));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toMatch(/^YAML syntax error: .+ \(line \d+\)$/);
    const dup = errorsOf(
      parseDirectory('organization: { id: a, name: A }\norganization: { id: b, name: B }\n', 'org.yaml'),
    );
    expect(dup).toEqual(['YAML syntax error: Map keys must be unique (line 2)']);
  });

  it('rejects an empty file and a document that is not a mapping', () => {
    expect(errorsOf(parseDirectory('', 'empty.yaml'))).toEqual(['empty.yaml: the file is empty']);
    expect(errorsOf(parseDirectory('- a\n- b\n', 'list.yaml'))).toEqual([
      '(root): must be a mapping (key: value) (line 1)',
    ]);
    expect(errorsOf(parseDirectory('departments: []\n', 'x.yaml'))).toEqual(['organization: is required (line 1)']);
  });
});
