import { fuzzBody, fuzzSection, rng } from '../../proof/fuzz';
import { repliedTo, tally } from '../../proof/harness';
import { killRounds } from '../../proof/kill';
import { ANSWER_MARKER } from '../../proof/model';
import { openProofWorld, type ProofWorld } from '../../proof/world';

describe('npm run proof machinery', () => {
  it('counts lost and doubled replies from what ChatWork received against what was acknowledged', () => {
    const outcomes = new Map<string, number | 'refused'>([
      ['m1', 200],
      ['m2', 200],
      ['m3', 200],
      ['m4', 'refused'],
      ['m5', 503],
    ]);
    const reply = (id: string, text = `${ANSWER_MARKER}！`) => ({
      body: `[rp aid=1004 to=5001-${id}]田中さん\n${text}`,
    });
    const t = tally(
      outcomes,
      [reply('m1'), reply('m2'), reply('m2'), reply('m5', 'ごめんなさいウル'), { body: '[toall]\nお知らせ' }],
      ANSWER_MARKER,
    );
    expect(t).toMatchObject({
      sent: 5,
      acknowledged: 3,
      refused: 2,
      lost: 1,
      lostIds: ['m3'],
      doubled: 1,
      doubledIds: ['m2'],
      apologies: 1,
      answeredUnacknowledged: 1,
    });
    expect(repliedTo('[rp aid=1 to=2-3]x')).toBe('3');
    expect(repliedTo('本文 [rp aid=1 to=2-3]')).toBeNull();
  });

  it('draws the same fuzz bodies from the same seed, covering every kind', () => {
    const a = rng(7);
    const b = rng(7);
    const kinds = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const x = fuzzBody(a);
      const y = fuzzBody(b);
      expect(y.kind).toBe(x.kind);
      kinds.add(x.kind);
    }
    expect([...kinds].sort()).toEqual([
      'bad_signature',
      'hostile_valid',
      'nested_json',
      'odd_unicode',
      'one_mb_strings',
      'random_bytes',
      'random_bytes_signed',
      'truncated_json',
      'wrong_types',
    ]);
  });

  describe('against the service as a child process (databases on the test server)', () => {
    let w: ProofWorld;
    beforeAll(async () => {
      w = await openProofWorld({ databaseUrl: process.env.HISHO_TEST_SERVER_URL });
    }, 120_000);
    // Closing stops the service child and drops its databases: on a loaded 2-core machine this took over 30 s.
    afterAll(async () => {
      await w.close();
    }, 120_000);

    it('fuzzes the webhook: no crash, no 5xx without error id, nothing stored unacknowledged or executed', async () => {
      const f = await fuzzSection(w, { n: 200, seed: 3, concurrency: 8 }, () => undefined);
      expect(f).toMatchObject({
        crashed: false,
        serverErrorsWithoutId: 0,
        storedUnacknowledged: 0,
        markupInReplies: 0,
        unanswered: 0,
      });
      expect(f.executed).toEqual({ tasks: 0, memories: 0, reminders: 0, goals: 0, chatworkTasks: 0, announcements: 0 });
      const allowed: Record<string, string[]> = {
        random_bytes: ['401'],
        bad_signature: ['401'],
        random_bytes_signed: ['400'],
        truncated_json: ['400'],
        nested_json: ['400', '413'],
        wrong_types: ['200', '400'],
        odd_unicode: ['200', '400'],
        hostile_valid: ['200', '400'],
        one_mb_strings: ['200', '400', '413'],
      };
      for (const [kind, statuses] of Object.entries(f.byKind))
        expect(allowed[kind]).toEqual(expect.arrayContaining(Object.keys(statuses)));
      expect(f.byKind.hostile_valid?.['200']).toBeGreaterThan(0);
      expect(f.acknowledged).toBeGreaterThan(0);
    }, 60000);

    it('kills the service during a stream of mentions and restarts it: what was acknowledged is answered', async () => {
      w.model.delayMs = 700;
      const r = await killRounds(w, { kills: 1, rate: 5, upMs: 1500, instances: 1, claimTtlMs: 3000 }, () => undefined);
      expect(r.kills).toBe(1);
      expect(r.acknowledged).toBeGreaterThan(0);
      // The single instance refuses mentions while it restarts (ChatWork would not retry them).
      expect(r.refused).toBeGreaterThan(0);
      expect(r.lost).toBe(0);
    }, 60000);
  });
});
