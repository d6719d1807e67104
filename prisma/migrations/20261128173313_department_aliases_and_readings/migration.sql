-- AlterTable
ALTER TABLE "departments" ADD COLUMN     "aliases" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "handles" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "members" ADD COLUMN     "dictionaryReading" TEXT;
