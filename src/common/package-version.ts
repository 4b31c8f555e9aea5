/**
 * The installed package's version, read from its package.json: the nearest one above this module
 * named "smsgate" (dist/src/ in a build or an install, src/ under the test runner).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'smsgate' && typeof manifest.version === 'string') return manifest.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json of smsgate not found above the command');
    dir = parent;
  }
}
