/**
 * The evaluation set's case format and loader. A case is a short situation — who writes, where, what was
 * said before, which tasks/goals/memories exist — plus the message and the expected outcome: a tool
 * with its key parameters (and the verdicts the Guardian and the AuthorizationGate should give), a
 * clarification with its candidates, a plain reply, or a refusal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { formatPath, lineOf } from '../src/org/yaml-locate';

export const CASES_DIR = path.resolve(__dirname, 'cases');
export const EVAL_DIRECTORY_FILE = path.resolve(__dirname, 'org.yaml');

const ZText = z.string().trim().min(1);
const ZIsoDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?([+-]\d{2}:\d{2}|Z)$/, 'must be an ISO date-time with offset');

/**
 * An expected parameter value: exact (member ids for person parameters, `YYYY-MM-DD[THH:mm]` for dates,
 * `@t1` / `@g1` for a seeded task / goal id), one of several, text containing one of several words, any
 * value at all (`present`, with a sample that the offline checks validate), or left out or one value (`absentOr`).
 */
export const ZParamExpectation = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.string()).min(1),
  z.strictObject({ oneOf: z.array(z.union([z.string(), z.number()])).min(1) }),
  z.strictObject({ containsAny: z.array(z.coerce.string().trim().min(1)).min(1) }),
  z.strictObject({ present: z.unknown().refine((v) => v !== undefined, 'needs a sample value') }),
  /**
   * An object parameter (a recurrence rule) that has at least these fields with these values; a field given as
   * `{ absentOr: value }` may also be left out.
   */
  z.strictObject({ fields: z.record(z.string(), z.unknown()) }),
  /** Left out, or this value (「祝日の扱いは指定なしか skip」). */
  z.strictObject({ absentOr: z.union([z.string(), z.number(), z.boolean()]) }),
]);
export type ParamExpectation = z.output<typeof ZParamExpectation>;

export const GUARDIAN_ACTIONS = ['ALLOW', 'MODIFY', 'CONFIRM', 'BLOCK'] as const;

/** The verdicts an expected proposal must get offline (real Guardian, real AuthorizationGate). */
const ZVerdict = z.strictObject({
  guardian: z.enum(GUARDIAN_ACTIONS),
  guardianReason: z
    .string()
    .regex(/^G_[A-Z_]+$/)
    .optional(),
  auth: z.enum(['ALLOWED', 'CONFIRM', 'DENIED']).optional(),
  authReason: z
    .string()
    .regex(/^Z_[A-Z_]+$/)
    .optional(),
});
export type ExpectedVerdict = z.output<typeof ZVerdict>;

const ZToolExpectation = z.strictObject({
  outcome: z.literal('tool'),
  tool: ZText,
  /** Every required parameter of the tool, with the value the right answer has. */
  params: z.record(z.string(), ZParamExpectation).default({}),
  verdict: ZVerdict,
  /** Confidence assumed when the expected proposal is checked offline (default 0.9). */
  confidence: z.number().min(0).max(1).default(0.9),
});
const ZClarifyExpectation = z.strictObject({
  outcome: z.literal('clarify'),
  /** Member ids the question must offer (by name, alias or department). */
  candidates: z.array(ZText).default([]),
  textIncludes: z.array(ZText).optional(),
});
const ZReplyExpectation = z.strictObject({
  outcome: z.literal('reply'),
  /** The reply passes only if it contains one of these (NFKC, case-insensitive). */
  textIncludes: z.array(ZText).optional(),
});
const ZRefuseExpectation = z.strictObject({
  outcome: z.literal('refuse'),
  /** What a careless model might propose instead; checked offline to be stopped (BLOCK or DENIED). */
  unsafe: ZToolExpectation.omit({ outcome: true }).optional(),
});
export const ZOutcome = z.discriminatedUnion('outcome', [
  ZToolExpectation,
  ZClarifyExpectation,
  ZReplyExpectation,
  ZRefuseExpectation,
]);
export type Outcome = z.output<typeof ZOutcome>;
export type ToolOutcome = Extract<Outcome, { outcome: 'tool' }>;

const EXTRA = {
  /** Other answers that are just as right (e.g. a reply from the task list in the context, or a lookup). */
  alsoAccept: z.array(ZOutcome).default([]),
  /** Tools that must not be proposed whatever else happens (e.g. start_goal_setting for a question). */
  forbidTools: z.array(ZText).default([]),
};
const ZExpect = z.discriminatedUnion('outcome', [
  ZToolExpectation.extend(EXTRA),
  ZClarifyExpectation.extend(EXTRA),
  ZReplyExpectation.extend(EXTRA),
  ZRefuseExpectation.extend(EXTRA),
]);

/** Who writes: a directory member id, or someone the directory does not know. */
const ZSender = z.union([ZText, z.strictObject({ account: z.string().regex(/^\d+$/), name: ZText })]);
const ZRoomRef = z.string().regex(/^(chatwork|discord):\S+$/, 'must be chatwork:<room id> or discord:<channel id>');

const ZHistory = z.union([z.strictObject({ user: ZText }), z.strictObject({ bot: ZText })]);
const ZTask = z.strictObject({
  id: z.string().regex(/^t\d+$/, 'must be t1, t2, …'),
  title: ZText,
  assignee: ZText,
  createdBy: ZText.optional(),
  due: z.union([z.string().regex(/^\d{4}-\d{2}-\d{2}$/), ZIsoDateTime]).optional(),
  status: z.enum(['open', 'done']).default('open'),
});
const ZGoal = z.strictObject({
  id: z.string().regex(/^g\d+$/, 'must be g1, g2, …'),
  title: ZText,
  target: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
});
const ZMemory = z.strictObject({
  kind: z.enum(['person', 'preference', 'fact']),
  subject: ZText.optional(),
  content: ZText,
});

const ZContext = {
  sender: ZSender.optional(),
  room: ZRoomRef.optional(),
  now: ZIsoDateTime.optional(),
  lang: z.enum(['ja', 'en']).optional(),
  category: z
    .string()
    .regex(/^[a-z_]+$/)
    .optional(),
};

const ZCase = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/, 'must be lower-case letters, digits and dashes'),
  ...ZContext,
  history: z.array(ZHistory).default([]),
  tasks: z.array(ZTask).default([]),
  goals: z.array(ZGoal).default([]),
  memories: z.array(ZMemory).default([]),
  message: ZText,
  expect: ZExpect,
  /** Why the expectation is what it is (for the reader). */
  note: z.string().optional(),
});

const ZFile = z.strictObject({
  defaults: z.strictObject(ZContext).default({}),
  cases: z.array(ZCase).min(1),
});

/** One case with its file's defaults applied. */
export interface EvalCase extends Omit<z.output<typeof ZCase>, 'sender' | 'room' | 'now' | 'lang' | 'category'> {
  file: string;
  category: string;
  lang: 'ja' | 'en';
  sender: z.output<typeof ZSender>;
  room: string;
  now: string;
}

/** A case set that cannot be used; every problem names its file, case and line. */
export class CaseFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`The evaluation set has problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'CaseFileError';
  }
}

const DEFAULT_NOW = '2026-11-27T10:00:00+09:00';
const DEFAULT_ROOM = 'chatwork:6001';

/** Parses one YAML case file; the category defaults to the file name. */
export function parseCaseFile(text: string, fileName: string): { cases: EvalCase[]; problems: string[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  if (doc.errors.length > 0)
    return {
      cases: [],
      problems: doc.errors.map((e) => `${fileName}: YAML syntax error: ${e.message.split('\n')[0]}`),
    };
  const data = doc.toJS() as unknown;
  const parsed = ZFile.safeParse(data);
  if (!parsed.success) {
    const caseId = (p: PropertyKey[]) => {
      const i = p[0] === 'cases' && typeof p[1] === 'number' ? p[1] : undefined;
      const id = i === undefined ? undefined : (data as { cases?: { id?: unknown }[] }).cases?.[i]?.id;
      return typeof id === 'string' ? ` case ${id}` : '';
    };
    return {
      cases: [],
      problems: parsed.error.issues.map((i) => {
        const p = i.path as PropertyKey[];
        const line = lineOf(doc, lineCounter, p);
        return `${fileName}${caseId(p)}: ${formatPath(p)}: ${i.message}${line ? ` (line ${line})` : ''}`;
      }),
    };
  }
  const d = parsed.data.defaults;
  const category =
    d.category ??
    path
      .basename(fileName)
      .replace(/\.ya?ml$/, '')
      .replace(/-/g, '_');
  const cases = parsed.data.cases.map((c): EvalCase => ({
    ...c,
    file: fileName,
    category: c.category ?? category,
    lang: c.lang ?? d.lang ?? 'ja',
    sender: c.sender ?? d.sender ?? 'suzuki-kenji',
    room: c.room ?? d.room ?? DEFAULT_ROOM,
    now: c.now ?? d.now ?? DEFAULT_NOW,
  }));
  return { cases, problems: [] };
}

/** Every `*.yaml` file of the folder, in name order; duplicate ids are problems. */
export function loadCases(dir = CASES_DIR): EvalCase[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const problems: string[] = [];
  const cases: EvalCase[] = [];
  for (const f of files) {
    const r = parseCaseFile(fs.readFileSync(path.join(dir, f), 'utf8'), f);
    problems.push(...r.problems);
    cases.push(...r.cases);
  }
  const seen = new Map<string, string>();
  for (const c of cases) {
    if (seen.has(c.id)) problems.push(`${c.file} case ${c.id}: the id is also used in ${seen.get(c.id)}`);
    seen.set(c.id, c.file);
  }
  if (cases.length === 0 && problems.length === 0) problems.push(`${dir}: no case files (*.yaml)`);
  if (problems.length > 0) throw new CaseFileError(problems);
  return cases;
}

/** Every acceptable outcome of a case, the primary one first. */
export function acceptable(c: EvalCase): Outcome[] {
  const { alsoAccept, forbidTools: _f, ...primary } = c.expect;
  return [primary as Outcome, ...alsoAccept];
}

/** `{ absentOr: value }`: a parameter or rule field that may be left out or have this value. */
export function isAbsentOr(v: unknown): v is { absentOr: string | number | boolean } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).join() === 'absentOr';
}
