import { isValidYMD, type YMD } from '../../core/zoned-time';

/** How the page asks for a day (placeholder and error messages): the Japanese form, whatever the browser's locale. */
export const DAY_EXAMPLE = '2026/11/28';

/**
 * A day as an operator types it in /admin's date fields: 2026/11/28, 2026-11-28, 2026.11.28, 2026年11月28日,
 * full-width digits and separators, an optional weekday 「（土）」. Year first only: 11/28/2026 (the American
 * order) is refused rather than guessed. Null when it is not a real day.
 */
export function readDay(text: string): YMD | null {
  const s = text
    .normalize('NFKC')
    .replace(/\s+/g, '')
    .replace(/\([日月火水木金土]\)$/, '');
  const m = /^(\d{4})(?:[/.-]|年)(\d{1,2})(?:[/.-]|月)(\d{1,2})日?$/.exec(s);
  if (!m) return null;
  const day = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
  return isValidYMD(day) ? day : null;
}
