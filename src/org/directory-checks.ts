import type { Directory } from './directory.schema';
import { formatPath, type DirectoryPath } from './yaml-locate';

/** One problem found in a directory, located by its key path. */
export interface DirectoryProblem {
  path: DirectoryPath;
  message: string;
}

/**
 * Referential checks the schema cannot express: duplicate ids, unknown or cyclic parent departments,
 * unknown member departments, a platform account on two members, schedules pointing at unlisted rooms.
 */
export function checkDirectory(dir: Directory): DirectoryProblem[] {
  const problems: DirectoryProblem[] = [];
  const firstIndex = (list: string, keys: string[], what: string): Map<string, number> => {
    const seen = new Map<string, number>();
    keys.forEach((key, i) => {
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else
        problems.push({
          path: [list, i, 'id'],
          message: `duplicate ${what} "${key}" (already used by ${formatPath([list, first])})`,
        });
    });
    return seen;
  };

  const departments = firstIndex(
    'departments',
    dir.departments.map((d) => d.id),
    'department id',
  );
  firstIndex(
    'members',
    dir.members.map((m) => m.id),
    'member id',
  );
  const rooms = firstIndex(
    'rooms',
    dir.rooms.map((r) => `${r.platform}:${r.id}`),
    'room',
  );
  firstIndex(
    'policies',
    dir.policies.map((p) => p.id),
    'policy id',
  );
  firstIndex(
    'schedules',
    dir.schedules.map((s) => s.id),
    'schedule id',
  );

  dir.departments.forEach((d, i) => {
    if (d.parent === undefined) return;
    if (d.parent === d.id)
      problems.push({ path: ['departments', i, 'parent'], message: 'a department cannot be its own parent' });
    else if (!departments.has(d.parent))
      problems.push({ path: ['departments', i, 'parent'], message: `unknown department "${d.parent}"` });
  });
  problems.push(...findCycles(dir));

  const accounts = new Map<string, string>();
  dir.members.forEach((m, i) => {
    if (m.department !== undefined && !departments.has(m.department)) {
      problems.push({ path: ['members', i, 'department'], message: `unknown department "${m.department}"` });
    }
    for (const [platform, accountId] of Object.entries(m.accounts ?? {})) {
      if (accountId === undefined) continue;
      const key = `${platform}:${accountId}`;
      const owner = accounts.get(key);
      if (owner === undefined) accounts.set(key, m.id);
      else if (owner !== m.id) {
        problems.push({
          path: ['members', i, 'accounts', platform],
          message: `${platform} account "${accountId}" is already used by member "${owner}"`,
        });
      }
    }
  });

  dir.schedules.forEach((s, i) => {
    if (s.room && !rooms.has(`${s.room.platform}:${s.room.id}`)) {
      problems.push({
        path: ['schedules', i, 'room'],
        message: `room ${s.room.platform} "${s.room.id}" is not listed in rooms`,
      });
    }
  });
  return problems;
}

/** Reports each parent cycle once, at the first department of the cycle in file order. */
function findCycles(dir: Directory): DirectoryProblem[] {
  const parentOf = new Map<string, string | undefined>();
  const indexOf = new Map<string, number>();
  dir.departments.forEach((d, i) => {
    if (!indexOf.has(d.id)) {
      indexOf.set(d.id, i);
      parentOf.set(d.id, d.parent);
    }
  });
  const problems: DirectoryProblem[] = [];
  const reported = new Set<string>();
  for (const start of parentOf.keys()) {
    const chain: string[] = [];
    let cur: string | undefined = start;
    while (cur !== undefined && parentOf.has(cur) && !chain.includes(cur)) {
      chain.push(cur);
      cur = parentOf.get(cur);
    }
    if (cur === undefined || !chain.includes(cur) || reported.has(cur)) continue;
    const cycle = chain.slice(chain.indexOf(cur));
    if (cycle.length < 2) continue; // self-parent is reported separately
    cycle.forEach((id) => reported.add(id));
    const first = cycle.reduce((a, b) => ((indexOf.get(a) ?? 0) <= (indexOf.get(b) ?? 0) ? a : b));
    const from = cycle.indexOf(first);
    const ordered = [...cycle.slice(from), ...cycle.slice(0, from), first];
    problems.push({
      path: ['departments', indexOf.get(first) ?? 0, 'parent'],
      message: `department cycle: ${ordered.join(' → ')}`,
    });
  }
  return problems;
}
