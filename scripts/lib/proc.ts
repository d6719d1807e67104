import fs from 'node:fs';

/**
 * The fields of a /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat) line after the command name, from the state
 * (field 3 in proc(5)) on: index = field number − 3 (parent id 1, utime 11, stime 12, nice 16). The name may
 * hold spaces and parentheses, so the fields start after its last ')'.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * Every process's children, read once from Linux's /proc. For the bench (the service's process tree) and the
 * proof (a database server's backends).
 */
export function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(statFields(st)[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      /* gone */
    }
  }
  return children;
}
