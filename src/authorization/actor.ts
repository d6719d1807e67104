import type { Db } from '../db/prisma';

/** Who a room is for (R-A5): org members, or the public (unknown senders get level 0 there). */
export type RoomAuthority = 'member' | 'public';

/**
 * The sender of a message as the AuthorizationGate sees it. Everything here comes from the database
 * (or configuration), never from the LLM (R-Z1).
 */
export interface Actor {
  /** True when the platform account maps to an active member of the organisation. */
  known: boolean;
  memberId: string | null;
  name: string | null;
  /** 0 (public, conversation only) … 6 (CEO/CFO). */
  level: number;
  departmentId: string | null;
  roomAuthority: RoomAuthority;
  /**
   * True when the directory lists the room (for this organisation). Only a listed room marked `public`
   * is a public room for members; an unlisted room's authority is the adapter's guess (issue 8).
   */
  roomListed: boolean;
  /**
   * Where `level` came from: the member directory; the configured default (an unknown sender in a room
   * the directory lists as a member room, R-Z2); the public-room rule (an unknown sender in a listed
   * public room, R-A5); or `stranger` — an unknown sender in a DM or a room the directory does not list,
   * who gets public authority and is told politely that the bot serves members (issue 8).
   */
  source: 'directory' | 'default' | 'public_unknown' | 'stranger';
}

/** What {@link loadActor} needs to identify the sender. */
export interface LoadActorInput {
  orgId: string;
  platform: string;
  /** The room's platform id (`Room.externalId`). */
  roomId: string;
  /** The sender's platform account id. */
  accountId: string;
  /** Level given to unknown senders in member rooms (config `DEFAULT_USER_LEVEL`, R-Z2). */
  defaultLevel?: number;
  /** Authority of a room that is not in the directory (adapter's hint; default member). */
  fallbackAuthority?: RoomAuthority;
}

/** Level of unknown senders in member rooms when the configuration says nothing (R-Z2). */
export const DEFAULT_UNKNOWN_LEVEL = 1;

/** Level of unknown senders in public rooms: conversation only (R-A5). */
export const PUBLIC_LEVEL = 0;

/**
 * Loads the sender: PlatformAccount → Member (active, same organisation) and the room's authority.
 * A missing room takes `fallbackAuthority` (default member); a room of another organisation or with an
 * unrecognised authority counts as public (the stricter reading). An unknown sender gets the default
 * level only in a listed member room; elsewhere public authority (level 0).
 * Database errors are NOT caught: callers must treat a throw as DENIED (fail-closed, R-Z2).
 */
export async function loadActor(db: Pick<Db, 'platformAccount' | 'room'>, input: LoadActorInput): Promise<Actor> {
  const { platform, roomId, accountId } = input;
  const [account, room] = await Promise.all([
    db.platformAccount.findUnique({
      where: { platform_accountId: { platform, accountId } },
      include: { member: true },
    }),
    db.room.findUnique({ where: { platform_externalId: { platform, externalId: roomId } } }),
  ]);
  return actorFromRows({ account, room }, input);
}

/** The rows an Actor is decided from (however they were fetched). */
export interface ActorRows {
  account: {
    orgId: string;
    member: { id: string; orgId: string; name: string; level: number; departmentId: string | null; active: boolean };
  } | null;
  room: { orgId: string; authority: string } | null;
}

/** Pure: the Actor for fetched rows (shared by {@link loadActor} and the pipeline's one-query prelude). */
export function actorFromRows(
  { account, room }: ActorRows,
  input: Pick<LoadActorInput, 'orgId' | 'defaultLevel' | 'fallbackAuthority'>,
): Actor {
  const { orgId, defaultLevel = DEFAULT_UNKNOWN_LEVEL, fallbackAuthority = 'member' } = input;
  const roomAuthority = toRoomAuthority(room, orgId, fallbackAuthority);
  const roomListed = room !== null && room.orgId === orgId;
  const member =
    account && account.orgId === orgId && account.member.orgId === orgId && account.member.active
      ? account.member
      : null;
  if (member) {
    return {
      known: true,
      memberId: member.id,
      name: member.name,
      level: member.level,
      departmentId: member.departmentId,
      roomAuthority,
      roomListed,
      source: 'directory',
    };
  }
  const source = !roomListed ? 'stranger' : roomAuthority === 'member' ? 'default' : 'public_unknown';
  return {
    known: false,
    memberId: null,
    name: null,
    level: source === 'default' ? defaultLevel : PUBLIC_LEVEL,
    departmentId: null,
    roomAuthority,
    roomListed,
    source,
  };
}

/** A room the directory lists as `public`: nobody is offered tools there and replies carry no internal data. */
export function isPublicRoom(actor: Pick<Actor, 'roomAuthority' | 'roomListed'>): boolean {
  return actor.roomListed && actor.roomAuthority === 'public';
}

/**
 * Who may read the reply: `public` in a listed public room or for a sender at level 0 (strangers,
 * unknown senders in public rooms) — no organisation data in context or prompt — else `member`.
 */
export function audienceOf(actor: Pick<Actor, 'roomAuthority' | 'roomListed' | 'level'>): 'member' | 'public' {
  return actor.level === 0 || isPublicRoom(actor) ? 'public' : 'member';
}

function toRoomAuthority(
  room: { orgId: string; authority: string } | null,
  orgId: string,
  fallback: RoomAuthority,
): RoomAuthority {
  if (!room) return fallback;
  if (room.orgId !== orgId) return 'public';
  return room.authority === 'member' ? 'member' : 'public';
}
