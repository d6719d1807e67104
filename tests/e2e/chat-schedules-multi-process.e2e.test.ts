import fs from 'node:fs';
import { startFakeChatwork } from '../../bench/fake-chatwork-server';
import { createDb } from '../../src/db/prisma';
import { createChatSchedule } from '../../src/scheduler/schedule-store';
import { startFakeAnthropicServer } from '../fakes/anthropic-server';
import { replyCall } from '../fakes/anthropic-sse';
import { createTestDatabase } from '../helpers/db';
import { sampleDirectoryWith } from '../helpers/directory';
import { runService, type ServiceProcess } from '../helpers/process';
import { CW_WEBHOOK_TOKEN, TEST_API_KEY, waitFor } from '../helpers/service';

/** Every minute, all day, every day: the store accepts it (the chat tools ask for 30 minutes and up). */
const EVERY_MINUTE = { freq: 'interval', everyMinutes: 1, from: '00:00', until: '23:59', on: 'every_day' };

describe('three service processes, chat-made schedules firing every minute (issue 31, R-P2)', () => {
  it('send one message per recipient per period — also when the instance sending it is killed', async () => {
    const t = await createTestDatabase();
    await t.close();
    const notice = replyCall('リマインドの時間ウル！忘れずにお願いするウル🐺');
    const llm = await startFakeAnthropicServer(() => notice, { delayMs: () => 1500 });
    const cw = await startFakeChatwork();
    const directory = sampleDirectoryWith({ schedules: '', edits: [['  quiet_hours: "21:00-08:00"\n', '']] });
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
      DATABASE_POOL_MAX: '4',
    };
    const procs: ServiceProcess[] = [runService(env), runService(env), runService(env)];
    const db = createDb({ url: t.url, poolMax: 2 });
    try {
      await Promise.all(procs.map((p) => p.ready));
      const firstMinute = new Date(Math.ceil((Date.now() + 1000) / 60_000) * 60_000);
      const ids: string[] = [];
      for (const [who, text] of [
        ['tanaka-taro', '日報を書く'],
        ['tanaka-hanako', '経費を締める'],
      ] as const) {
        const s = await createChatSchedule(db, {
          orgId: 'acme',
          kind: 'reminder',
          ownerMemberId: who,
          targetMemberId: who,
          departmentId: null,
          platform: 'chatwork',
          roomId: '5001',
          text,
          rule: EVERY_MINUTE,
          timezone: 'Asia/Tokyo',
          catchUp: 'once',
          quietPolicy: 'deliver',
          nextRunAt: firstMinute,
          idempotencyKey: null,
        });
        ids.push(s.id);
      }
      const occurrences = (period: Date) =>
        db.reminder.findMany({ where: { scheduleId: { in: ids }, remindAt: period } });
      const sentFor = async (period: Date) => {
        const rem = await occurrences(period);
        return db.outboundMessage.findMany({
          where: { dedupeKey: { in: rem.map((r) => `notice:reminder:${r.id}`) }, status: 'sent' },
        });
      };

      // Period 1: three instances sweep the same minute; each schedule's period is fired once. The minute is up to
      // 61 s away and the sweep runs every 15 s: wait longer than both.
      await waitFor(async () => (await sentFor(firstMinute)).length === 2, 100000, 'first period sent');

      // Period 2: kill the instance whose worker holds one of its reminders mid-way (the model is answering).
      const second = new Date(firstMinute.getTime() + 60_000);
      const held = await waitFor(
        async () => {
          const rem = await occurrences(second);
          return db.workItem.findFirst({
            where: { dedupeKey: { in: rem.map((r) => `reminder:${r.id}`) }, state: 'running' },
          });
        },
        80000,
        'a reminder of the second period in flight',
      );
      const pid = Number(/^hisho-(\d+)-/.exec(held.claimedBy ?? '')?.[1]);
      const victim = procs.find((p) => p.child.pid === pid)!;
      expect(victim).toBeDefined();
      victim.child.kill('SIGKILL');
      await victim.exited;
      await waitFor(async () => (await sentFor(second)).length === 2, 40000, 'second period sent by the survivors');
      const third = new Date(second.getTime() + 60_000);
      await waitFor(async () => (await sentFor(third)).length === 2, 80000, 'third period sent');

      await Promise.all(
        procs
          .filter((p) => p !== victim)
          .map((p) => {
            p.child.kill('SIGTERM');
            return p.exited;
          }),
      );
      const runs = await db.scheduleRun.findMany({ where: { scheduleId: { in: ids } }, orderBy: { period: 'asc' } });
      // One period row per schedule and minute, consecutive from the first minute.
      for (const id of ids) {
        const mine = runs.filter((r) => r.scheduleId === id);
        mine.forEach((r, i) => expect(r.period!.getTime()).toBe(firstMinute.getTime() + i * 60_000));
        expect(mine.length).toBeGreaterThanOrEqual(3);
      }
      // One reminder per schedule and period, each sent at most once; ChatWork got one post per sent message.
      const rems = await db.reminder.findMany({ where: { scheduleId: { in: ids } } });
      expect(new Set(rems.map((r) => `${r.scheduleId}@${r.remindAt.toISOString()}`)).size).toBe(rems.length);
      const sent = await db.outboundMessage.findMany({ where: { dedupeKey: { startsWith: 'notice:reminder:' } } });
      const sentOk = sent.filter((s) => s.status === 'sent');
      expect(new Set(sentOk.map((s) => s.dedupeKey)).size).toBe(sentOk.length);
      expect(cw.posts.filter((p) => p.roomId === '5001')).toHaveLength(sentOk.length);
      for (const period of [firstMinute, second, third]) {
        const who = (await occurrences(period)).map((r) => r.memberId).sort();
        expect(who).toEqual(['tanaka-hanako', 'tanaka-taro']);
      }
    } catch (err) {
      const state = JSON.stringify(
        {
          s: await db.schedule.findMany({ where: { source: 'chat' } }),
          runs: await db.scheduleRun.findMany(),
          rems: await db.reminder.findMany(),
          items: await db.workItem.findMany({ where: { type: 'notification' } }),
          out: await db.outboundMessage.findMany(),
        },
        (_k, v) => (typeof v === 'bigint' ? String(v) : v),
      );
      throw new Error(
        `${(err as Error).message}\n${state}\n${procs.map((p) => p.output().slice(-3000)).join('\n---\n')}`,
      );
    } finally {
      for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await db.$disconnect();
      await llm.close();
      await cw.close();
      fs.rmSync(directory, { force: true });
    }
  }, 300000);
});
