import { OrgCache } from '../org/org-cache';
import type { Directory } from './directory';

/**
 * The organisation directory (departments, active members) kept per organisation, so a turn does not read it
 * again; a directory import's NOTIFY clears it on every instance ({@link OrgCache}).
 */
export class DirectoryCache extends OrgCache<Directory> {}
