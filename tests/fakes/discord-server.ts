/**
 * A local Discord-compatible server for tests: the REST v10 routes discord.js uses in Hisho and a gateway
 * over WebSocket (plain JSON, no compression: `zlib-sync` is not installed). The real discord.js client talks
 * to it when `DISCORD_API_BASE_URL` is {@link FakeDiscord.apiBaseUrl}; the gateway URL is handed out by
 * `GET /gateway/bot`, as Discord does.
 *
 * Test side: {@link FakeDiscord.say} / {@link FakeDiscord.reply} dispatch MESSAGE_CREATE, {@link FakeDiscord.click}
 * dispatches INTERACTION_CREATE (shaped as Discord sends them); {@link FakeDiscord.slash},
 * {@link FakeDiscord.messageCommand} and {@link FakeDiscord.submitModal} dispatch APPLICATION_COMMAND (type 2) and
 * MODAL_SUBMIT (type 5) interactions for commands the bot registered (PUT /applications/:app/commands, global or
 * guild). Interaction callbacks follow Discord's rules: one per interaction (a second: 400, code 40060), within
 * 3 seconds of the interaction (later: 404 Unknown interaction, code 10062). Every REST call is recorded in
 * `calls`, the bot's posts in `posted`. Outages: {@link FakeDiscord.set} with `restStatus` (e.g. 503 on every REST
 * call), `ready: false` (HELLO and heartbeats, never READY) or `rejectToken` (401 on REST, close 4004 on IDENTIFY).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** A Discord user as the API sends it. */
export interface FakeUser {
  id: string;
  username: string;
  global_name?: string | null;
  bot?: boolean;
}

/** One REST request the client made. */
export interface RecordedCall {
  method: string;
  /** The path after `/api/v10`, e.g. `/channels/81/messages`. */
  path: string;
  query: string;
  body: Record<string, unknown> | null;
  /** The answer given (after any outage mode). */
  status: number;
  authorized: boolean;
}

/** A message the bot posted (POST /channels/:id/messages). */
export interface PostedMessage {
  id: string;
  channelId: string;
  content: string;
  components: { type: number; components: { custom_id?: string; label?: string; style?: number }[] }[];
  /** The message this one replies to (`message_reference.message_id`), if any. */
  replyTo: string | null;
  allowedMentions: unknown;
  nonce: string | null;
}

/** A button click dispatched by {@link FakeDiscord.click}. */
export interface Click {
  interactionId: string;
  token: string;
}

/** An application command as registered (the PUT body's entry, with the id Discord gives it). */
export interface RegisteredCommand {
  id: string;
  name: string;
  type: number;
  description: string;
  name_localizations?: Record<string, string> | null;
  description_localizations?: Record<string, string> | null;
  options?: {
    name: string;
    type: number;
    description: string;
    required?: boolean;
    name_localizations?: Record<string, string> | null;
    description_localizations?: Record<string, string> | null;
  }[];
  [k: string]: unknown;
}

/** A modal the bot opened (interaction callback type 9). */
export interface ShownModal {
  interactionId: string;
  /** The user the modal was shown to. */
  userId: string;
  /** The message whose button opened it (null for a command). */
  messageId: string | null;
  custom_id: string;
  title: string;
  /** Text inputs (type 4): custom_id, label, value (pre-filled), style, required. */
  inputs: { custom_id: string; label: string; value?: string; style: number; required?: boolean }[];
}

export interface FakeDiscordOptions {
  /** The bot token REST calls and IDENTIFY must carry. Default `fake-discord-token`. */
  token?: string;
  bot?: FakeUser;
  applicationId?: string;
  guildId?: string;
  /** Text channels of the guild (ids). Default one channel. */
  channels?: string[];
  /** Gateway heartbeat interval sent in HELLO (ms). Default 41 250 (Discord's). */
  heartbeatIntervalMs?: number;
  /** How long an interaction waits for its callback (ms). Default 3 000 (Discord's). */
  interactionDeadlineMs?: number;
}

/** Outage switches; each applies from the next request / connection. */
export interface FakeDiscordMode {
  /** Answer every REST call with this status (e.g. 503), or null for normal service. */
  restStatus: number | null;
  /** Send READY (and GUILD_CREATE) after IDENTIFY. False: the gateway says HELLO and acks heartbeats, nothing else. */
  ready: boolean;
  /** The token is refused: 401 on every REST call, close code 4004 on IDENTIFY. */
  rejectToken: boolean;
  /** Reads of the registered commands (GET …/commands) answer after this long (ms): lets two readers overlap. */
  commandReadDelayMs: number;
}

export const FAKE_BOT: FakeUser = { id: '111111111111111111', username: 'hisho', global_name: 'Hisho', bot: true };
export const FAKE_GUILD_ID = '900000000000000000';
export const FAKE_CHANNEL_ID = '810000000000000001';

const API_PREFIX = '/api/v10';

export class FakeDiscord {
  readonly token: string;
  readonly bot: FakeUser;
  readonly applicationId: string;
  readonly guildId: string;
  readonly channels: string[];
  /** Every REST call, in order. */
  readonly calls: RecordedCall[] = [];
  /** The bot's channel posts, in order. */
  readonly posted: PostedMessage[] = [];
  /** Edits of channel messages (PATCH /channels/:c/messages/:m): message id and body. */
  readonly edits: { messageId: string; body: Record<string, unknown> }[] = [];
  /** Interaction callbacks (POST /interactions/:id/:token/callback): body `type` 6 = deferred update, 4 = reply… */
  readonly interactionResponses: { interactionId: string; type: number; data: Record<string, unknown> | null }[] = [];
  /** Webhook follow-ups and edits of the original response (interaction token routes). */
  readonly followUps: {
    id: string;
    token: string;
    content: string;
    flags: number;
    ephemeral: boolean;
    components: PostedMessage['components'];
  }[] = [];
  /** Registered application commands: global, and per guild. */
  readonly globalCommands: RegisteredCommand[] = [];
  readonly guildCommands = new Map<string, RegisteredCommand[]>();
  /** Modals the bot opened (callback type 9), in order. */
  readonly modals: ShownModal[] = [];
  readonly originalEdits: { token: string; body: Record<string, unknown> }[] = [];
  /** IDENTIFY payloads received. */
  readonly identifies: { token: string; intents: number }[] = [];
  mode: FakeDiscordMode = { restStatus: null, ready: true, rejectToken: false, commandReadDelayMs: 0 };

  private server!: Server;
  private wss!: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  /** Sockets that got READY (sessions), for dispatching events. */
  private readonly sessions = new Map<WebSocket, { seq: number }>();
  private readonly messages = new Map<string, Record<string, unknown>>();
  private readonly interactions = new Map<string, Interaction>();
  private readonly interactionDeadlineMs: number;
  private snowflake = 0n;
  private readonly heartbeatIntervalMs: number;
  private baseUrl = '';

  constructor(o: FakeDiscordOptions = {}) {
    this.token = o.token ?? 'fake-discord-token';
    this.bot = o.bot ?? FAKE_BOT;
    this.applicationId = o.applicationId ?? this.bot.id;
    this.guildId = o.guildId ?? FAKE_GUILD_ID;
    this.channels = o.channels ?? [FAKE_CHANNEL_ID];
    this.heartbeatIntervalMs = o.heartbeatIntervalMs ?? 41250;
    this.interactionDeadlineMs = o.interactionDeadlineMs ?? 3000;
  }

  /** Starts listening on a free loopback port. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.wss = new WebSocketServer({ server: this.server });
    this.wss.on('connection', (ws) => this.onConnection(ws));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The value for `DISCORD_API_BASE_URL` (discord.js adds `/v10`). */
  get apiBaseUrl(): string {
    return `${this.baseUrl}/api`;
  }

  /** Changes the outage switches (see {@link FakeDiscordMode}). */
  set(mode: Partial<FakeDiscordMode>): void {
    this.mode = { ...this.mode, ...mode };
  }

  /** Gateway connections that reached READY and are still open. */
  get readySessions(): number {
    return this.sessions.size;
  }

  /** Closes every gateway connection with `code` (the client reconnects unless the code is fatal). */
  dropConnections(code = 4000): void {
    for (const ws of this.sockets) ws.close(code, 'fake: dropped');
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** A new snowflake id: its time part is now (discord.js reads `createdTimestamp` from it), increasing. */
  nextId(): string {
    const now = BigInt(Date.now() - 1420070400000) << 22n;
    this.snowflake = now > this.snowflake ? now : this.snowflake + 1n;
    return String(this.snowflake);
  }

  // ---- Test side: events ----

  /**
   * A person writes in a channel (MESSAGE_CREATE). `mentions` are the users Discord lists as mentioned (put
   * the bot there when the content has `<@bot>`); `replyTo` makes it a reply (type 19) to a stored message, and
   * `pingReply` (default true) adds that message's author to `mentions`, as Discord does unless the person
   * turned the reply ping off.
   */
  say(o: {
    author: FakeUser;
    content: string;
    channelId?: string;
    mentions?: FakeUser[];
    replyTo?: string;
    pingReply?: boolean;
    /** A DM (no guild): the channel must be given. */
    direct?: boolean;
    nick?: string | null;
  }): string {
    const channelId = o.channelId ?? this.channels[0]!;
    const id = this.nextId();
    const mentions = [...(o.mentions ?? [])];
    const referenced = o.replyTo ? this.messages.get(o.replyTo) : undefined;
    if (o.replyTo && !referenced) throw new Error(`fake discord: no message ${o.replyTo} to reply to`);
    const repliedAuthor = referenced?.author as FakeUser | undefined;
    if (repliedAuthor && o.pingReply !== false && !mentions.some((u) => u.id === repliedAuthor.id))
      mentions.push(repliedAuthor);
    const guild = o.direct ? {} : { guild_id: this.guildId };
    const message: Record<string, unknown> = {
      id,
      type: o.replyTo ? 19 : 0,
      channel_id: channelId,
      ...guild,
      author: userObject(o.author),
      ...(o.direct ? {} : { member: memberObject(o.nick ?? null) }),
      content: o.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: mentions.map((u) => ({ ...userObject(u), ...(o.direct ? {} : { member: memberObject(null) }) })),
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      flags: 0,
      components: [],
    };
    if (referenced) {
      message.message_reference = { type: 0, message_id: o.replyTo, channel_id: channelId, ...guild };
      message.referenced_message = referenced;
    }
    this.messages.set(id, message);
    this.dispatch('MESSAGE_CREATE', message);
    return id;
  }

  /**
   * A person clicks a button of one of the bot's messages (INTERACTION_CREATE, type 3 MESSAGE_COMPONENT).
   * Returns the interaction's id and token (its callback and follow-ups are recorded under them).
   */
  click(o: { user: FakeUser; messageId: string; customId: string; nick?: string | null }): Click {
    const message = this.messages.get(o.messageId);
    if (!message) throw new Error(`fake discord: no message ${o.messageId} to click on`);
    return this.interact({
      type: 3,
      user: o.user,
      nick: o.nick,
      channelId: message.channel_id as string,
      data: { custom_id: o.customId, component_type: 2 },
      message,
    });
  }

  /**
   * A person runs the registered chat-input command `name` (APPLICATION_COMMAND, type 2, command type 1) with
   * these options (STRING 3 for strings, BOOLEAN 5 for booleans). Throws when the bot registered no such command
   * (Discord would not offer it).
   */
  slash(o: {
    user: FakeUser;
    name?: string;
    options: Record<string, string | boolean>;
    channelId?: string;
    nick?: string | null;
  }): Click {
    const command = this.registered(o.name ?? 'hisho', 1);
    const options = Object.entries(o.options).map(([name, value]) => ({
      name,
      type: typeof value === 'boolean' ? 5 : 3,
      value,
    }));
    return this.interact({
      type: 2,
      user: o.user,
      nick: o.nick,
      channelId: o.channelId ?? this.channels[0]!,
      data: { id: command.id, name: command.name, type: 1, options, ...this.commandGuild(command) },
    });
  }

  /** A person runs the registered message command `name` (type 3) on a stored message (right-click → Apps). */
  messageCommand(o: { user: FakeUser; name: string; messageId: string; nick?: string | null }): Click {
    const command = this.registered(o.name, 3);
    const message = this.messages.get(o.messageId);
    if (!message) throw new Error(`fake discord: no message ${o.messageId} to run a command on`);
    return this.interact({
      type: 2,
      user: o.user,
      nick: o.nick,
      channelId: message.channel_id as string,
      data: {
        id: command.id,
        name: command.name,
        type: 3,
        target_id: o.messageId,
        resolved: { messages: { [o.messageId]: message } },
        ...this.commandGuild(command),
      },
    });
  }

  /**
   * A person submits a modal the bot showed them (MODAL_SUBMIT, type 5) with these values by input custom id;
   * inputs not given keep their pre-filled value. `user` defaults to the person it was shown to.
   */
  submitModal(o: { modal: ShownModal; values: Record<string, string>; user: FakeUser; nick?: string | null }): Click {
    for (const id of Object.keys(o.values))
      if (!o.modal.inputs.some((i) => i.custom_id === id))
        throw new Error(`fake discord: the modal has no input ${id}`);
    const origin = this.interactions.get(o.modal.interactionId)!;
    const message = o.modal.messageId ? this.messages.get(o.modal.messageId) : undefined;
    return this.interact({
      type: 5,
      user: o.user,
      nick: o.nick,
      channelId: origin.channelId,
      data: {
        custom_id: o.modal.custom_id,
        components: o.modal.inputs.map((i) => ({
          type: 1,
          components: [{ type: 4, custom_id: i.custom_id, value: o.values[i.custom_id] ?? i.value ?? '' }],
        })),
      },
      ...(message ? { message } : {}),
    });
  }

  /** Commands the bot registered, global then this guild's. */
  get commands(): RegisteredCommand[] {
    return [...this.globalCommands, ...(this.guildCommands.get(this.guildId) ?? [])];
  }

  private registered(name: string, type: number): RegisteredCommand {
    const command = this.commands.find((c) => c.name === name && (c.type ?? 1) === type);
    if (!command) throw new Error(`fake discord: no registered command ${name} of type ${type}`);
    return command;
  }

  private commandGuild(command: RegisteredCommand): Record<string, unknown> {
    return (this.guildCommands.get(this.guildId) ?? []).includes(command) ? { guild_id: this.guildId } : {};
  }

  /** Dispatches one INTERACTION_CREATE as Discord shapes it in a guild channel, and remembers it for its callback. */
  private interact(o: {
    type: number;
    user: FakeUser;
    nick?: string | null;
    channelId: string;
    data: Record<string, unknown>;
    message?: Record<string, unknown>;
  }): Click {
    const interactionId = this.nextId();
    const token = `itoken-${randomBytes(12).toString('hex')}`;
    this.interactions.set(interactionId, {
      token,
      channelId: o.channelId,
      userId: o.user.id,
      messageId: (o.message?.id as string | undefined) ?? null,
      createdAt: Date.now(),
      acknowledged: null,
      followUps: 0,
    });
    this.dispatch('INTERACTION_CREATE', {
      id: interactionId,
      application_id: this.applicationId,
      type: o.type,
      data: o.data,
      guild_id: this.guildId,
      channel_id: o.channelId,
      channel: { id: o.channelId, type: 0, guild_id: this.guildId, name: `ch-${o.channelId.slice(-4)}`, flags: 0 },
      member: { ...memberObject(o.nick ?? null), user: userObject(o.user), permissions: '2248473465835073' },
      token,
      version: 1,
      ...(o.message ? { message: o.message } : {}),
      app_permissions: '2248473465835073',
      locale: 'ja',
      guild_locale: 'ja',
      entitlements: [],
      authorizing_integration_owners: { '0': this.guildId },
      context: 0,
      attachment_size_limit: 10485760,
    });
    return { interactionId, token };
  }

  /** Sends a raw dispatch (op 0) to every ready session. */
  dispatch(t: string, d: unknown): void {
    for (const [ws, session] of this.sessions) {
      session.seq++;
      ws.send(JSON.stringify({ op: 0, t, s: session.seq, d }));
    }
  }

  /** The message the bot posted with this text fragment (the latest), or undefined. */
  lastPostContaining(text: string): PostedMessage | undefined {
    return [...this.posted].reverse().find((m) => m.content.includes(text));
  }

  // ---- Gateway ----

  private onConnection(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', () => {
      this.sockets.delete(ws);
      this.sessions.delete(ws);
    });
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs }, s: null, t: null }));
    ws.on('message', (raw) => {
      let p: { op: number; d: unknown };
      try {
        p = JSON.parse(String(raw)) as { op: number; d: unknown };
      } catch {
        ws.close(4002, 'Error while decoding payload.');
        return;
      }
      if (p.op === 1) ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      else if (p.op === 2) this.onIdentify(ws, p.d as { token: string; intents: number });
      else if (p.op === 6) ws.send(JSON.stringify({ op: 9, d: false, s: null, t: null })); // no resumable sessions
    });
  }

  private onIdentify(ws: WebSocket, d: { token: string; intents: number }): void {
    this.identifies.push({ token: d.token, intents: d.intents });
    if (this.mode.rejectToken || d.token !== this.token) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    if (!this.mode.ready) return;
    const session = { seq: 0 };
    this.sessions.set(ws, session);
    const send = (t: string, data: unknown) => {
      session.seq++;
      ws.send(JSON.stringify({ op: 0, t, s: session.seq, d: data }));
    };
    send('READY', {
      v: 10,
      user: { ...userObject(this.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: [{ id: this.guildId, unavailable: true }],
      session_id: randomBytes(16).toString('hex'),
      resume_gateway_url: this.baseUrl.replace('http', 'ws'),
      shard: [0, 1],
      application: { id: this.applicationId, flags: 0 },
      user_settings: {},
      private_channels: [],
      presences: [],
      relationships: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      _trace: ['fake-discord'],
    });
    send('GUILD_CREATE', this.guildObject());
  }

  private guildObject(): Record<string, unknown> {
    return {
      id: this.guildId,
      name: 'テストサーバー',
      icon: null,
      owner_id: '100000000000000001',
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      roles: [
        {
          id: this.guildId,
          name: '@everyone',
          permissions: '2248473465835073',
          position: 0,
          color: 0,
          hoist: false,
          managed: false,
          mentionable: false,
          flags: 0,
        },
      ],
      emojis: [],
      stickers: [],
      features: [],
      mfa_level: 0,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      vanity_url_code: null,
      description: null,
      banner: null,
      premium_tier: 0,
      preferred_locale: 'ja',
      public_updates_channel_id: null,
      nsfw_level: 0,
      premium_progress_bar_enabled: false,
      joined_at: new Date().toISOString(),
      large: false,
      unavailable: false,
      member_count: 3,
      voice_states: [],
      members: [{ ...memberObject(null), user: userObject(this.bot) }],
      channels: this.channels.map((id, i) => this.channelObject(id, i)),
      threads: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  private channelObject(id: string, position = 0): Record<string, unknown> {
    return {
      id,
      type: 0,
      guild_id: this.guildId,
      name: `ch-${id.slice(-4)}`,
      position,
      permission_overwrites: [],
      nsfw: false,
      topic: null,
      last_message_id: null,
      rate_limit_per_user: 0,
      parent_id: null,
      flags: 0,
    };
  }

  // ---- REST ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | null = null;
    if (raw) {
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('multipart/form-data')) {
        // discord.js sends JSON in the `payload_json` part when files are attached (not used by Hisho).
        const m = /name="payload_json"[^\n]*\r?\n(?:[^\n]*\r?\n)*?\r?\n([\s\S]*?)\r?\n--/.exec(raw);
        body = m ? (JSON.parse(m[1]!) as Record<string, unknown>) : null;
      } else body = JSON.parse(raw) as Record<string, unknown>;
    }
    const method = req.method ?? 'GET';
    const path = url.pathname.startsWith(API_PREFIX) ? url.pathname.slice(API_PREFIX.length) : url.pathname;
    const authorized = req.headers.authorization === `Bot ${this.token}`;
    const call: RecordedCall = { method, path, query: url.search, body, status: 0, authorized };
    this.calls.push(call);
    const answer = (status: number, json?: unknown) => {
      call.status = status;
      if (json === undefined) {
        res.writeHead(status).end();
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    };
    if (this.mode.restStatus !== null) {
      const status = this.mode.restStatus;
      if (status >= 500) {
        res.setHeader('content-type', 'text/plain');
        call.status = status;
        res.writeHead(status).end('upstream connect error or disconnect/reset before headers');
        return;
      }
      answer(status, { message: 'fake outage', code: 0 });
      return;
    }
    // Interaction and webhook-token routes carry no bot token (discord.js sends them with auth: false).
    const tokenRoute = path.startsWith('/interactions/') || path.startsWith('/webhooks/');
    if (!tokenRoute && (this.mode.rejectToken || !authorized)) {
      answer(401, { message: '401: Unauthorized', code: 0 });
      return;
    }
    const seg = path.split('/').filter(Boolean);
    const route = `${method} /${seg.map((s, i) => (i % 2 === 1 && /^\d+$/.test(s) ? ':id' : s)).join('/')}`;
    if (method === 'GET' && path === '/gateway/bot') {
      return answer(200, {
        url: this.baseUrl.replace('http', 'ws'),
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    if (method === 'GET' && path === '/users/@me') return answer(200, userObject(this.bot));
    if (method === 'GET' && seg[0] === 'channels' && seg.length === 2) {
      if (!this.channels.includes(seg[1]!)) return answer(404, { message: 'Unknown Channel', code: 10003 });
      return answer(200, this.channelObject(seg[1]!));
    }
    if (method === 'GET' && seg[0] === 'guilds' && seg.length === 2) {
      if (seg[1] !== this.guildId) return answer(404, { message: 'Unknown Guild', code: 10004 });
      return answer(200, this.guildObject());
    }
    if (method === 'POST' && seg[0] === 'channels' && seg[2] === 'messages' && seg.length === 3) {
      return answer(200, this.createBotMessage(seg[1]!, body ?? {}));
    }
    if (method === 'PATCH' && seg[0] === 'channels' && seg[2] === 'messages' && seg.length === 4) {
      const stored = this.messages.get(seg[3]!);
      if (!stored) return answer(404, { message: 'Unknown Message', code: 10008 });
      this.edits.push({ messageId: seg[3]!, body: body ?? {} });
      Object.assign(stored, pickMessageFields(body ?? {}), { edited_timestamp: new Date().toISOString() });
      return answer(200, stored);
    }
    if (method === 'POST' && seg[0] === 'interactions' && seg[3] === 'callback') {
      const known = this.interactions.get(seg[1]!);
      const unknown = { message: 'Unknown interaction', code: 10062 };
      if (!known || known.token !== seg[2]) return answer(404, unknown);
      if (known.acknowledged !== null)
        return answer(400, { message: 'Interaction has already been acknowledged.', code: 40060 });
      if (Date.now() - known.createdAt > this.interactionDeadlineMs) return answer(404, unknown);
      const type = Number(body?.type);
      const data = (body?.data as Record<string, unknown> | undefined) ?? null;
      if (type === 9) {
        const problem = modalProblem(data);
        if (problem) return answer(400, { message: 'Invalid Form Body', code: 50035, errors: problem });
        this.modals.push(toShownModal(seg[1]!, known, data!));
      }
      known.acknowledged = { type, flags: Number(data?.flags ?? 0) };
      this.interactionResponses.push({ interactionId: seg[1]!, type, data });
      return answer(204);
    }
    if (method === 'PUT' && seg[0] === 'applications' && seg[2] === 'commands' && seg.length === 3) {
      return answer(200, this.overwriteCommands(this.globalCommands, body));
    }
    // The commands as they are when the read arrives, answered after `commandReadDelayMs` (a slow response).
    const read = (list: RegisteredCommand[]) => {
      const snapshot = listed(list, url.searchParams).map((c) => structuredClone(c));
      setTimeout(() => answer(200, snapshot), this.mode.commandReadDelayMs);
    };
    if (method === 'GET' && seg[0] === 'applications' && seg[2] === 'commands' && seg.length === 3) {
      return read(this.globalCommands);
    }
    if (seg[0] === 'applications' && seg[2] === 'guilds' && seg[4] === 'commands' && seg.length === 5) {
      if (seg[3] !== this.guildId) return answer(403, { message: 'Missing Access', code: 50001 });
      const list = this.guildCommands.get(seg[3]!) ?? [];
      this.guildCommands.set(seg[3]!, list);
      if (method === 'GET') return read(list);
      if (method === 'PUT') return answer(200, this.overwriteCommands(list, body));
    }
    if (seg[0] === 'webhooks' && seg.length >= 3) {
      const token = seg[2]!;
      const interaction = [...this.interactions.values()].find((i) => i.token === token);
      if (!interaction) return answer(404, { message: 'Unknown Webhook', code: 10015 });
      if (method === 'POST' && seg.length === 3) {
        // Not acknowledged yet: no follow-ups.
        if (interaction.acknowledged === null) return answer(404, { message: 'Unknown Webhook', code: 10015 });
        let flags = Number(body?.flags ?? 0);
        // The first follow-up after a deferred reply (type 5) takes the deferral's place and its ephemerality.
        if (interaction.acknowledged.type === 5 && interaction.followUps === 0)
          flags |= interaction.acknowledged.flags & 64;
        interaction.followUps++;
        const content = String(body?.content ?? '');
        const id = this.nextId();
        const components = (body?.components as PostedMessage['components'] | undefined) ?? [];
        this.followUps.push({ id, token, content, flags, ephemeral: (flags & 64) !== 0, components });
        const message = this.messageObject(id, interaction.channelId, { ...(body ?? {}), flags });
        this.messages.set(id, message);
        return answer(200, message);
      }
      if (method === 'PATCH' && seg[3] === 'messages') {
        this.originalEdits.push({ token, body: body ?? {} });
        return answer(200, this.messageObject(this.nextId(), interaction.channelId, body ?? {}));
      }
    }
    answer(404, { message: `fake discord: no route ${route}`, code: 0 });
  }

  /** PUT semantics: the list becomes the body's commands (same name and type keeps its id). */
  private overwriteCommands(list: RegisteredCommand[], body: unknown): RegisteredCommand[] {
    const given = Array.isArray(body) ? (body as RegisteredCommand[]) : [];
    const next = given.map((c) => {
      const type = c.type ?? 1;
      const prior = list.find((p) => p.name === c.name && p.type === type);
      return {
        ...c,
        type,
        id: prior?.id ?? this.nextId(),
        application_id: this.applicationId,
        version: this.nextId(),
        description: c.description ?? '',
      };
    });
    list.splice(0, list.length, ...next);
    return list;
  }

  private createBotMessage(channelId: string, body: Record<string, unknown>): Record<string, unknown> {
    const id = this.nextId();
    const message = this.messageObject(id, channelId, body);
    const ref = body.message_reference as { message_id?: string } | undefined;
    if (ref?.message_id && this.messages.has(ref.message_id)) {
      message.type = 19;
      message.message_reference = { type: 0, message_id: ref.message_id, channel_id: channelId };
      message.referenced_message = this.messages.get(ref.message_id);
    }
    this.messages.set(id, message);
    this.posted.push({
      id,
      channelId,
      content: String(body.content ?? ''),
      components: (body.components as PostedMessage['components'] | undefined) ?? [],
      replyTo: ref?.message_id ?? null,
      allowedMentions: body.allowed_mentions ?? null,
      nonce: typeof body.nonce === 'string' ? body.nonce : null,
    });
    return message;
  }

  private messageObject(id: string, channelId: string, body: Record<string, unknown>): Record<string, unknown> {
    return {
      id,
      type: 0,
      channel_id: channelId,
      guild_id: this.guildId,
      author: userObject(this.bot),
      content: '',
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      flags: 0,
      components: [],
      ...pickMessageFields(body),
    };
  }
}

/** GET of commands: localizations only with `with_localizations=true`, as Discord answers. */
function listed(list: RegisteredCommand[], query: URLSearchParams): RegisteredCommand[] {
  if (query.get('with_localizations') === 'true') return list;
  const bare = <T extends Record<string, unknown>>(o: T) => {
    const { name_localizations: _n, description_localizations: _d, ...rest } = o;
    return rest;
  };
  return list.map((c) => ({ ...bare(c), ...(c.options ? { options: c.options.map(bare) } : {}) }) as RegisteredCommand);
}

/** One interaction the server dispatched, until its callback. */
interface Interaction {
  token: string;
  channelId: string;
  userId: string;
  /** The message it came from (a button's, a modal opened from a button), if any. */
  messageId: string | null;
  createdAt: number;
  /** The callback given (type, flags), or null before it. */
  acknowledged: { type: number; flags: number } | null;
  followUps: number;
}

/** Discord's checks of a modal (callback type 9), as a short text, or null when it is valid. */
function modalProblem(data: Record<string, unknown> | null): string | null {
  if (!data) return 'data is required';
  const customId = data.custom_id;
  if (typeof customId !== 'string' || customId.length < 1 || customId.length > 100) return 'custom_id: 1-100 chars';
  if (typeof data.title !== 'string' || data.title.length < 1 || data.title.length > 45) return 'title: 1-45 chars';
  const rows = data.components;
  if (!Array.isArray(rows) || rows.length < 1 || rows.length > 5) return 'components: 1-5 rows';
  for (const row of rows as { type?: number; components?: { type?: number; custom_id?: string; label?: string }[] }[]) {
    if (row.type !== 1 || !Array.isArray(row.components) || row.components.length !== 1) return 'row: one input';
    const input = row.components[0]!;
    if (input.type !== 4) return 'row: a text input (type 4)';
    if (!input.custom_id || input.custom_id.length > 100) return 'text input custom_id: 1-100 chars';
    if (!input.label || input.label.length > 45) return 'text input label: 1-45 chars';
  }
  return null;
}

function toShownModal(interactionId: string, i: Interaction, data: Record<string, unknown>): ShownModal {
  const rows = data.components as { components: Record<string, unknown>[] }[];
  return {
    interactionId,
    userId: i.userId,
    messageId: i.messageId,
    custom_id: String(data.custom_id),
    title: String(data.title),
    inputs: rows.map(({ components: [c] }) => ({
      custom_id: String(c!.custom_id),
      label: String(c!.label),
      style: Number(c!.style ?? 1),
      ...(typeof c!.value === 'string' ? { value: c!.value } : {}),
      ...(typeof c!.required === 'boolean' ? { required: c!.required } : {}),
    })),
  };
}

function pickMessageFields(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['content', 'components', 'embeds', 'flags', 'nonce'] as const) if (k in body) out[k] = body[k];
  return out;
}

function userObject(u: FakeUser): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    global_name: u.global_name ?? null,
    discriminator: '0',
    avatar: null,
    public_flags: 0,
    ...(u.bot ? { bot: true } : {}),
  };
}

function memberObject(nick: string | null): Record<string, unknown> {
  return {
    nick,
    avatar: null,
    roles: [],
    joined_at: '2025-01-01T00:00:00.000Z',
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
  };
}

/** Starts a {@link FakeDiscord} on a free loopback port. */
export function startFakeDiscord(o: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  return new FakeDiscord(o).start();
}
