/**
 * The async ports the PostgreSQL stores implement (issue 11 item 1). For a store that is a class on
 * SQLite it is `Async<ThatClass>` (src/store/ports.ts). For the modules that are still free
 * functions taking `db` on main (admin-queries.ts, status-store.ts, webhook-store.ts), the naming
 * rule of the seam says the class they become has the same methods minus `db`: AsyncQueries
 * derives exactly that from the module, so when the class lands, `Async<AdminQueries>` and
 * `AsyncQueries<typeof adminQueries>` are the same type and the compiler says if they drift.
 */
import type * as adminQueries from '../admin-queries.js';
import type { SqliteDatabase } from '../database.js';
import type { Async } from '../ports.js';
import type * as statusQueries from '../status-store.js';
import type * as webhookQueries from '../webhook-store.js';

// `any[]` matches every parameter list in a conditional type; the mapped result keeps each
// function's own parameter and return types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type DbFunction = (db: SqliteDatabase, ...args: any[]) => unknown;

type WithoutDb<F> = F extends (db: SqliteDatabase, ...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

/** The functions of a module that take `db` first, as async methods without it. */
export type AsyncQueries<Module> = {
  [K in keyof Module as Module[K] extends DbFunction ? K : never]: WithoutDb<Module[K]>;
};

/**
 * `Async<TheClass>` once the module exports the class the seam makes of it, else the functions'
 * AsyncQueries: the same methods either way, so this compiles before and after that lands, and
 * checks the PostgreSQL class against whichever the module has.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PortOf<Module, ClassName extends string> = Module extends { [K in ClassName]: abstract new (...args: any[]) => infer Instance }
  ? Async<Instance>
  : AsyncQueries<Module>;

/** `AdminQueries` of the seam (admin-queries.ts as a class), async. */
export type AdminQueriesPort = PortOf<typeof adminQueries, 'AdminQueries'>;
/** `StatusQueries` of the seam (status-store.ts as a class), async. */
export type StatusQueriesPort = PortOf<typeof statusQueries, 'StatusQueries'>;
/** `WebhookStore` (webhook-store.ts as a class), async. */
export type WebhookStorePort = PortOf<typeof webhookQueries, 'WebhookStore'>;
