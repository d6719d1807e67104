-- AlterTable
ALTER TABLE "pending_actions" ADD COLUMN     "questionKey" TEXT;

-- AlterTable
ALTER TABLE "outbound_messages" ADD COLUMN     "claimedBy" TEXT;
