import type { Sql } from '../db/sql';
import { refreshEvery } from './org-cache';

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
  private current: { at: number; rooms: Promise<Map<string, IndexedRoom>> } | null = null;

  constructor(
    private readonly load: () => Promise<RoomRow[]>,
    private readonly maxAgeMs = 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

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
  async refresh(): Promise<void> {
    const c = this.current;
    if (!c || this.clock() - c.at < this.maxAgeMs / 2) return;
    const at = this.clock();
    try {
      const rooms = indexRooms(await this.load());
      if (this.current === c) this.current = { at, rooms: Promise.resolve(rooms) };
    } catch {
      if (this.current === c) this.current = null;
    }
  }

  /** Calls {@link refresh} every quarter of `maxAgeMs` (a timer that keeps no process alive); returns its stop. */
  startRefreshing(): () => void {
    return refreshEvery(() => this.refresh(), this.maxAgeMs / 4);
  }

  /** Forgets every room (an import changed the directory, or a notification may have been missed). */
  invalidate(): void {
    this.current = null;
  }

  private rooms(): Promise<Map<string, IndexedRoom>> {
    const c = this.current;
    if (c && this.clock() - c.at < this.maxAgeMs) return c.rooms;
    const entry = { at: this.clock(), rooms: this.load().then(indexRooms) };
    this.current = entry;
    entry.rooms.catch(() => {
      if (this.current === entry) this.current = null;
    });
    return entry.rooms;
  }
}

function indexRooms(rows: RoomRow[]): Map<string, IndexedRoom> {
  return new Map(
    rows.map((r) => [
      roomKey(r.platform, r.externalId),
      { orgId: r.orgId, authority: r.authority === 'member' ? 'member' : 'public' } as const,
    ]),
  );
}
