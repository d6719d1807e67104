import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadPrompts, PROMPTS_DIR } from '../../src/brain/prompts';
import { PersonaFileError } from '../../src/brain/persona-file';
import { loadConfig } from '../../src/config/env';
import { startService } from '../../src/service';
import { checkReplyClaims } from '../../src/guardian';
import { silentLogger } from '../../src/observability/logger';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { consoleBotMessages, consoleSay } from '../helpers/console';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const EXAMPLE = path.join(PROMPTS_DIR, 'persona.example.yaml');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-persona-'));
let n = 0;
/** A persona file with this text (as an operator saves it). */
function file(text: string): string {
  const p = path.join(dir, `persona-${++n}.yaml`);
  fs.writeFileSync(p, text);
  return p;
}
const GOOD = `name: こまち\nfirst_person: あたし\nsentence_endings: [ニャ]\n`;

/** What start-up says for a persona file: the Japanese and the English sentence. */
function problem(text: string): { ja: string; en: string; file: string } {
  const p = file(text);
  try {
    loadPrompts('soul', PROMPTS_DIR, p);
  } catch (err) {
    if (err instanceof PersonaFileError) return { ja: err.ja, en: err.en, file: p };
    throw err;
  }
  throw new Error('the persona file was accepted');
}

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a persona file (PERSONA_FILE): name, first person, sentence endings, tone and texts, no code', () => {
  it('the shipped example becomes the persona prompt and replaces the texts it names', () => {
    const p = loadPrompts('soul', PROMPTS_DIR, EXAMPLE);
    expect(p.persona).toContain('あなたは「さくら」');
    expect(p.persona).toContain('自分のことは「わたし」と呼ぶ');
    expect(p.persona).toContain('文末を「です」「ます」で終える');
    expect(p.persona).toContain('- 絵文字は使わない。');
    expect(p.persona).not.toMatch(/\{\{|ウル|ソウル/);
    // Its base is polite: texts it does not replace are polite's, never ソウルくん's 「ウル」.
    const polite = loadPrompts('polite');
    expect(p.messages.ja['reply.stranger']).toContain('さくらです');
    expect(p.messages.ja['confirm.cancelled']).toBe(polite.messages.ja['confirm.cancelled']);
    expect(Object.values(p.messages.ja).join('')).not.toContain('ウル');
    expect(p.messages.ja['bot.names']!.split(',')).toEqual(expect.arrayContaining(['さくら', 'さくらさん', 'Hisho']));
    expect(p.sentenceEndings).toEqual(['です', 'ます']);
    // The prompt costs about what a built-in persona does.
    expect(p.persona.length).toBeLessThan(polite.persona.length * 2);
  });

  it('says what is wrong in one sentence with the file and the line, in Japanese and in English', () => {
    const cases: [string, RegExp, RegExp][] = [
      // The IME's full-width colon, the commonest slip.
      [`name: こまち\nfirst_person：あたし\n`, /の2行目を読めません.*「:」は半角/, /line 2: not valid YAML/],
      [`name: こまち\n\tfirst_person: あたし\n`, /の2行目を読めません.*字下げは半角スペース/, /line 2/],
      [`${GOOD}nmae: たま\n`, /の4行目: 「nmae」は使えない項目です/, /line 4: "nmae" is not an item/],
      [
        `name: こまち\nsentence_endings: [ニャ]\n`,
        /に first_person（一人称、例: わたし）がありません/,
        /has no first_person/,
      ],
      [`${GOOD}base: cat\n`, /の4行目: base（soul か polite）を正しく書いてください/, /line 4: write base/],
      [
        `${GOOD}messages:\n  ja:\n    reply.strenger: こんにちはニャ\n`,
        /の6行目: 「reply.strenger」は置き換えられる文ではありません/,
        /line 6: "reply.strenger" is not a message/,
      ],
      [
        `${GOOD}messages:\n  ja:\n    error.INTERNAL: うまくできなかったニャ\n`,
        /の6行目: 「error.INTERNAL」の文には \{\{errorId\}\} をそのまま入れてください/,
        /must contain \{\{errorId\}\}/,
      ],
    ];
    for (const [text, ja, en] of cases) {
      const p = problem(text);
      expect(p.ja).toMatch(ja);
      expect(p.en).toMatch(en);
      for (const sentence of [p.ja, p.en]) {
        expect(sentence).toContain(p.file);
        expect(sentence.split('\n')).toHaveLength(1);
      }
    }
    const missing = path.join(dir, 'no-such-persona.yaml');
    expect(() => loadPrompts('soul', PROMPTS_DIR, missing)).toThrow(`PERSONA_FILE: ${missing} cannot be read`);
  });

  it('stops start-up with that sentence before the port or the database is touched', async () => {
    const bad = file(`name: こまち\nfirst_person：あたし\n`);
    const config = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none',
      PERSONA_FILE: bad,
    });
    const started = startService(config, { logger: silentLogger() });
    await expect(started).rejects.toThrow(bad);
    await expect(started).rejects.toMatchObject({
      name: 'StartupError',
      message: expect.stringMatching(/line 2: not valid YAML|の2行目を読めません/),
    });
  });

  it("the reply check reads the persona's own endings as the end of a statement", () => {
    // 「登録したニャ」 claims a task that no call created: without the persona's endings it slipped through.
    expect(checkReplyClaims('田中さんのタスクを登録したニャ', new Set()).action).toBe('ALLOW');
    const r = checkReplyClaims('田中さんのタスクを登録したニャ', new Set(), { endings: ['ニャ'] });
    expect(r.action).toBe('MODIFY');
    expect(r.claims.map((c) => c.text)).toEqual(['登録した']);
    expect(checkReplyClaims('登録したタスクを見るニャ', new Set(), { endings: ['ニャ'] }).action).toBe('ALLOW');
  });
});

describe('a persona file in a running service', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    const own = file(
      `${GOOD}base: polite\ntone: |\n  のんびり話す。\nmessages:\n  ja:\n` +
        '    confirm.cancelled: わかったニャ、やめておくニャ。ほかにできることがあれば言ってニャ。\n',
    );
    svc = await startTestService({ PERSONA_FILE: own });
  });
  afterAll(async () => {
    llm.stop();
    await svc?.close();
  });

  it('the model hears the persona; the room hears its texts', async () => {
    llm.script(replyCall('こんにちはニャ'));
    await consoleSay(svc, 'suzuki-kenji', 'c-persona', 'こんにちは');
    await waitFor(async () => (await consoleBotMessages(svc, 'c-persona')).length >= 1, 20000, 'a reply');
    expect(JSON.stringify(llm.requests[0]!.system)).toContain('あなたは「こまち」');
    expect(JSON.stringify(llm.requests[0]!.system)).toContain('- のんびり話す。');

    llm.script(toolCall('create_task', { assignee: '田中花子', title: '備品の発注' }, { overall: 0.6 }));
    await consoleSay(svc, 'suzuki-kenji', 'c-persona', '田中花子さんに備品の発注をお願い');
    await waitFor(async () => (await consoleBotMessages(svc, 'c-persona')).length >= 2, 20000, 'a question');
    await consoleSay(svc, 'suzuki-kenji', 'c-persona', 'いいえ');
    await waitFor(async () => (await consoleBotMessages(svc, 'c-persona')).length >= 3, 20000, 'the answer');
    const said = (await consoleBotMessages(svc, 'c-persona')).map((m) => m.text);
    expect(said[2]).toContain('わかったニャ、やめておくニャ。');
    // Texts it does not replace are its base's (polite), not ソウルくん's.
    expect(said[1]).toContain('実行してよろしいですか');
  }, 60000);
});
