import fs from 'node:fs';
import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { importDirectoryFile } from '../../src/org/import-directory';
import { startService, type Service } from '../../src/service';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall } from '../fakes/fake-anthropic';
import { futureTokyo, TestClock, tokyoAt } from '../helpers/clock';
import { createTestDatabase } from '../helpers/db';
import { sampleDirectoryWith } from '../helpers/directory';
import { captureLogger } from '../helpers/logs';
import { TEST_API_KEY, waitFor } from '../helpers/service';

const NO_QUIET: [string, string] = ['  quiet_hours: "21:00-08:00"\n', ''];
const hourly =
  '  - { id: hourly-deadlines, kind: deadline_reminder, cron: "0 * * * *",' +
  ' room: { platform: console, id: console-general } }\n';

async function env(extra: Record<string, string> = {}) {
  const t = await createTestDatabase();
  await t.close();
  return loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: t.url,
    ANTHROPIC_API_KEY: TEST_API_KEY,
    ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
    LLM_MAX_RETRIES: '0',
    LLM_DAILY_COST_LIMIT_USD: '0',
    SELF_CRITIQUE_RATE: '0',
    WORKER_CONCURRENCY: '2',
    ...extra,
  });
}

describe('scheduled notices across restarts and directory changes (R-P1, R-P2)', () => {
  const llm = new FakeAnthropic();
  afterEach(() => llm.stop());

  it('downtime across two periods: one catch-up, the other counted; past the horizon nothing', async () => {
    const directory = sampleDirectoryWith({ schedules: hourly, edits: [NO_QUIET] });
    const config = await env({ ORG_DIRECTORY_FILE: directory });
    const clock = new TestClock(futureTokyo(1, '09:00:05'));
    const start = (extra: Partial<typeof config> = {}) =>
      startService(
        { ...config, ...extra },
        {
          logger: silentLogger(),
          workerPollMs: 50,
          noticeScheduler: true,
          now: clock.now,
          scheduleReloadMs: 3_600_000,
        },
      );
    let svc: Service = await start();
    const runs = () =>
      svc.db.scheduleRun.findMany({ where: { scheduleId: 'acme:hourly-deadlines' }, orderBy: { period: 'asc' } });
    const notices = () =>
      svc.db.conversationMessage.findMany({ where: { roomId: 'console-general', role: 'assistant' } });
    try {
      expect((await runs()).at(-1)).toMatchObject({
        period: tokyoAt(clock.current, 0, '09:00'),
        status: 'fired',
        recipients: 0,
      });
      await svc.db.task.create({
        data: {
          orgId: 'acme',
          title: '契約書の返送',
          assigneeMemberId: 'tanaka-taro',
          dueAt: tokyoAt(clock.current, 0, '18:00'),
        },
      });
      await svc.stop();

      // Down from 09:00 to 11:20: 10:00 and 11:00 were missed.
      clock.set(tokyoAt(clock.current, 0, '11:20'));
      llm.script(replyCall('田中さん、契約書の返送が今日までウル！🐺'));
      svc = await start();
      await waitFor(async () => (await notices()).length === 1, 8000, 'one catch-up notice');
      expect((await runs()).slice(-1)).toEqual([
        expect.objectContaining({
          period: tokyoAt(clock.current, 0, '11:00'),
          status: 'caught_up',
          skipped: 1,
          recipients: 1,
        }),
      ]);
      expect((await runs()).some((r) => r.period!.getTime() === tokyoAt(clock.current, 0, '10:00').getTime())).toBe(
        false,
      );
      expect(await (await fetch(`http://127.0.0.1:${svc.port}/metrics`)).text()).toMatch(
        /hisho_schedule_periods_total\{schedule="acme:hourly-deadlines",status="skipped"\} 1/,
      );
      await svc.scheduler!.sweep();
      await new Promise((r) => setTimeout(r, 300));
      expect(await notices()).toHaveLength(1);
      await svc.stop();

      // Down until 20:30 with a 20-minute horizon: 12:00 … 20:00 are all too old to send.
      clock.set(tokyoAt(clock.current, 0, '20:30'));
      svc = await start({ NOTICE_CATCHUP_HORIZON_MINUTES: 20 });
      expect((await runs()).at(-1)).toMatchObject({
        period: tokyoAt(clock.current, 0, '20:00'),
        status: 'skipped',
        skipped: 9,
        recipients: 0,
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(await notices()).toHaveLength(1);
    } finally {
      await svc.stop();
      fs.rmSync(directory, { force: true });
    }
  }, 60000);

  it('directory import → schedules change without a restart; an unsendable schedule warns', async () => {
    const directory = sampleDirectoryWith({
      schedules:
        '  - { id: chatwork-digest, kind: daily_digest, cron: "30 8 * * *",' +
        ' room: { platform: chatwork, id: "5001" } }\n',
      edits: [NO_QUIET],
    });
    const config = await env({ ORG_DIRECTORY_FILE: directory });
    const clock = new TestClock(futureTokyo(2, '13:15:05'));
    const { logger, lines } = captureLogger('info');
    const svc = await startService(config, {
      logger,
      workerPollMs: 50,
      noticeScheduler: true,
      now: clock.now,
      scheduleReloadMs: 200,
    });
    try {
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          schedule: 'acme:chatwork-digest',
          problem: 'platform_not_enabled',
          msg: 'schedule "acme:chatwork-digest" will not send: chatwork is not configured on any enabled adapter',
        }),
      );
      await svc.db.task.create({
        data: {
          orgId: 'acme',
          title: '議事録の共有',
          assigneeMemberId: 'tanaka-hanako',
          dueAt: tokyoAt(clock.current, 0, '18:00'),
        },
      });
      llm.script(replyCall('田中さん、議事録の共有が今日までウル🐺'));
      // What `npm run org:import -- FILE` does while the service runs: a new schedule in a console room.
      fs.writeFileSync(
        directory,
        fs.readFileSync(directory, 'utf8') +
          '  - { id: lunch-deadlines, kind: deadline_reminder, cron: "15 13 * * *",' +
          ' room: { platform: console, id: console-general } }\n',
      );
      await importDirectoryFile(svc.db, directory);
      const sent = await waitFor(
        () => svc.db.conversationMessage.findFirst({ where: { roomId: 'console-general', role: 'assistant' } }),
        8000,
        'notice of the new schedule',
      );
      expect(sent.accountId).toBe('tanaka-hanako');
      expect(svc.scheduler!.statuses()).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: 'acme:lunch-deadlines', problem: null, nextRun: expect.any(String) }),
          expect.objectContaining({ id: 'acme:chatwork-digest', problem: 'platform_not_enabled', nextRun: null }),
        ]),
      );
    } finally {
      await svc.stop();
      fs.rmSync(directory, { force: true });
    }
  }, 30000);
});

describe('a schedule whose cron does not parse', () => {
  it('stops start-up with an error naming the schedule', async () => {
    const directory = sampleDirectoryWith({
      schedules:
        '  - { id: broken, kind: daily_digest, cron: "61 8 * * *",' +
        ' room: { platform: console, id: console-general } }\n',
    });
    const config = await env({ ORG_DIRECTORY_FILE: directory });
    await expect(startService(config, { logger: silentLogger() })).rejects.toThrow(
      /schedules\[0\]\.cron \(schedule "broken"\): must be a valid cron expression/,
    );
    fs.rmSync(directory, { force: true });
  });
});
