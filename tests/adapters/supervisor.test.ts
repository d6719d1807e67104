import { AdapterSupervisor, type SupervisedAdapter } from '../../src/adapters/supervisor';
import type { AlertInput } from '../../src/notices/admin-alerts';
import { createMetrics } from '../../src/observability/metrics';
import { captureLogger } from '../helpers/logs';

describe('AdapterSupervisor', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function setup(outcomes: ('ok' | 'fail' | 'rejected')[]) {
    const { logger, lines } = captureLogger('info');
    const metrics = createMetrics({ defaultMetrics: false });
    const alerts: AlertInput[] = [];
    const sup = new AdapterSupervisor({
      logger,
      metrics,
      raise: (a) => alerts.push(a),
      downAlertMs: 60_000,
      firstRetryMs: 1000,
      maxRetryMs: 8000,
      rejectedRetryMs: 30 * 60_000,
    });
    let attempts = 0;
    const adapter: SupervisedAdapter = {
      platform: 'discord',
      connect: async () => {
        const o = outcomes[Math.min(attempts++, outcomes.length - 1)];
        if (o !== 'ok') throw Object.assign(new Error(o!), { rejected: o === 'rejected' });
      },
      classify: (err) => {
        const rejected = (err as { rejected: boolean }).rejected;
        return { reason: rejected ? 'token refused' : 'REST 503', reasonJa: '-', rejected };
      },
    };
    return { sup, adapter, lines, alerts, metrics, attempts: () => attempts };
  }
  const settle = async (ms: number) => {
    await jest.advanceTimersByTimeAsync(ms);
  };

  it('retries with doubling backoff up to the maximum, logs a reason once, and comes up', async () => {
    const s = setup(['fail', 'fail', 'fail', 'fail', 'fail', 'ok']);
    s.sup.supervise(s.adapter);
    await settle(0);
    expect(s.attempts()).toBe(1);
    // Delays 1 s, 2 s, 4 s, 8 s, 8 s (capped).
    for (const [ms, n] of [
      [999, 1],
      [1, 2],
      [2000, 3],
      [4000, 4],
      [8000, 5],
    ] as const) {
      await settle(ms);
      expect(s.attempts()).toBe(n);
    }
    expect(s.sup.status()[0]).toMatchObject({ state: 'down', reason: 'REST 503' });
    await settle(8000);
    expect(s.sup.status()[0]).toMatchObject({ state: 'up', reason: null });
    expect(s.lines.filter((l) => l.adapter === 'discord' && Number(l.level) >= 40)).toHaveLength(1);
    expect(await s.metrics.registry.getSingleMetricAsString('hisho_adapter_up')).toContain(
      'hisho_adapter_up{platform="discord"} 1',
    );
  });

  it('a refused credential is retried only after the long delay, with one error line', async () => {
    const s = setup(['rejected']);
    s.sup.supervise(s.adapter);
    await settle(29 * 60_000);
    expect(s.attempts()).toBe(1);
    await settle(60_000);
    expect(s.attempts()).toBe(2);
    const errors = s.lines.filter((l) => Number(l.level) >= 40);
    expect(errors).toEqual([expect.objectContaining({ level: 50, adapter: 'discord' })]);
  });

  it('raises adapter_down once per down period after downAlertMs, and not when it came up in time', async () => {
    const s = setup(['fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'fail', 'ok']);
    s.sup.supervise(s.adapter);
    await settle(59_000);
    expect(s.alerts).toHaveLength(0);
    await settle(1000);
    expect(s.alerts).toEqual([
      expect.objectContaining({ kind: 'adapter_down', facts: expect.objectContaining({ adapter: 'discord' }) }),
    ]);
    await settle(60_000);
    expect(s.alerts).toHaveLength(1);

    const t = setup(['fail', 'ok']);
    t.sup.supervise(t.adapter);
    await settle(120_000);
    expect(t.alerts).toHaveLength(0);
    s.sup.stop();
    t.sup.stop();
  });

  it('an adapter without a connection of its own is up', () => {
    const s = setup(['ok']);
    s.sup.always('console');
    expect(s.sup.status()).toEqual([expect.objectContaining({ platform: 'console', state: 'up' })]);
  });
});
