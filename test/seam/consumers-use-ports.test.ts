/**
 * Everything outside the engine and the webhook sender reaches the store through
 * the async ports (src/store/store-ports.ts), so a PostgreSQL set of ports plugs in at the
 * composition root with no other change. A module in these areas that opens a SQLite handle, names
 * better-sqlite3, builds a SQLite store class of its own or opens a transaction would tie it to
 * SQLite (and, on PostgreSQL, hold a transaction across an await). The compile-time half of the
 * check is test/support/seam-types.ts (type-checked by `npm run build`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
const CONSUMER_AREAS = ['api', 'cli', 'auth', 'campaigns', 'inbound', 'admin'];
/** Owned by the PostgreSQL backend's work: it applies migrations to whatever store is opened. */
const EXEMPT = new Set(['cli/commands/migrate.ts']);

/** Each rule: what it finds, and why it breaks the seam. */
const RULES: { pattern: RegExp; why: string }[] = [
  { pattern: /\bSqliteDatabase\b/, why: 'names the SQLite connection type' },
  { pattern: /['"]better-sqlite3['"]/, why: 'imports better-sqlite3' },
  { pattern: /\.db\b/, why: 'reaches for a raw connection (.db)' },
  { pattern: /\.transaction\(/, why: 'opens a transaction outside a store method' },
  { pattern: /\bnew (AuthStore|CampaignStore|CampaignRequestStore|InboundStore|UndecodablePduStore|AdminQueries|StatusQueries|DispatchStore)\(/, why: 'builds a SQLite store class instead of taking its port' },
  { pattern: /import \{[^}]*\b(AuthStore|CampaignStore|CampaignRequestStore|InboundStore|UndecodablePduStore|AdminQueries|StatusQueries)\b[^}]*\} from/, why: 'imports a store class as a value (import type only)' },
  { pattern: /import \{[^}]*\b(listUsers|setUserPassword|listClients|listSenders|removeSender|listCampaigns|campaignDetail|messagesTo|tokensOfUser|tokenById|queuedPartsByTransport|deadLetterCount|webhooksByClient|campaignsInProgress|probeWritable|countOutboxByState|listDeadLetters|outboxStatesOf|requeueDeadLetters|insertOutboxRow)\b[^}]*\} from '(\.\.\/)+store\//, why: 'calls a store function that takes a connection' },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Lines of code, comments left out (a comment may well say "transaction"). */
function codeLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, index) => {
    let line = raw;
    if (inBlock) {
      const end = line.indexOf('*/');
      if (end === -1) return;
      line = line.slice(end + 2);
      inBlock = false;
    }
    line = line.replace(/\/\*.*?\*\//g, '');
    const start = line.indexOf('/*');
    if (start !== -1) {
      inBlock = true;
      line = line.slice(0, start);
    }
    line = line.replace(/(^|\s)\/\/.*$/, '$1');
    if (line.trim() !== '') out.push({ line, number: index + 1 });
  });
  return out;
}

function violations(text: string): string[] {
  const found: string[] = [];
  for (const { line, number } of codeLines(text)) {
    for (const rule of RULES) if (rule.pattern.test(line)) found.push(`${number}: ${rule.why}`);
  }
  return found;
}

describe('the async store seam', () => {
  it('no module of the API, CLI, auth, campaigns, inbound or admin listener touches SQLite directly', () => {
    const found: string[] = [];
    for (const area of CONSUMER_AREAS) {
      for (const file of sourceFiles(join(SRC, area))) {
        const name = relative(SRC, file);
        if (EXEMPT.has(name)) continue;
        for (const v of violations(readFileSync(file, 'utf8'))) found.push(`${name}:${v}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('the check finds each kind of breach (it can fail)', () => {
    const breaches = [
      "import type { SqliteDatabase } from '../store/database.js';",
      "import Database from 'better-sqlite3';",
      'const rows = store.db.prepare(sql).all();',
      'deps.db.transaction(() => work())();',
      'const auth = new AuthStore(handle);',
      "import { InboundStore } from '../store/inbound-store.js';",
      "import { listUsers } from '../../store/admin-queries.js';",
    ];
    for (const line of breaches) expect(violations(line), line).not.toEqual([]);
    expect(violations("import type { InboundStore } from '../store/inbound-store.js';\n// a comment about store.db.transaction()")).toEqual([]);
  });
});
