// `npm run eval [-- options]`: the evaluation set against the model (with ANTHROPIC_API_KEY), or its offline
// checks (without). Options: --only ID[,ID…] (ids or prefixes), --category NAME[,…], --concurrency N,
// --offline, --out FILE, --cases DIR, --compare A.json B.json; a configuration to try before switching the service to
// it: --model ID (instead of ANTHROPIC_MODEL), --routing on|off (instead of LLM_ROUTING), --small-model ID.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { environment } from '../src/config/env';
import { compareReports, type RunReport } from './report';
import { runEval } from './run-eval';

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      only: { type: 'string' },
      category: { type: 'string' },
      concurrency: { type: 'string' },
      offline: { type: 'boolean' },
      out: { type: 'string' },
      cases: { type: 'string' },
      compare: { type: 'boolean' },
      model: { type: 'string' },
      routing: { type: 'string' },
      'small-model': { type: 'string' },
    },
  });
  const log = (line: string) => console.log(line);
  if (values.compare) {
    if (positionals.length !== 2) {
      console.error('usage: npm run eval -- --compare A.json B.json');
      return 2;
    }
    const [a, b] = positionals.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as RunReport);
    for (const line of compareReports(a!, b!)) log(line);
    return 0;
  }
  const list = (v: string | undefined) =>
    v
      ?.split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  if (values.routing !== undefined && !['on', 'off'].includes(values.routing)) {
    console.error('usage: --routing on|off');
    return 2;
  }
  // The configuration tried: the service's settings, with these in place of theirs.
  const env = {
    ...environment(),
    ...(values.model ? { ANTHROPIC_MODEL: values.model } : {}),
    ...(values.routing ? { LLM_ROUTING: values.routing === 'on' ? 'true' : 'false' } : {}),
    ...(values['small-model'] ? { LLM_SMALL_MODEL: values['small-model'] } : {}),
  };
  const outcome = await runEval({
    env,
    log,
    casesDir: values.cases,
    only: list(values.only),
    categories: list(values.category),
    concurrency: values.concurrency ? Number(values.concurrency) : undefined,
    offline: values.offline,
    out: values.out,
  });
  return outcome.exitCode;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`eval failed: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
