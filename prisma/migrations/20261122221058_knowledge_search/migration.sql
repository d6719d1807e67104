-- Nothing wrote knowledge_documents before issue 12: rows without a source file, hash or level cannot be kept.
DELETE FROM "knowledge_documents";

-- AlterTable
ALTER TABLE "knowledge_documents" ADD COLUMN     "contentHash" TEXT NOT NULL,
ADD COLUMN     "departmentId" TEXT,
ADD COLUMN     "level" INTEGER NOT NULL,
ADD COLUMN     "sourcePath" TEXT NOT NULL,
ADD COLUMN     "updatedAt" TIMESTAMP(3) NOT NULL;

-- CreateTable
CREATE TABLE "knowledge_passages" (
    "id" TEXT NOT NULL,
    "documentId" TEXT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "heading" TEXT,
    "text" TEXT NOT NULL,
    "tokens" TEXT[],

    CONSTRAINT "knowledge_passages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "knowledge_passages_tokens_idx" ON "knowledge_passages" USING GIN ("tokens");

-- CreateIndex
CREATE UNIQUE INDEX "knowledge_passages_documentId_ordinal_key" ON "knowledge_passages"("documentId", "ordinal");

-- CreateIndex
CREATE UNIQUE INDEX "knowledge_documents_orgId_sourcePath_key" ON "knowledge_documents"("orgId", "sourcePath");

-- AddForeignKey
ALTER TABLE "knowledge_passages" ADD CONSTRAINT "knowledge_passages_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "knowledge_documents"("id") ON DELETE CASCADE ON UPDATE CASCADE;
