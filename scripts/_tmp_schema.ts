import { handlers } from '../handlers';
import { modelTool } from '../src/brain/tool-definitions';
let total = 0;
for (const h of handlers) {
  const t = modelTool(h as never);
  const n = JSON.stringify(t).length;
  total += n;
  if (/schedule/.test(h.name) || h.name === 'snooze_reminder' || process.env.ALL) console.log(h.name, n);
}
console.log('total', total);
const cs = handlers.find((h) => h.name === 'create_schedule')!;
console.log(JSON.stringify(modelTool(cs as never).inputSchema));
