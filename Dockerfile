# Multi-stage build on Node LTS. The runtime image runs the compiled service; migrations are applied
# by the service itself at start (against DATABASE_URL).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY handlers ./handlers
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./
# Runtime files are looked up relative to the compiled code (dist/src/... → dist/...).
COPY prisma ./dist/prisma
COPY prompts ./dist/prompts
COPY config ./dist/config
COPY src/adapters/console/console.html ./dist/src/adapters/console/console.html
COPY src/server/admin/admin.html src/server/admin/admin.js src/server/admin/login.html ./dist/src/server/admin/
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
