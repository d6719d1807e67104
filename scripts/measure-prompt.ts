// `npx tsx scripts/measure-prompt.ts [directory.yaml]`: the cacheable prefix every member's request carries (the
// loaded tools and the system block) and a whole request's size, per sender level, with the sample organisation
// (or the given directory file); then whether the prefix is byte-identical for every level. Tokens: the Claude
// tokenizer of `@anthropic-ai/tokenizer`, an approximation (bench/prompt-size.ts).
import { requestSizes, turnRequest, prefixOf, SAMPLE_DIRECTORY } from '../bench/prompt-size';

const file = process.argv[2] ?? SAMPLE_DIRECTORY;
const prefixes = new Set<string>();
console.log(`organisation: ${file}`);
console.log('level  prefix tokens (tools + system)   prefix bytes   request bytes   loaded / deferred tools');
for (const level of [1, 2, 3, 4, 5, 6, 0]) {
  const req = turnRequest({ level, directoryFile: file });
  const s = requestSizes(req);
  const p = prefixOf(req);
  if (level > 0) prefixes.add(p.tools + '\u0000' + p.system);
  const who = level === 0 ? 'public' : String(level);
  console.log(
    `${who.padEnd(6)} ${String(s.prefix.tokens).padStart(6)} (${s.tools.tokens} + ${s.system.tokens})`.padEnd(39) +
      `${String(s.prefix.bytes).padStart(9)}   ${String(s.body.bytes).padStart(13)}   ` +
      `${s.loaded.length} / ${s.deferred.length}`,
  );
}
const member = requestSizes(turnRequest({ level: 2, directoryFile: file }));
console.log(`loaded for members: ${member.loaded.join(', ')}`);
console.log(
  prefixes.size === 1
    ? 'the prefix is byte-identical for every member level'
    : `the prefix differs between member levels (${prefixes.size} variants)`,
);
