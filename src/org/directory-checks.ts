import type { Directory } from './directory.schema';
import { ENV_REFERENCE, MODEL_NAME_MAX, mcpModelName } from '../core/mcp-names';
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

  const adminPlatforms = new Map<string, number>();
  dir.rooms.forEach((r, i) => {
    if (r.admin !== true) return;
    const first = adminPlatforms.get(r.platform);
    if (first === undefined) adminPlatforms.set(r.platform, i);
    else {
      const message = `${r.platform} already has an admin room (${formatPath(['rooms', first])})`;
      problems.push({ path: ['rooms', i, 'admin'], message });
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
  problems.push(...checkMcpServers(dir));
  return problems;
}

/** MCP server sections: unique ids, and tool names the model can tell apart and take (≤ 64 characters). */
function checkMcpServers(dir: Directory): DirectoryProblem[] {
  const problems: DirectoryProblem[] = [];
  const ids = new Map<string, number>();
  dir.mcp_servers.forEach((s, i) => {
    const first = ids.get(s.id);
    if (first !== undefined)
      problems.push({
        path: ['mcp_servers', i, 'id'],
        message: `duplicate MCP server id "${s.id}" (already used by mcp_servers[${first}])`,
      });
    else ids.set(s.id, i);
    const names = new Map<string, string>();
    for (const tool of Object.keys(s.tools)) {
      const name = mcpModelName(s.id, tool);
      const other = names.get(name);
      if (name.length > MODEL_NAME_MAX)
        problems.push({
          path: ['mcp_servers', i, 'tools', tool],
          message: `"${name}" is longer than ${MODEL_NAME_MAX} characters`,
        });
      else if (other !== undefined)
        problems.push({
          path: ['mcp_servers', i, 'tools', tool],
          message: `"${tool}" and "${other}" have the same name for the model`,
        });
      names.set(name, tool);
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

/** Every `${NAME}` an MCP server section uses (command, args, url, env, headers) must be set in `env`. */
export function checkMcpEnvironment(
  dir: Directory,
  env: Readonly<Record<string, string | undefined>>,
): DirectoryProblem[] {
  const problems: DirectoryProblem[] = [];
  dir.mcp_servers.forEach((s, i) => {
    const values: [DirectoryPath, string][] = [
      ...(s.command ? [[['mcp_servers', i, 'command'], s.command] as [DirectoryPath, string]] : []),
      ...(s.url ? [[['mcp_servers', i, 'url'], s.url] as [DirectoryPath, string]] : []),
      ...(s.args ?? []).map((a, j): [DirectoryPath, string] => [['mcp_servers', i, 'args', j], a]),
      ...Object.entries(s.env ?? {}).map(([k, v]): [DirectoryPath, string] => [['mcp_servers', i, 'env', k], v]),
      ...Object.entries(s.headers ?? {}).map(([k, v]): [DirectoryPath, string] => [
        ['mcp_servers', i, 'headers', k],
        v,
      ]),
    ];
    for (const [path, value] of values)
      for (const m of value.matchAll(ENV_REFERENCE))
        if (!env[m[1]!]) problems.push({ path, message: `the environment variable ${m[1]} is not set` });
  });
  return problems;
}
