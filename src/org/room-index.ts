import type { Sql } from '../db/sql';
import { OrgCache } from './org-cache';

/** A directory room: the organisation it belongs to and who may speak with authority there. */
export interface IndexedRoom {
  orgId: string;
  authority: 'member' | 'public';
}

/** A row of the rooms table, as the index reads it. */
export interface RoomRow {
  platform: string;
  externalId: string;
  orgId: string;
  authority: string;
}

/** The index's key of a room: platform and external id (one room per pair, the table's primary key). */
const roomKey = (platform: string, externalId: string): string => `${platform}:${externalId}`;

/** Reads every directory room (all organisations) in one statement. */
export function loadAllRooms(sql: Sql): Promise<RoomRow[]> {
  return sql(`SELECT platform, "externalId", "orgId", authority FROM rooms`);
}

/**
 * Every directory room, by platform and external id, in memory: the intake's room lookup (ChatWork webhooks,
 * Discord channels) answers without a statement, also for a room that is not in the directory (a guest room, an
 * outside contact's DM), which is known not to be there. Rooms change only on a directory import, whose NOTIFY
 * every instance hears and turns into {@link invalidate}: the next lookup reads all rooms again, once, however
 * many lookups wait for it. A failed read is not kept (the caller fails closed: the webhook answers 503 and is
 * sent again). `maxAgeMs` only bounds a notification that was missed.
 */
export class RoomIndex {
  /** The index under one key: the expiry, the dropped failure and the background refresh of an {@link OrgCache}. */
  private readonly cache: OrgCache<Map<string, IndexedRoom>>;

  constructor(load: () => Promise<RoomRow[]>, maxAgeMs = 60_000, clock: () => number = Date.now) {
    this.cache = new OrgCache(() => load().then(indexRooms), maxAgeMs, clock);
  }

  /** The room's organisation and authority, or null when it is not in the directory. */
  async get(platform: string, externalId: string): Promise<IndexedRoom | null> {
    return (await this.rooms()).get(roomKey(platform, externalId)) ?? null;
  }

  /** Reads the rooms now (at start-up, so the first webhook does not wait for them); a failure is left to lookups. */
  async warm(): Promise<void> {
    await this.rooms().catch(() => undefined);
  }

  /**
   * Reads the rooms again when the index is older than half of `maxAgeMs`, in the background (on a timer,
   * {@link startRefreshing}), so that no webhook waits for the bound's reload; kept unless the index was invalidated
   * meanwhile. A failed read drops the index: the next lookup reads it, and fails closed if that fails too.
   */
  refresh(): Promise<void> {
    return this.cache.refresh();
  }

  /** Calls {@link refresh} every quarter of `maxAgeMs` (a timer that keeps no process alive); returns its stop. */
  startRefreshing(): () => void {
    return this.cache.startRefreshing();
  }

  /** Forgets every room (an import changed the directory, or a notification may have been missed). */
  invalidate(): void {
    this.cache.invalidate(null);
  }

  private rooms(): Promise<Map<string, IndexedRoom>> {
    return this.cache.get(ALL_ROOMS);
  }
}

/** The one key the index is kept under (rooms of every organisation, in one read). */
const ALL_ROOMS = '*';

function indexRooms(rows: RoomRow[]): Map<string, IndexedRoom> {
  return new Map(
    rows.map((r) => [
      roomKey(r.platform, r.externalId),
      { orgId: r.orgId, authority: r.authority === 'member' ? 'member' : 'public' } as const,
    ]),
  );
}
