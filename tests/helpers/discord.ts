import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FakeUser } from '../fakes/discord-server';

/** 山田一郎 (level 3 member of the sample directory) as a Discord user. */
export const YAMADA: FakeUser = { id: '402938475612345601', username: 'yamada', global_name: '山田一郎' };
/** 田中太郎 as a Discord user. */
export const TANAKA: FakeUser = { id: '402938475612345604', username: 'tanaka', global_name: '田中太郎' };
/** Another bot in the same guild. */
export const OTHER_BOT: FakeUser = { id: '444444444444444444', username: 'otherbot', bot: true };

/**
 * The sample directory with a Discord guild allow-listed and one of its channels listed as a member room
 * (issue 8: other guilds are ignored). Returns the file's path.
 */
export function discordDirectory(guildId: string, channelId: string): string {
  const sample = fs.readFileSync(path.join(__dirname, '..', '..', 'config', 'org.sample.yaml'), 'utf8');
  const directory = sample
    .replace('  timezone: Asia/Tokyo\n', `  timezone: Asia/Tokyo\n  discord_guilds: ["${guildId}"]\n`)
    .replace(
      'rooms:\n',
      `rooms:\n  - { platform: discord, id: "${channelId}", name: 営業チャンネル, authority: member }\n`,
    );
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-discord-')), 'org.yaml');
  fs.writeFileSync(file, directory);
  return file;
}
