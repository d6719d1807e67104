import fs from 'node:fs';

/**
 * Every process's children, read once from Linux's /proc (the parent id is the 2nd field after the command
 * name in /proc/<pid>/stat; the name may hold spaces and parentheses, so the fields start after its last ')').
 * For the bench (the service's process tree) and the proof (a database server's backends).
 */
export function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      /* gone */
    }
  }
  return children;
}
