/**
 * Directory lookups (R-T4): who is who — names, aliases, departments and titles of active members.
 * Levels, preferences and platform accounts are never returned, nor members of top-secret departments
 * the sender may not see.
 */
import { z } from 'zod';
import { defineTool } from '../src/tools/define-tool';
import { matchMembers, normaliseName, plainName as plain } from '../src/authorization/directory';
import { hiddenTopSecret } from '../src/authorization/scope';
import { ToolError } from '../src/tools/types';
import { dbOf } from './_people';

/** Maximum number of members one lookup returns. */
export const LOOKUP_LIMIT = 10;

/** Match rank of one text against the query (lower is better), or undefined. */
function rank(text: string, q: string, qPlain: string): number | undefined {
  const forms = [normaliseName(text), plain(text)].filter((f) => f.length > 0);
  if (forms.some((f) => f === q || f === qPlain)) return 0;
  if (forms.some((f) => f.startsWith(q) || f.startsWith(qPlain))) return 1;
  if (forms.some((f) => f.includes(q) || f.includes(qPlain))) return 2;
  return undefined;
}

/** `lookup_person`: finds members by id, name, alias or department name. */
export const lookupPerson = defineTool({
  name: 'lookup_person',
  description:
    `Find who someone is or who is in a department: members by id, name, alias (e.g. 田中さん) or ` +
    `department name; at most ${LOOKUP_LIMIT} active members with id, name, aliases, department and title.`,
  triggerExamples: [
    '田中さんって誰？',
    '東京営業課のメンバーは？',
    '佐藤部長の部署を教えて',
    'Who is in the sales team?',
  ],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  input: z.object({
    query: z.string().trim().min(1).max(100).describe('A name, alias, member id or department name.'),
  }),
  output: z.object({
    members: z.array(
      z.object({
        memberId: z.string(),
        name: z.string(),
        aliases: z.array(z.string()),
        department: z.string().nullable(),
        title: z.string().nullable(),
      }),
    ),
    more: z.boolean(),
  }),
  async handler(input, ctx) {
    const db = dbOf(ctx);
    const q = normaliseName(input.query);
    const qPlain = plain(input.query);
    if (!q && !qPlain) throw new ToolError('Give a name, alias, member id or department to look up.', 'EMPTY_QUERY');
    const [members, departments] = await Promise.all([
      db.member.findMany({
        where: { orgId: ctx.orgId, active: true },
        select: {
          id: true,
          name: true,
          aliases: true,
          reading: true,
          romaji: true,
          dictionaryReading: true,
          departmentId: true,
          title: true,
        },
        orderBy: { id: 'asc' },
      }),
      db.department.findMany({
        where: { orgId: ctx.orgId },
        select: { id: true, name: true, parentId: true, topSecret: true },
      }),
    ]);
    // Members of a top-secret department the sender may not see do not exist for this lookup (R-Z1).
    const hidden = hiddenTopSecret(ctx.member ?? { level: 0, departmentId: null }, departments);
    const depts = new Map(departments.map((d) => [d.id, d.name]));
    const visible = members.filter((m) => m.departmentId === null || !hidden.has(m.departmentId));
    // Whom the shared matcher finds (readings, romaji, variants — as the gate and the other tools do) come first.
    const matched = new Set(matchMembers(input.query, visible).map((m) => m.id));
    const scored = visible.flatMap((m) => {
      const dept = m.departmentId ? (depts.get(m.departmentId) ?? null) : null;
      const ranks = [
        matched.has(m.id) ? 0 : undefined,
        m.id.toLowerCase() === qPlain ? 0 : m.id.toLowerCase().includes(qPlain) ? 2 : undefined,
        rank(m.name, q || qPlain, qPlain),
        ...m.aliases.map((a) => rank(a, q || qPlain, qPlain)),
        dept ? ((r) => (r === undefined ? undefined : 3 + r))(rank(dept, qPlain, qPlain)) : undefined,
      ].filter((r): r is number => r !== undefined);
      if (ranks.length === 0) return [];
      return [
        {
          score: Math.min(...ranks),
          out: { memberId: m.id, name: m.name, aliases: m.aliases, department: dept, title: m.title },
        },
      ];
    });
    scored.sort((a, b) => a.score - b.score || a.out.memberId.localeCompare(b.out.memberId));
    return { members: scored.slice(0, LOOKUP_LIMIT).map((s) => s.out), more: scored.length > LOOKUP_LIMIT };
  },
});
