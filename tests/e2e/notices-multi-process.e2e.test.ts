import fs from 'node:fs';
import { startFakeChatwork } from '../../bench/fake-chatwork-server';
import { createDb } from '../../src/db/prisma';
import { startFakeAnthropicServer } from '../fakes/anthropic-server';
import { replyCall } from '../fakes/anthropic-sse';
import { createTestDatabase } from '../helpers/db';
import { sampleDirectoryWith } from '../helpers/directory';
import { runService, type ServiceProcess } from '../helpers/process';
import { CW_WEBHOOK_TOKEN, TEST_API_KEY, waitFor } from '../helpers/service';

const SCHEDULE = 'acme:every-minute';

describe('three service processes on one database, a schedule firing every minute (R-P2, R-Q4)', () => {
  it('send one message per recipient per period — also when the instance sending it is killed', async () => {
    const t = await createTestDatabase();
    await t.close();
    const notice = replyCall('期限の近いタスクがあるウル！今日のうちに確認してほしいウル🐺');
    const llm = await startFakeAnthropicServer(() => notice, { delayMs: () => 1500 });
    const cw = await startFakeChatwork();
    const directory = sampleDirectoryWith({
      schedules:
        '  - { id: every-minute, kind: deadline_reminder, cron: "* * * * *",' +
        ' room: { platform: chatwork, id: "5001" } }\n',
      edits: [['  quiet_hours: "21:00-08:00"\n', '']],
    });
    const env = {
      DATABASE_URL: t.url,
      PORT: '0',
      ORG_DIRECTORY_FILE: directory,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: llm.url,
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_COST_LIMIT_USD: '0',
      CHATWORK_API_TOKEN: 'cw-token-for-tests-000',
      CHATWORK_WEBHOOK_TOKEN: CW_WEBHOOK_TOKEN,
      CHATWORK_API_BASE_URL: cw.url,
      WORK_CLAIM_TTL_MS: '2000',
      WORKER_CONCURRENCY: '2',
      SCHEDULE_RELOAD_SECONDS: '5',
      DATABASE_POOL_MAX: '4',
    };
    const procs: ServiceProcess[] = [runService(env), runService(env), runService(env)];
    const db = createDb({ url: t.url, poolMax: 2 });
    try {
      await Promise.all(procs.map((p) => p.ready));
      const due = new Date(Date.now() + 3 * 3_600_000);
      await db.task.createMany({
        data: [
          { orgId: 'acme', title: '請求書の確認', assigneeMemberId: 'tanaka-taro', dueAt: due },
          { orgId: 'acme', title: '提案書の仕上げ', assigneeMemberId: 'tanaka-hanako', dueAt: due },
        ],
      });
      const periodRows = () =>
        db.scheduleRun.findMany({ where: { scheduleId: SCHEDULE, recipients: { gt: 0 } }, orderBy: { period: 'asc' } });
      const sentFor = (period: Date) =>
        db.outboundMessage.findMany({
          where: { dedupeKey: { startsWith: `notice:${SCHEDULE}:${period.toISOString()}:` }, status: 'sent' },
        });

      // Period 1: three instances tick at the same minute; one fires it.
      const [p1] = await waitFor(
        async () => {
          const r = await periodRows();
          return r.length >= 1 ? r : null;
        },
        80000,
        'first period',
      );
      expect(p1).toMatchObject({ recipients: 2, status: 'fired' });
      await waitFor(async () => (await sentFor(p1!.period!)).length === 2, 20000, 'first period sent');

      // Period 2: kill the instance whose worker holds one of its notices mid-way (the model is answering).
      const p2 = await waitFor(
        async () => (await periodRows()).find((r) => r.period! > p1!.period!),
        80000,
        'second period',
      );
      const held = await waitFor(
        () =>
          db.workItem.findFirst({
            where: { dedupeKey: { startsWith: `notice:${SCHEDULE}:${p2.period!.toISOString()}:` }, state: 'running' },
          }),
        10000,
        'a notice in flight',
      );
      const pid = Number(/^hisho-(\d+)-/.exec(held.claimedBy ?? '')?.[1]);
      const victim = procs.find((p) => p.child.pid === pid)!;
      expect(victim).toBeDefined();
      victim.child.kill('SIGKILL');
      await victim.exited;
      await waitFor(async () => (await sentFor(p2.period!)).length === 2, 30000, 'second period sent by the survivors');

      // Stop the survivors cleanly, then count what ChatWork received.
      await Promise.all(
        procs
          .filter((p) => p !== victim)
          .map((p) => {
            p.child.kill('SIGTERM');
            return p.exited;
          }),
      );
      const periods = await db.scheduleRun.findMany({
        where: { scheduleId: SCHEDULE, period: { gte: p1!.period! } },
        orderBy: { period: 'asc' },
      });
      const sent = await db.outboundMessage.findMany({
        where: { dedupeKey: { startsWith: `notice:${SCHEDULE}:` }, status: 'sent' },
      });
      // Every minute from the first period on was recorded once and sent at most once per recipient.
      periods.forEach((r, i) => expect(r.period!.getTime()).toBe(p1!.period!.getTime() + i * 60_000));
      for (const r of periods) {
        const keys = sent
          .filter((s) => s.dedupeKey.includes(r.period!.toISOString()))
          .map((s) => s.dedupeKey.split(':').at(-1));
        expect(new Set(keys).size).toBe(keys.length);
      }
      expect(sent.filter((s) => s.dedupeKey.includes(p2.period!.toISOString()))).toHaveLength(2);
      // ChatWork got exactly one post per sent notice: nobody heard anything twice.
      expect(cw.posts.filter((p) => p.roomId === '5001')).toHaveLength(sent.length);
      const perPeriodAndPerson = new Set(sent.map((s) => s.dedupeKey));
      expect(perPeriodAndPerson.size).toBe(sent.length);
    } finally {
      for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await db.$disconnect();
      await llm.close();
      await cw.close();
      fs.rmSync(directory, { force: true });
    }
  }, 240000);
});
