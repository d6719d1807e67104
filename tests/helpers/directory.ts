import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SAMPLE_DIRECTORY } from '../../src/service';

/** The sample directory with its `schedules:` section replaced (and other edits), written to a temp file. */
export function sampleDirectoryWith(opts: { schedules: string; edits?: [string, string][] }): string {
  let text = fs.readFileSync(SAMPLE_DIRECTORY, 'utf8');
  const head = text.slice(0, text.indexOf('\nschedules:'));
  text = `${head}\nschedules:${opts.schedules ? `\n${opts.schedules}` : ' []\n'}`;
  for (const [from, to] of opts.edits ?? []) {
    if (!text.includes(from)) throw new Error(`not in the sample directory: ${from}`);
    text = text.replace(from, to);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-dir-'));
  const file = path.join(dir, 'org.yaml');
  fs.writeFileSync(file, text);
  return file;
}

/** The sample organisation as copied from ChatWork: names in kanji only (no readings, romaji or aliases). */
export function kanjiOnlySample(): string {
  return fs.readFileSync(SAMPLE_DIRECTORY, 'utf8').replace(/^ {4}(reading|romaji|aliases): .*\n/gm, '');
}

/** {@link kanjiOnlySample} written to a temp file (for ORG_DIRECTORY_FILE). */
export function kanjiOnlySampleFile(): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-dir-')), 'org.yaml');
  fs.writeFileSync(file, kanjiOnlySample());
  return file;
}
