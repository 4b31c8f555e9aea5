/**
 * Account administration behind the admin CLI: clients (accounts) with their webhook, users,
 * personal access tokens and permitted senders. Failures are coded GatewayErrors the CLI turns into
 * a message and exit code 1: CLIENT_NOT_FOUND, USER_NOT_FOUND, TOKEN_NOT_FOUND, CLIENT_EXISTS,
 * USER_EXISTS, SENDER_EXISTS, INVALID_ARGUMENT.
 */
import { GatewayError } from '../common/errors.js';
import type { AuthStore } from '../store/sqlite/auth-store.js';
import type { Async } from '../store/ports.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import type { SecretBox } from '../store/secret-box.js';
import { hashPassword, type ScryptCost } from './password.js';
import { generatePat, hashPat, isWellFormedPat, patHint } from './pat.js';

export const SENDER_TYPES = {
  /** Registered with the national regulator (SPEC "Sender entry"): permitted for Irish recipients. */
  registered: 0,
  /** International, not approved by the regulator: not permitted for Irish recipients. */
  international: 1,
  /** Numeric: permitted for Irish recipients. */
  numeric: 2,
} as const;
export type SenderType = (typeof SENDER_TYPES)[keyof typeof SENDER_TYPES];

export interface CreatedClient { id: number; name: string; webhookUrl: string | null; hasWebhookSecret: boolean }
export interface CreatedUser { id: number; username: string; clientName: string; isAdmin: boolean }
export interface IssuedPat { id: number; token: string; hint: string; username: string; expiresAt: number | null }
export interface AddedSender { id: number; clientName: string; name: string; type: SenderType }

function invalidArgument(message: string): GatewayError {
  return new GatewayError('INVALID_ARGUMENT', message);
}

/** http(s) only: the webhook sender speaks nothing else. */
export function checkWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument(`webhook URL "${url}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidArgument(`webhook URL must use http or https, not ${parsed.protocol}`);
  return parsed.toString();
}

export class Accounts {
  constructor(
    private readonly store: Async<AuthStore>,
    private readonly secretBox: SecretBox,
    private readonly patPrefix: string,
    private readonly now: () => number,
    private readonly scryptCost: ScryptCost | undefined,
  ) {}

  async createClient(input: { name: string; webhookUrl?: string; webhookSecret?: string }): Promise<CreatedClient> {
    const name = input.name.trim();
    if (name === '') throw invalidArgument('client name must not be empty');
    if (input.webhookSecret !== undefined && input.webhookUrl === undefined) throw invalidArgument('a webhook secret needs a webhook URL');
    const webhookUrl = input.webhookUrl === undefined ? null : checkWebhookUrl(input.webhookUrl);
    const secret = this.sealSecret(input.webhookSecret);
    try {
      const id = await this.store.insertClient({ name, webhookUrl, webhookSecretEnc: secret }, this.now());
      return { id, name, webhookUrl, hasWebhookSecret: secret !== null };
    } catch (err) {
      if (isUniqueViolation(err)) throw new GatewayError('CLIENT_EXISTS', `client "${name}" already exists`);
      throw err;
    }
  }

  /** `secret` undefined keeps the stored secret, null removes it. */
  async setWebhook(clientName: string, input: { url: string | null; secret?: string | null }): Promise<CreatedClient> {
    const client = await this.client(clientName);
    const webhookUrl = input.url === null ? null : checkWebhookUrl(input.url);
    const secretEnc = input.secret === undefined ? client.webhook_secret_enc : this.sealSecret(input.secret ?? undefined);
    await this.store.setWebhook(client.id, webhookUrl, webhookUrl === null ? null : secretEnc);
    return { id: client.id, name: client.name, webhookUrl, hasWebhookSecret: webhookUrl !== null && secretEnc !== null };
  }

  async setClientActive(clientName: string, active: boolean): Promise<void> {
    await this.store.setClientActive((await this.client(clientName)).id, active);
  }

  async createUser(input: { clientName: string; username: string; password: string; isAdmin: boolean }): Promise<CreatedUser> {
    const client = await this.client(input.clientName);
    const username = input.username.trim();
    if (username === '' || username !== input.username) throw invalidArgument('username must be non-empty, without leading or trailing spaces');
    if (input.password.length === 0) throw invalidArgument('password must not be empty');
    const passwordHash = await hashPassword(input.password, this.scryptCost);
    try {
      const id = await this.store.insertUser({ clientId: client.id, username, passwordHash, isAdmin: input.isAdmin }, this.now());
      return { id, username, clientName: client.name, isAdmin: input.isAdmin };
    } catch (err) {
      if (isUniqueViolation(err)) throw new GatewayError('USER_EXISTS', `user "${username}" already exists`);
      throw err;
    }
  }

  async setUserActive(username: string, active: boolean): Promise<void> {
    await this.store.setUserActive((await this.user(username)).userId, active);
  }

  /** SPEC "Authentication" §4: only an administrator may call the API. `changed` is false when it already was so. */
  async setUserAdmin(username: string, isAdmin: boolean): Promise<{ username: string; isAdmin: boolean; changed: boolean }> {
    const user = await this.user(username);
    if (user.isAdmin !== isAdmin) await this.store.setUserAdmin(user.userId, isAdmin);
    return { username: user.username, isAdmin, changed: user.isAdmin !== isAdmin };
  }

  /** The token is returned here once and never again: only its SHA-256 is stored. */
  async issuePersonalAccessToken(username: string, options: { expiresAt?: number | null } = {}): Promise<IssuedPat> {
    const user = await this.user(username);
    const expiresAt = options.expiresAt ?? null;
    if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt <= this.now())) throw invalidArgument('token expiry must be in the future');
    const token = generatePat(this.patPrefix);
    const hint = patHint(this.patPrefix, token);
    const id = await this.store.insertPat({ userId: user.userId, tokenHash: hashPat(token), tokenHint: hint, expiresAt }, this.now());
    return { id, token, hint, username: user.username, expiresAt };
  }

  /** True when revoked now, false when it was revoked already. */
  async revokePersonalAccessToken(token: string): Promise<boolean> {
    const row = isWellFormedPat(this.patPrefix, token) ? await this.store.patByHash(hashPat(token)) : undefined;
    if (row === undefined) throw new GatewayError('TOKEN_NOT_FOUND', 'no such personal access token');
    return this.store.revokePat(row.id, this.now());
  }

  async addSender(input: { clientName: string; sender: string; type: number }): Promise<AddedSender> {
    const client = await this.client(input.clientName);
    const name = input.sender.trim();
    if (name === '') throw invalidArgument('sender must not be empty');
    if (!(Object.values(SENDER_TYPES) as number[]).includes(input.type)) throw invalidArgument('sender type must be 0, 1 or 2');
    // SPEC "Create Campaign Request", field from: digits-only up to 20, anything else up to 11 characters.
    const digitsOnly = /^[0-9]+$/.test(name);
    if (digitsOnly ? name.length > 20 : [...name].length > 11) throw invalidArgument('sender is at most 20 digits or 11 characters');
    if (input.type === SENDER_TYPES.numeric && !digitsOnly) throw invalidArgument('a numeric sender (type 2) has digits only');
    try {
      const id = await this.store.insertSender({ clientId: client.id, name, type: input.type }, this.now());
      return { id, clientName: client.name, name, type: input.type as SenderType };
    } catch (err) {
      if (isUniqueViolation(err)) throw new GatewayError('SENDER_EXISTS', `sender "${name}" is already on client "${client.name}"`);
      throw err;
    }
  }

  /** The legacy sender list of one account, in the order they were added. */
  senders(clientId: number): Promise<{ name: string; type: number }[]> {
    return this.store.sendersOfClient(clientId);
  }

  private sealSecret(secret: string | undefined): string | null {
    if (secret === undefined) return null;
    if (secret.length === 0) throw invalidArgument('webhook secret must not be empty');
    return this.secretBox.seal(secret);
  }

  private async client(name: string) {
    const client = await this.store.clientByName(name);
    if (client === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${name}"`);
    return client;
  }

  private async user(username: string) {
    const user = await this.store.userByUsername(username);
    if (user === undefined) throw new GatewayError('USER_NOT_FOUND', `no user named "${username}"`);
    return user;
  }
}
