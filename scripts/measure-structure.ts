// `npx tsx scripts/measure-structure.ts [root]`: how readable the code base is, in numbers.
// Prints the lines in src/ and handlers/, the import loops between src/ folders (and how many of the imports
// in them are type-only), and, per table, the files that write it (Prisma model calls and raw SQL).
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');

function files(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.includes('generated'))
    .map((f) => path.join(dir, f).split(path.sep).join('/'));
}

const src = files('src');
const handlers = files('handlers');
const lines = (fs_: string[]) =>
  fs_.reduce((n, f) => n + fs.readFileSync(path.join(root, f), 'utf8').split('\n').length, 0);
console.log(`lines: src ${lines(src)}, handlers ${lines(handlers)}`);

// Folder of a file: src/<folder>/… (top-level files count as "src").
const folderOf = (f: string) => {
  const parts = f.split('/');
  return parts[0] === 'src' ? (parts.length > 2 ? parts[1] : '(src)') : parts[0];
};
const edges = new Map<string, { all: number; typeOnly: number }>();
for (const f of [...src, ...handlers]) {
  const text = fs.readFileSync(path.join(root, f), 'utf8');
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+'(\.[^']+)'/gms)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), m[3]!));
    if (!target.startsWith('src/') && !target.startsWith('handlers')) continue;
    const a = folderOf(f);
    // `../guardian` is the folder's index.ts, not a file at the top of src/.
    const isDir = fs.existsSync(path.join(root, target)) && fs.statSync(path.join(root, target)).isDirectory();
    const b = folderOf(target.endsWith('.ts') ? target : isDir ? `${target}/index.ts` : `${target}.ts`);
    if (a === b) continue;
    const key = `${a} -> ${b}`;
    const e = edges.get(key) ?? { all: 0, typeOnly: 0 };
    e.all += 1;
    if (m[2]) e.typeOnly += 1;
    edges.set(key, e);
  }
}
// Loops: pairs of folders that import each other (directly or through others): strongly connected components.
const graph = new Map<string, Set<string>>();
for (const key of edges.keys()) {
  const [a, b] = key.split(' -> ') as [string, string];
  if (!graph.has(a)) graph.set(a, new Set());
  if (!graph.has(b)) graph.set(b, new Set());
  graph.get(a)!.add(b);
}
let index = 0;
const idx = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const on = new Set<string>();
const sccs: string[][] = [];
function strong(v: string) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  on.add(v);
  for (const w of graph.get(v)!) {
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
  }
  if (low.get(v) === idx.get(v)) {
    const comp: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      on.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1) sccs.push(comp.sort());
  }
}
for (const v of graph.keys()) if (!idx.has(v)) strong(v);
const mutual = [...edges.keys()].filter((k) => {
  const [a, b] = k.split(' -> ') as [string, string];
  return edges.has(`${b} -> ${a}`) && a < b;
});
console.log(`folders importing each other (pairs): ${mutual.length}`);
for (const k of mutual) {
  const [a, b] = k.split(' -> ') as [string, string];
  const ab = edges.get(k)!;
  const ba = edges.get(`${b} -> ${a}`)!;
  console.log(`  ${a} <-> ${b}: ${ab.all} (${ab.typeOnly} type-only) / ${ba.all} (${ba.typeOnly} type-only)`);
}
console.log(`folder cycles (strongly connected groups): ${sccs.length}`);
for (const c of sccs) console.log(`  ${c.join(', ')}`);

// Writers per table.
const schema = fs.readFileSync(path.join(root, 'prisma/schema.prisma'), 'utf8');
const models = [...schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)].map((m) => {
  const map = /@@map\("([^"]+)"\)/.exec(m[2]!);
  return { model: m[1]!, table: map ? map[1]! : m[1]! };
});
const writers = new Map<string, Set<string>>();
for (const f of [...src, ...handlers, ...files('scripts')]) {
  const text = fs.readFileSync(path.join(root, f), 'utf8');
  for (const { model, table } of models) {
    const client = model[0]!.toLowerCase() + model.slice(1);
    const writes = '(create|update|delete)(Many)?(AndReturn)?|upsert';
    const prisma = new RegExp(`\\.${client}\\.(${writes})\\b`);
    const raw = new RegExp(`(INSERT INTO|UPDATE|DELETE FROM)\\s+"?${table}"?[\\s(]`, 'i');
    if (prisma.test(text) || raw.test(text)) {
      if (!writers.has(table)) writers.set(table, new Set());
      writers.get(table)!.add(f);
    }
  }
}
const rows = [...writers.entries()].sort((a, b) => b[1].size - a[1].size);
console.log(
  `tables written: ${rows.length}; written from more than one file: ${rows.filter((r) => r[1].size > 1).length}`,
);
for (const [table, fs_] of rows) console.log(`  ${table}: ${fs_.size} (${[...fs_].join(', ')})`);
