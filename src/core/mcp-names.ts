/**
 * How an MCP tool is named for the model (issue 42): `<serverId>__<tool>`, lower-case, every character outside
 * `a-z0-9_` as `_`, so the name says where the tool comes from (`files__write_file`) and fits the tool-name rule.
 */
export function mcpModelName(serverId: string, tool: string): string {
  return `${serverId}__${tool.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
}

/** Longest tool name the model accepts. */
export const MODEL_NAME_MAX = 64;

/** `${NAME}` references in a directory value (environment variables resolved at start). */
export const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
