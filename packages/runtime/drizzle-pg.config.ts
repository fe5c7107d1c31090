/**
 * drizzle-kit configuration of the PostgreSQL state store: `npm run db:generate:pg` writes a
 * migration for changes to src/store/pg/schema.ts.
 */
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/pg/schema.ts",
  out: "./drizzle-pg",
});
