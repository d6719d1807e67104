import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/** A path into a directory document, e.g. `['members', 2, 'level']`. */
export type DirectoryPath = ReadonlyArray<PropertyKey>;

/** Formats a path as `members[2].level` (`(root)` for the document itself). */
export function formatPath(path: DirectoryPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || '(root)';
}

/**
 * The 1-based line of the deepest node along `path`: the key of a mapping entry (where `level:` is
 * written), the item of a list, or the nearest existing parent when the path does not exist (a missing key).
 */
export function lineOf(doc: Document, lineCounter: LineCounter, path: DirectoryPath): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === seg);
      if (!pair) break;
      offset = rangeStart(pair.key) ?? rangeStart(pair.value) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
