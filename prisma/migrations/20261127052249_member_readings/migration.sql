-- AlterTable
ALTER TABLE "members" ADD COLUMN     "reading" TEXT,
ADD COLUMN     "romaji" TEXT;
