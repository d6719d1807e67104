-- MCP tools an operator approved in /admin (issue 42): the description and input schema as approved and their hash;
-- a tool whose listing changes is not offered until approved again. Written only by src/mcp/mcp-approvals.ts.
-- CreateTable
CREATE TABLE "mcp_tool_approvals" (
    "orgId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "inputSchema" JSONB NOT NULL,
    "approvedBy" TEXT NOT NULL,
    "approvedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_tool_approvals_pkey" PRIMARY KEY ("orgId","serverId","toolName")
);
