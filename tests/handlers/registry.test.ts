import fs from 'node:fs';
import path from 'node:path';
import { modelTool } from '../../src/brain/tool-definitions';
import { handlers } from '../../handlers';
import { ToolRegistry } from '../../src/tools/registry';

/** Other engineers' handler files may sit in handlers/ too: only ours are asserted. */
const OURS = {
  create_task: {
    risk: 'none',
    requiredLevel: 2,
    effects: ['db.task_create', 'chatwork.task_create'],
    paramRoles: { assignee: 'assignee', due: 'date', title: 'text' },
  },
  complete_task: { risk: 'none', requiredLevel: 2, effects: ['db.task_update'], paramRoles: { task_id: 'task' } },
  search_tasks: { risk: 'none', requiredLevel: 1, effects: [], paramRoles: { assignee: 'target_user' } },
  change_task: {
    risk: 'none',
    requiredLevel: 2,
    effects: ['db.task_update', 'chatwork.task_create', 'chatwork.task_update'],
    effectKind: 'update',
    paramRoles: { task_id: 'task_change', due: 'date', title: 'text', assignee: 'assignee' },
  },
  cancel_task: {
    risk: 'none',
    requiredLevel: 2,
    effects: ['db.task_update', 'chatwork.task_update'],
    effectKind: 'cancel',
    paramRoles: { task_id: 'task_change' },
  },
  create_reminder: {
    risk: 'none',
    requiredLevel: 1,
    effects: ['db.reminder_create'],
    paramRoles: { when: 'date', person: 'reminder_target', text: 'text' },
  },
  list_reminders: { risk: 'none', requiredLevel: 1, effects: [] },
  cancel_reminder: { risk: 'none', requiredLevel: 1, effects: ['db.reminder_update'] },
  lookup_person: { risk: 'none', requiredLevel: 1, effects: [] },
} as const;

describe('handlers/ manifest', () => {
  const registry = new ToolRegistry(handlers);

  it.each(Object.entries(OURS))('loads %s with its declared meta', (name, meta) => {
    const def = registry.get(name);
    expect(def).toBeDefined();
    expect(def).toMatchObject({ ...meta, enabled: true, requiresConfirmation: false });
    const tool = modelTool(def!);
    expect(tool.name).toBe(name);
    expect(tool.description).toContain('Examples:');
  });

  it('does not load the underscore helper files as tools', () => {
    expect(registry.all().every((d) => typeof d.handler === 'function')).toBe(true);
    expect(registry.get('createOnce')).toBeUndefined();
  });

  it('lists every tool declared in handlers/ (a declaration without its manifest line fails here)', () => {
    const dir = path.resolve(__dirname, '..', '..', 'handlers');
    const declared = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
      .flatMap((f) => Object.values(require(path.join(dir, f)) as Record<string, unknown>))
      .filter(
        (v): v is { name: string; handler: unknown } =>
          typeof v === 'object' && v !== null && typeof (v as { handler?: unknown }).handler === 'function',
      )
      .map((d) => d.name)
      .sort();
    expect(handlers.map((d) => d.name).sort()).toEqual(declared);
  });
});
