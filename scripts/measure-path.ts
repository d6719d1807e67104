// `npx tsx scripts/measure-path.ts [root]`: the static call graph of the ChatWork webhook → reply path.
// From the webhook route, the intake, the worker pool, the turn runner and the ChatWork sender, follows every
// call the type checker can resolve to a function in src/ or handlers/ (an interface method leads to the
// classes that implement it; outside src/adapters/ only ChatWork's), and prints the files reached, the call
// sites between files, and how many of those enter the turn runner from another file. A list of functions (the
// turn's steps, `TURN_STEPS`, an array or a `Steps` chain) counts as calls to each of them from the function that
// reads the list.
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(process.argv[2] ?? '.');
const ENTRIES: [file: string, name: string][] = [
  ['src/adapters/chatwork/webhook.route.ts', 'createChatworkWebhookHandler'],
  ['src/adapters/intake.ts', 'accept'],
  ['src/queue/worker-pool.ts', 'run'],
  ['src/turn/turn.ts', 'runTurn'],
  ['src/adapters/chatwork/chatwork-sender.ts', 'send'],
];
const RUNNER = 'src/turn/turn.ts';

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined,
  },
)!;
const program = ts.createProgram(config.fileNames, config.options);
const checker = program.getTypeChecker();
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
const ours = (f: string) => /^(src|handlers)\//.test(rel(f)) && !rel(f).startsWith('src/generated/');

type Fn = ts.FunctionLikeDeclaration;
const isFn = (n: ts.Node): n is Fn =>
  ts.isFunctionDeclaration(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isArrowFunction(n) ||
  ts.isFunctionExpression(n) ||
  ts.isGetAccessorDeclaration(n);

/** The outermost function a node belongs to (closures count as part of the function that creates them). */
function owner(n: ts.Node): Fn | null {
  let found: Fn | null = null;
  for (let p: ts.Node | undefined = n; p; p = p.parent) if (isFn(p)) found = p;
  return found;
}

/** Classes implementing each interface, by interface symbol. */
const implementers = new Map<ts.Symbol, ts.ClassDeclaration[]>();
for (const sf of program.getSourceFiles()) {
  if (!ours(sf.fileName)) continue;
  sf.forEachChild(function visit(n) {
    if (ts.isClassDeclaration(n)) {
      for (const h of n.heritageClauses ?? [])
        for (const t of h.types) {
          const s = checker.getSymbolAtLocation(t.expression);
          const target = s && s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
          if (target) implementers.set(target, [...(implementers.get(target) ?? []), n]);
        }
    }
    n.forEachChild(visit);
  });
}

function targets(call: ts.CallExpression | ts.NewExpression): Fn[] {
  const callee = ts.isPropertyAccessExpression(call.expression) ? call.expression.name : call.expression;
  let s = checker.getSymbolAtLocation(callee);
  if (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
  const out: Fn[] = [];
  for (const d of s?.declarations ?? []) {
    if (!ours(d.getSourceFile().fileName)) continue;
    if (ts.isClassDeclaration(d)) {
      const ctor = d.members.find(ts.isConstructorDeclaration);
      if (ctor) out.push(ctor);
    } else if (isFn(d)) out.push(d);
    else if (ts.isVariableDeclaration(d) && d.initializer && isFn(d.initializer)) out.push(d.initializer);
    else if ((ts.isMethodSignature(d) || ts.isPropertySignature(d)) && ts.isInterfaceDeclaration(d.parent)) {
      const iface = checker.getSymbolAtLocation(d.parent.name);
      for (const c of (iface && implementers.get(iface)) ?? []) {
        const file = rel(c.getSourceFile().fileName);
        if (file.startsWith('src/adapters/') && !file.startsWith('src/adapters/chatwork/')) continue;
        const m = c.members.find((x) => isFn(x) && x.name?.getText() === d.name.getText());
        if (m && isFn(m)) out.push(m);
      }
    }
  }
  return out.map((f) => owner(f) ?? f);
}

/** The elements of a list of steps: `[f, g, …]`, or `Steps.of().then(f).then(g)…` (core/steps.ts). */
function elements(init: ts.Expression): ts.Expression[] {
  if (ts.isArrayLiteralExpression(init)) return [...init.elements];
  const out: ts.Expression[] = [];
  let e: ts.Expression = init;
  while (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
    if (e.expression.name.text === 'then' && e.arguments.length === 1) out.unshift(e.arguments[0]!);
    e = e.expression.expression;
  }
  return out;
}

/** The functions of a `const LIST = [f, g, …]` (or a chain of steps) that `n` names, each with its place. */
function listed(n: ts.Identifier): [ts.Node, Fn][] {
  let s = checker.getSymbolAtLocation(n);
  if (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
  const d = s?.valueDeclaration;
  if (!d || !ts.isVariableDeclaration(d) || !d.initializer) return [];
  if (!ours(d.getSourceFile().fileName)) return [];
  const out: [ts.Node, Fn][] = [];
  for (const el of elements(d.initializer)) {
    if (!ts.isIdentifier(el)) continue;
    let e = checker.getSymbolAtLocation(el);
    if (e && e.flags & ts.SymbolFlags.Alias) e = checker.getAliasedSymbol(e);
    const v = e?.valueDeclaration;
    if (v && ts.isVariableDeclaration(v) && v.initializer && isFn(v.initializer)) out.push([el, v.initializer]);
    else if (v && isFn(v)) out.push([el, v]);
  }
  return out;
}

function entry(file: string, name: string): Fn {
  const sf = program.getSourceFile(path.join(root, file))!;
  let hit: Fn | undefined;
  sf.forEachChild(function visit(n) {
    if (!hit && isFn(n) && (n as { name?: ts.Node }).name?.getText() === name) hit = n;
    n.forEachChild(visit);
  });
  if (!hit) throw new Error(`entry ${file}:${name} not found`);
  return hit;
}

const seen = new Set<Fn>();
const queue = ENTRIES.map(([f, n]) => entry(f, n));
const crossSites = new Set<ts.Node>();
let runnerEntries = 0;
while (queue.length > 0) {
  const fn = queue.pop()!;
  if (seen.has(fn)) continue;
  seen.add(fn);
  const from = rel(fn.getSourceFile().fileName);
  fn.forEachChild(function visit(n) {
    if (ts.isIdentifier(n)) {
      for (const [site, t] of listed(n)) {
        if (rel(t.getSourceFile().fileName) !== from) crossSites.add(site);
        queue.push(t);
      }
    }
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      for (const t of targets(n)) {
        const to = rel(t.getSourceFile().fileName);
        if (to !== from && !crossSites.has(n)) {
          crossSites.add(n);
          if (to === RUNNER) runnerEntries += 1;
        }
        queue.push(t);
      }
    }
    n.forEachChild(visit);
  });
}
const files = new Set([...seen].map((f) => rel(f.getSourceFile().fileName)));
console.log(`functions reached: ${seen.size}`);
console.log(`files reached: ${files.size}`);
console.log(`call sites between files: ${crossSites.size}`);
console.log(`call sites entering ${RUNNER} from another file: ${runnerEntries}`);
if (process.env.VERBOSE) console.log([...files].sort().join('\n'));
