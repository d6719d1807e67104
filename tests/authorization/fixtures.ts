import type { Actor, Directory } from '../../src/authorization';
import type { ToolProposal } from '../../src/core/proposal';
import type { ToolMeta } from '../../src/core/tool-meta';

/**
 * hq
 * ├─ biz
 * │  ├─ sales            ← the actor's department
 * │  │  └─ sales-east    (child)
 * │  │     └─ sales-east-tokyo (grandchild)
 * │  └─ marketing        (sibling)
 * └─ eng
 *    └─ eng-backend      (other branch)
 */
export const directory: Directory = {
  departments: [
    { id: 'hq', parentId: null },
    { id: 'biz', parentId: 'hq' },
    { id: 'sales', parentId: 'biz' },
    { id: 'sales-east', parentId: 'sales' },
    { id: 'sales-east-tokyo', parentId: 'sales-east' },
    { id: 'marketing', parentId: 'biz' },
    { id: 'eng', parentId: 'hq' },
    { id: 'eng-backend', parentId: 'eng' },
  ],
  members: [
    { id: 'm-actor', departmentId: 'sales', name: '佐藤 花子', aliases: ['佐藤'] },
    { id: 'm-own', departmentId: 'sales', name: '田中 太郎', aliases: ['田中', 'tanaka'] },
    { id: 'm-child', departmentId: 'sales-east', name: '鈴木 一郎', aliases: ['鈴木'] },
    { id: 'm-grand', departmentId: 'sales-east-tokyo', name: '高橋 次郎' },
    { id: 'm-sibling', departmentId: 'marketing', name: '伊藤 三郎' },
    { id: 'm-other', departmentId: 'eng-backend', name: '渡辺 四郎' },
    { id: 'm-ceo', departmentId: 'hq', name: '山本 社長' },
    { id: 'm-nodept', departmentId: null, name: '中村 顧問' },
  ],
};

/** A known member of `sales` at the given level. */
export function actorAt(level: number, over: Partial<Actor> = {}): Actor {
  return {
    known: true,
    memberId: 'm-actor',
    name: '佐藤 花子',
    level,
    departmentId: 'sales',
    roomAuthority: 'member',
    roomListed: true,
    source: 'directory',
    ...over,
  };
}

export function tool(over: Partial<ToolMeta> = {}): ToolMeta {
  return {
    name: 'view_tasks',
    effects: [],
    risk: 'none',
    requiredLevel: 1,
    requiresConfirmation: false,
    enabled: true,
    paramRoles: { user: 'target_user', department: 'target_department', to: 'recipients', who: 'person' },
    ...over,
  };
}

export function proposal(parameters: Record<string, unknown>, toolName = 'view_tasks'): ToolProposal {
  return { id: 'toolu_1', toolName, parameters };
}
