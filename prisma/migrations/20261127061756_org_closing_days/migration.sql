-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "closingDays" JSONB NOT NULL DEFAULT '[]';
