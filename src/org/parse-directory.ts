import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { checkDirectory, checkMcpEnvironment, type DirectoryProblem } from './directory-checks';
import { ZDirectory, type Directory } from './directory.schema';
import { formatPath, lineOf, type DirectoryPath } from './yaml-locate';
import { describeYamlSlip, findFullWidthSlip, findYamlSlip, type YamlSlip } from './yaml-slips';

/** The outcome of `parseDirectory`: a validated directory, or every problem found (each with its line). */
export type ParseDirectoryResult =
  { ok: true; directory: Directory } | { ok: false; errors: string[]; slip?: YamlSlip };

/**
 * Parses and validates an organisation directory file (YAML, or JSON, which is YAML).
 * Errors name the key path and the line, e.g. `members[2].levl: unknown key (line 14)`. Structural errors
 * are reported first; referential checks (unknown or cyclic departments, duplicate ids, shared
 * platform accounts) run only on a structurally valid file.
 *
 * @param text the file contents
 * @param fileName used in errors about the file as a whole (e.g. an empty file)
 * @param env when given (at start-up), every `${NAME}` of an MCP server section must be set in it
 */
export function parseDirectory(
  text: string,
  fileName: string,
  env?: Readonly<Record<string, string | undefined>>,
): ParseDirectoryResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // A typing slip (a full-width colon, a tab …) explains the whole cascade of parser errors it causes.
    const first = doc.errors[0]!;
    const slip = findYamlSlip(text, first.linePos?.[0].line ?? 0, first.message);
    if (slip) return { ok: false, errors: [`YAML: ${describeYamlSlip(slip)}`], slip };
    return {
      ok: false,
      errors: doc.errors.map((e) => `YAML syntax error: ${firstLine(e.message)} (line ${e.linePos?.[0].line ?? '?'})`),
    };
  }
  if (doc.contents === null) return { ok: false, errors: [`${fileName}: the file is empty`] };

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, errors: [`${fileName}: ${(err as Error).message}`] };
  }
  const withLines = (problems: DirectoryProblem[]) =>
    problems.map((p) => ({ p, line: lineOf(doc, lineCounter, p.path) })).sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const located = (problems: DirectoryProblem[]): string[] =>
    withLines(problems).map(({ p, line }) => {
      const where = line === undefined ? '' : ` (line ${line})`;
      return `${formatPath(p.path)}${scheduleLabel(data, p.path)}: ${p.message}${where}`;
    });

  const parsed = ZDirectory.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap((issue) => describeIssue(issue, data));
    // `level: ６` looks right on screen: the full-width character is the problem to name.
    const refused = withLines(problems).flatMap(({ line }) => (line === undefined ? [] : [line]));
    const slip = findFullWidthSlip(text, refused);
    if (slip) return { ok: false, errors: [describeYamlSlip(slip)], slip };
    return { ok: false, errors: located(problems) };
  }
  const problems = [...checkDirectory(parsed.data), ...(env ? checkMcpEnvironment(parsed.data, env) : [])];
  if (problems.length > 0) return { ok: false, errors: located(problems) };
  return { ok: true, directory: parsed.data };
}

/** ` (schedule "daily-digest")` for problems inside a schedule entry, so a start-up error names the schedule. */
function scheduleLabel(data: unknown, path: DirectoryPath): string {
  if (path[0] !== 'schedules' || typeof path[1] !== 'number' || path.length < 3) return '';
  const id = valueAt(data, ['schedules', path[1], 'id']);
  return typeof id === 'string' || typeof id === 'number' ? ` (schedule "${String(id)}")` : '';
}

/** The first line of a `yaml` error message, without its own "at line …" suffix (we add the line). */
function firstLine(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping (key: value)',
};

/** Turns one zod issue into readable problems (one per unknown key). */
function describeIssue(issue: z.core.$ZodIssue, data: unknown): DirectoryProblem[] {
  const path: DirectoryPath = issue.path;
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...path, key], message: 'unknown key' }));
    case 'invalid_type':
      if (valueAt(data, path) === undefined) return [{ path, message: 'is required' }];
      return [
        {
          path,
          message: issue.message.startsWith('Invalid input')
            ? `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`
            : issue.message,
        },
      ];
    case 'invalid_value':
      return [
        {
          path,
          message: issue.message.startsWith('Invalid option')
            ? `must be one of: ${issue.values.map(String).join(', ')}`
            : issue.message,
        },
      ];
    case 'too_small':
      if (issue.message.startsWith('Too small') && issue.origin === 'string')
        return [{ path, message: 'must not be empty' }];
      return [{ path, message: issue.message }];
    default:
      return [{ path, message: issue.message }];
  }
}

function valueAt(data: unknown, path: DirectoryPath): unknown {
  let cur = data;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}
