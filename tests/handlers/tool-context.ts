import path from 'node:path';
import type { Db } from '../../src/db/prisma';
import { importDirectoryFile } from '../../src/org/import-directory';
import type { ToolContext, ToolServices } from '../../src/tools/types';

/** The sample organisation (two 田中, chatwork room "5001", console room "console-general"). */
export const SAMPLE_ORG = path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml');

/** Friday 2026-11-20 10:00 in Tokyo. */
export const NOW = new Date('2026-11-20T01:00:00.000Z');

export async function seedSample(db: Db): Promise<void> {
  await importDirectoryFile(db, SAMPLE_ORG);
}

let seq = 0;

/** A fresh idempotency key (the executor memoises per key). */
export function newKey(): string {
  seq += 1;
  return `turn-${Date.now().toString(36)}-${seq}:0`;
}

/** A tool context for a sample member (null = unknown sender) in a console or ChatWork room. */
export async function toolContext(
  db: Db,
  memberId: string | null,
  opts: {
    platform?: 'console' | 'chatwork';
    roomId?: string;
    key?: string;
    services?: Partial<ToolServices>;
    now?: Date;
  } = {},
): Promise<ToolContext> {
  const m = memberId
    ? await db.member.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: memberId } } })
    : null;
  const platform = opts.platform ?? 'console';
  return {
    orgId: 'acme',
    platform,
    roomId: opts.roomId ?? (platform === 'chatwork' ? '5001' : 'console-general'),
    member: m ? { id: m.id, name: m.name, level: m.level, departmentId: m.departmentId } : null,
    idempotencyKey: opts.key ?? newKey(),
    now: () => opts.now ?? NOW,
    timezone: 'Asia/Tokyo',
    services: { db, ...opts.services },
  };
}
