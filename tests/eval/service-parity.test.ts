import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EVAL_DIRECTORY_FILE, loadCases, type EvalCase } from '../../eval/cases';
import { runEval } from '../../eval/run-eval';
import { replyCall } from '../fakes/anthropic-sse';
import { lastUserText, startFakeAnthropicServer, type FakeAnthropicServer } from '../fakes/anthropic-server';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { BOT_ACCOUNT, chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * The evaluation set is only worth what its fidelity is (issue 29 point 7): for the same situation, the request
 * `npm run eval` sends the model must be byte for byte the request the service sends when ChatWork delivers the
 * message. Both run against a loopback Anthropic that records the bodies as they arrived.
 */
const NOW = '2026-11-27T10:00:00+09:00';
const CASES = `
defaults:
  now: ${NOW}
cases:
  - id: restricted-tools
    sender: watanabe-sho
    room: chatwork:6001
    message: 田中太郎さんに議事録の清書をお願いしておいて
    expect: { outcome: reply }
  - id: english-message
    lang: en
    sender: emily-clark
    room: chatwork:6002
    message: Could you remind me to send the weekly report tomorrow at 9?
    expect: { outcome: reply }
  - id: public-room
    sender: suzuki-kenji
    room: chatwork:6004
    message: 来週の営業会議の予定を教えて
    expect: { outcome: reply }
  - id: stranger
    sender: { account: "7000123", name: yuki }
    room: chatwork:6001
    message: はじめまして、御社の営業時間を教えてください
    expect: { outcome: reply }
`;

/** The case whose message ends the request's last user turn. */
function caseOf(body: string, cases: EvalCase[]): EvalCase | undefined {
  const text = lastUserText(JSON.parse(body) as never);
  return cases.find((c) => text.endsWith(c.message));
}

/** The request's last user turn (the context block and the message), as one text. */
function lastUserTurn(body: string): string {
  const last = (JSON.parse(body) as { messages: { content: { text?: string }[] | string }[] }).messages.at(-1)!;
  return typeof last.content === 'string' ? last.content : last.content.map((b) => b.text ?? '').join('\n');
}

/** The sender's ChatWork account in eval/org.yaml (a member id) or the stranger's. */
function accountOf(c: EvalCase): number {
  if (typeof c.sender !== 'string') return Number(c.sender.account);
  const yaml = fs.readFileSync(EVAL_DIRECTORY_FILE, 'utf8');
  const line = yaml.split('\n').find((l) => l.includes(`id: ${c.sender as string},`))!;
  return Number(/chatwork: (\d+)/.exec(line)![1]);
}

describe('npm run eval sends the model what the service sends', () => {
  let dir: string;
  let cases: EvalCase[];
  let evalFake: FakeAnthropicServer;
  let serviceFake: FakeAnthropicServer;
  let svc: TestService;
  const chatwork = new FakeChatwork();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-eval-parity-'));
    fs.writeFileSync(path.join(dir, 'parity.yaml'), CASES);
    cases = loadCases(dir);
    const answer = () => replyCall('わかったウル！ほかにあれば言ってほしいウル。');
    evalFake = await startFakeAnthropicServer(answer);
    serviceFake = await startFakeAnthropicServer(answer);
    const env = { ANTHROPIC_API_KEY: 'sk-ant-eval-test-0123456789abcdefghij', LLM_MAX_RETRIES: '0' };
    const out = await runEval({
      env: { ...env, DATABASE_URL: process.env.HISHO_TEST_SERVER_URL!, ANTHROPIC_BASE_URL: evalFake.url },
      casesDir: dir,
      out: path.join(dir, 'results.json'),
      log: () => undefined,
    });
    expect(out.problems).toEqual([]);
    expect(evalFake.bodies).toHaveLength(cases.length);
    svc = await startTestService(
      { ...chatworkEnv(), ...env, ANTHROPIC_BASE_URL: serviceFake.url, ORG_DIRECTORY_FILE: EVAL_DIRECTORY_FILE },
      { now: () => new Date(NOW) },
    );
  }, 120000);

  afterAll(async () => {
    await svc?.close();
    await evalFake?.close();
    await serviceFake?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The service's first request for the case, after ChatWork delivers the message as its TO button writes it. */
  async function serviceRequest(c: EvalCase): Promise<string> {
    chatwork.install();
    const eventTime = Math.floor(new Date(NOW).getTime() / 1000);
    const [, room] = c.room.split(':');
    const delivery = mentionDelivery({
      from: accountOf(c),
      room: Number(room),
      body: `[To:${BOT_ACCOUNT}]Hishoさん\n${c.message}`,
      eventTime,
    });
    const res = await postWebhook(svc.url, delivery.raw, delivery.signature);
    expect(res.status).toBe(200);
    return waitFor(() => serviceFake.bodies.find((b) => caseOf(b, cases) === c), 15000, `the request of ${c.id}`);
  }

  function evalRequest(c: EvalCase): string {
    return evalFake.bodies.find((b) => caseOf(b, cases) === c)!;
  }

  const situations: [string, string, RegExp][] = [
    ['restricted-tools', 'a level-1 sender: the line naming the tools they may not use', /この人には使えない機能: /],
    [
      'english-message',
      'English under the TO button’s 「Hishoさん」: the reply language is English',
      /返答の言語: English/,
    ],
    ['public-room', 'a room the directory lists as public', /公開・誰でも読める場/],
    ['stranger', 'a sender the directory does not know', /ディレクトリ未登録の相手/],
  ];
  it.each(situations)(
    '%s (%s)',
    async (id, _what, line) => {
      const c = cases.find((x) => x.id === id)!;
      const fromService = await serviceRequest(c);
      const fromEval = evalRequest(c);
      expect(fromService).toMatch(line);
      // The last user turn (context block and message) first, for a readable difference; then every byte.
      expect(lastUserTurn(fromEval)).toBe(lastUserTurn(fromService));
      expect(fromEval).toBe(fromService);
    },
    30000,
  );
});
