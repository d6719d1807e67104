/**
 * Memory capabilities (R-T4): save what a person asks Hisho to remember about someone (person /
 * preference) or about the organisation (fact), look it up, and delete it. Visibility: the sender's own
 * memories and those about them, organisation facts, and — from level 3 — memories about members of the
 * departments in the sender's scope (top-secret departments only at level 6). Whom a new memory may be
 * about is the AuthorizationGate's table: someone else → asked first; an organisation fact below level 3
 * → asked first.
 */
import { z } from 'zod';
import { NO_DEPARTMENT, SCOPE_FIELDS, visibleDepartments } from '../src/authorization/scope';
import type { Db, Prisma } from '../src/db/prisma';
import { defineTool } from '../src/tools/define-tool';
import { ToolError } from '../src/tools/types';
import { fact } from './_describe';
import { createOnce, dbOf, requireSender, resolvePersonOrAsk, type PeopleContext, type Sender } from './_people';

const KINDS = ['person', 'preference', 'fact'] as const;
/** Maximum memories returned by one query. */
const QUERY_LIMIT = 20;

/** Lowest level that may read memories about other members of departments in scope. */
const OTHERS_LEVEL = 3;
/** Lowest level that may delete any memory of the organisation. */
const DELETE_ANY_LEVEL = 5;

/**
 * The memories of `orgId` that `sender` may read: created by them or about them, organisation facts
 * (no subject), and from level 3 memories about members of departments in their scope.
 */
export async function visibleMemoryWhere(db: Db, orgId: string, sender: Sender): Promise<Prisma.MemoryWhereInput> {
  const or: Prisma.MemoryWhereInput[] = [
    { createdByMemberId: sender.id },
    { subjectMemberId: sender.id },
    { kind: 'fact', subjectMemberId: null },
  ];
  if (sender.level >= OTHERS_LEVEL) {
    const departments = await db.department.findMany({ where: { orgId }, select: SCOPE_FIELDS });
    const visible = visibleDepartments(sender, departments);
    if (visible === 'ALL') or.push({ subjectMemberId: { not: null } });
    else if (visible.size > 0) {
      const inScope: Prisma.MemberWhereInput[] = [{ departmentId: { in: [...visible] } }];
      if (visible.has(NO_DEPARTMENT)) inScope.push({ departmentId: null });
      const members = await db.member.findMany({ where: { orgId, OR: inScope }, select: { id: true } });
      or.push({ subjectMemberId: { in: members.map((m) => m.id) } });
    }
  }
  return { orgId, OR: or };
}

async function memberName(db: Db, orgId: string, id: string | null): Promise<string | null> {
  if (!id) return null;
  const m = await db.member.findUnique({ where: { orgId_id: { orgId, id } }, select: { name: true } });
  return m?.name ?? null;
}

/** `save_memory`: stores one person / preference / fact memory (idempotent per proposal). */
export const saveMemory = defineTool({
  name: 'save_memory',
  description:
    'Remember something. kind "preference": what someone likes or how they work ' +
    '(subject defaults to the sender); ' +
    'kind "person": a fact about a person (subject required); kind "fact": an organisation fact (no ' +
    'subject). Store the content as a short, self-contained sentence.',
  triggerExamples: [
    '俺はコーヒー派って覚えて',
    '田中さんは朝が苦手だって覚えておいて',
    '経費精算の締めは毎月25日だと覚えておいて',
  ],
  input: z.object({
    kind: z.enum(KINDS).describe('person | preference | fact'),
    subject: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe('Who the memory is about (name or member id). Omit for the sender or for organisation facts.'),
    content: z.string().trim().min(1).max(1000).describe('What to remember.'),
  }),
  output: z.object({
    memoryId: z.string(),
    kind: z.enum(KINDS),
    subject: z.string().nullable(),
    alreadySaved: z.boolean(),
  }),
  effects: ['db.memory_create'],
  effectKind: 'remember',
  risk: 'none',
  requiredLevel: 1,
  // About someone else: asked first; an organisation fact: level 3+ or asked first (the gate's table).
  paramRoles: { subject: 'memory_subject', content: 'text' },
  organisationWide: (p) => p.kind === 'fact' && (p.subject === undefined || p.subject === null || p.subject === ''),
  describe: async (input, ctx) => {
    const en = ctx.lang === 'en';
    const subject = input.subject
      ? (await resolvePersonOrAsk(ctx, input.subject)).name
      : input.kind === 'fact'
        ? null
        : requireSender(ctx).name;
    const kind = {
      person: en ? 'about a person' : '人について',
      preference: en ? 'a preference' : '好み・やり方',
      fact: en ? 'an organisation fact' : '組織の情報',
    }[input.kind];
    return {
      summary: en ? 'Remember this.' : 'この内容を覚えておきます。',
      done: en ? 'Remembered this.' : 'この内容を覚えました。',
      facts: [
        fact(ctx, 'kind', { ja: '種類', en: 'Kind' }, kind),
        ...(subject ? [fact(ctx, 'subject', { ja: '誰の', en: 'About' }, subject)] : []),
        fact(ctx, 'content', { ja: '内容', en: 'Content' }, input.content),
      ],
    };
  },
  handler: async (input, ctx) => {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const { row, created } = await createOnce(
      () => db.memory.findUnique({ where: { idempotencyKey: ctx.idempotencyKey } }),
      async () => {
        let subjectMemberId: string | null = null;
        if (input.subject) subjectMemberId = (await resolvePersonOrAsk(ctx, input.subject)).memberId;
        else if (input.kind === 'preference') subjectMemberId = sender.id;
        else if (input.kind === 'person')
          throw new ToolError('A "person" memory needs a subject: who is it about?', 'MISSING_SUBJECT');
        return db.memory.create({
          data: {
            orgId: ctx.orgId,
            kind: input.kind,
            subjectMemberId,
            content: input.content,
            createdByMemberId: sender.id,
            roomId: ctx.roomId,
            idempotencyKey: ctx.idempotencyKey,
          },
        });
      },
    );
    return {
      memoryId: row.id,
      kind: row.kind as (typeof KINDS)[number],
      subject: await memberName(db, ctx.orgId, row.subjectMemberId),
      alreadySaved: !created,
    };
  },
});

/** `query_memory`: the newest memories (max 20) the sender may see, optionally filtered. */
export const queryMemory = defineTool({
  name: 'query_memory',
  description:
    'Look up what Hisho remembers about the sender, the organisation and (for managers) members in ' +
    'their scope. Optional keyword filter (any word matches) and person filter. Newest first, at most 20.',
  triggerExamples: [
    '私の好みって何を覚えてる？',
    '田中さんについて覚えていることを教えて',
    '経費精算について何か覚えてる？',
  ],
  input: z.object({
    query: z.string().trim().max(200).optional().describe('Keywords to look for in the memory text.'),
    subject: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe('Only memories about this person (name or member id).'),
  }),
  output: z.object({
    memories: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        subject: z.string().nullable(),
        content: z.string(),
        savedAt: z.string(),
      }),
    ),
    count: z.number().int(),
  }),
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { subject: 'target_user' },
  handler: async (input, ctx) => {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const and: Prisma.MemoryWhereInput[] = [await visibleMemoryWhere(db, ctx.orgId, sender)];
    if (input.subject) and.push({ subjectMemberId: (await resolvePersonOrAsk(ctx, input.subject)).memberId });
    const terms = (input.query ?? '')
      .split(/[\s\u3000、。,]+/)
      .filter((t) => t.length > 0)
      .slice(0, 10);
    if (terms.length > 0)
      and.push({ OR: terms.map((t) => ({ content: { contains: t, mode: 'insensitive' as const } })) });
    const rows = await db.memory.findMany({
      where: { AND: and },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: QUERY_LIMIT,
    });
    const ids = [...new Set(rows.map((r) => r.subjectMemberId).filter((id): id is string => id !== null))];
    const names = new Map(
      (
        await db.member.findMany({ where: { orgId: ctx.orgId, id: { in: ids } }, select: { id: true, name: true } })
      ).map((m) => [m.id, m.name]),
    );
    const memories = rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      subject: r.subjectMemberId ? (names.get(r.subjectMemberId) ?? null) : null,
      content: r.content,
      savedAt: r.createdAt.toISOString(),
    }));
    return { memories, count: memories.length };
  },
});

/** The memories among `ids` that the sender may delete (their own, about them; any from level 5). */
async function deletable<S extends Prisma.MemorySelect>(ctx: PeopleContext, ids: string[], select: S) {
  const sender = requireSender(ctx);
  const mayDelete: Prisma.MemoryWhereInput =
    sender.level >= DELETE_ANY_LEVEL
      ? { orgId: ctx.orgId }
      : { orgId: ctx.orgId, OR: [{ createdByMemberId: sender.id }, { subjectMemberId: sender.id }] };
  const where = { AND: [mayDelete, { id: { in: ids } }] };
  return dbOf(ctx).memory.findMany({ where, select, orderBy: { createdAt: 'asc' } });
}

/** `delete_memory`: deletes the given memories the sender may delete; the others are only counted. */
export const deleteMemory = defineTool({
  name: 'delete_memory',
  description:
    'Forget memories by id (from query_memory): those the sender saved or that are about them; ' +
    'other ids are left untouched and reported as not deleted.',
  triggerExamples: ['コーヒー派っていうのは忘れて', 'さっきのメモを削除して', 'Forget what I told you about lunch'],
  input: z.object({
    memory_ids: z.array(z.string().trim().min(1).max(100)).min(1).max(50).describe('Ids of the memories to delete.'),
  }),
  output: z.object({ deleted: z.number().int(), notDeleted: z.number().int(), notDeletedIds: z.array(z.string()) }),
  effects: ['db.memory_delete'],
  effectKind: 'forget',
  risk: 'high',
  requiredLevel: 1,
  paramRoles: { memory_ids: 'deletion' },
  describe: async (input, ctx) => {
    const en = ctx.lang === 'en';
    const ids = [...new Set(input.memory_ids)];
    const rows = await deletable(ctx, ids, { id: true, content: true });
    const short = (text: string) => (text.length > 40 ? `${text.slice(0, 39)}…` : text);
    const listed = rows.map((m) => `「${short(m.content)}」`).join(en ? ', ' : '、');
    return {
      summary: en ? `Delete ${rows.length} memory item(s).` : `記憶を${rows.length}件削除します。`,
      done: en ? `Deleted ${rows.length} memory item(s).` : `記憶を${rows.length}件削除しました。`,
      facts: [
        fact(ctx, 'deleted', { ja: '削除するもの', en: 'Deleted' }, rows.length > 0 ? listed : en ? 'none' : 'なし'),
        ...(ids.length > rows.length
          ? [
              fact(
                ctx,
                'kept',
                { ja: '削除できないもの', en: 'Not deletable' },
                `${ids.length - rows.length}${en ? '' : '件'}`,
              ),
            ]
          : []),
      ],
    };
  },
  handler: async (input, ctx) => {
    const db = dbOf(ctx);
    const ids = [...new Set(input.memory_ids)];
    const allowed = await deletable(ctx, ids, { id: true });
    const allowedIds = allowed.map((m) => m.id);
    const { count } =
      allowedIds.length > 0
        ? await db.memory.deleteMany({ where: { orgId: ctx.orgId, id: { in: allowedIds } } })
        : { count: 0 };
    const notDeletedIds = ids.filter((id) => !allowedIds.includes(id));
    return { deleted: count, notDeleted: ids.length - count, notDeletedIds };
  },
});
