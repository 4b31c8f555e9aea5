/**
 * The documentation holds together: every relative link in README.md, docs/ and bench/README.md
 * reaches a file that exists; the README stays a short front page that starts with the two
 * commands; no page refers to an issue tracker instead of saying the reason; and every topic note in
 * docs/behaviour/ is linked from its index.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve('.');

function markdownFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFilesUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const DOC_FILES = [join(ROOT, 'README.md'), join(ROOT, 'bench', 'README.md'), ...markdownFilesUnder(join(ROOT, 'docs'))];

/** Link targets of `[text](target)` and `![alt](target)` outside code blocks and code spans. */
export function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string);
}

function isRelative(target: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');
}

describe('documentation links', () => {
  it('finds the pages and their links', () => {
    expect(DOC_FILES.length).toBeGreaterThanOrEqual(16);
    expect(linkTargets('see [a](b.md#c) and ![d](e.png), not `[x](y)` in code\n```\n[f](g.md)\n```\n')).toEqual(['b.md#c', 'e.png']);
  });

  it('resolves every relative link in README.md, docs/ and bench/README.md to a file that exists', () => {
    const broken = DOC_FILES.flatMap((file) =>
      linkTargets(readFileSync(file, 'utf8'))
        .filter(isRelative)
        .filter((target) => !existsSync(resolve(dirname(file), decodeURI(target.split('#')[0] as string))))
        .map((target) => `${relative(ROOT, file)}: ${target}`),
    );
    expect(broken, `broken links:\n${broken.join('\n')}`).toEqual([]);
  });

  it('has no tracker references ("issue 12", "item 3", "design card") in any page', () => {
    const found = DOC_FILES.flatMap((file) =>
      readFileSync(file, 'utf8').split('\n').flatMap((line, index) =>
        /\bissue \d+/i.test(line) || /\bitem \d+/i.test(line) || /design card/i.test(line) ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`] : [],
      ),
    );
    expect(found, found.join('\n')).toEqual([]);
  });

  it('links every topic note of docs/behaviour/ from docs/behaviour/README.md', () => {
    const index = readFileSync('docs/behaviour/README.md', 'utf8');
    expect(index).toMatch(/^Topic notes$/m);
    const notes = readdirSync('docs/behaviour').filter((name) => name.endsWith('.md') && name !== 'README.md');
    const unlinked = notes.filter((name) => !linkTargets(index).includes(name));
    expect(unlinked, `topic notes not linked from docs/behaviour/README.md: ${unlinked.join(', ')}`).toEqual([]);
  });
});

describe('README.md', () => {
  const lines = readFileSync('README.md', 'utf8').split('\n');

  it('is under 250 lines', () => {
    expect(lines.length).toBeLessThan(250);
  });

  it('starts with `npm ci && npm start` and `npm test` within its first 15 lines', () => {
    const head = lines.slice(0, 15);
    expect(head.some((line) => line.includes('npm ci && npm start'))).toBe(true);
    expect(head.some((line) => /(^|\s)npm test(\s|$)/.test(line))).toBe(true);
  });

  it('names what npm test needs: the system packages .ci/run installs', () => {
    const ci = readFileSync('.ci/run', 'utf8');
    const packages = /apt-get install -y -qq ([^>\n]+)/.exec(ci)?.[1]?.trim().split(/\s+/) ?? [];
    expect(packages).toContain('postgresql');
    const text = lines.join('\n');
    const missing = packages.filter((name) => !text.includes(`\`${name}\``));
    expect(missing, `packages .ci/run installs that README.md does not name: ${missing.join(', ')}`).toEqual([]);
  });
});
