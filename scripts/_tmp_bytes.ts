import { handlers } from '../handlers';
import { modelTool } from '../src/brain/tool-definitions';
const all = handlers.map((h) => modelTool(h as never));
console.log(all.length, (Buffer.byteLength(JSON.stringify(all), 'utf8') / all.length).toFixed(1));
