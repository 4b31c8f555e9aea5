/**
 * The bind check of the SMPP server (SMPP 3.4 §4.1): who may bind, from where, and how many
 * times at once across the cluster.
 *
 * - The account is read at every bind (no cache), so an account added, removed or given a new
 *   password while `serve` runs applies at the next bind.
 * - An unknown system_id, a wrong password, a deactivated client and an address outside the
 *   account's allow_ips are all ESME_RBINDFAIL, the same answer: a customer learns nothing about
 *   which accounts exist. The password check costs the same scrypt time whether or not the
 *   system_id exists (a hash of a random password stands in), so the time to answer tells nothing
 *   either; the password is compared in constant time (src/auth/password.ts).
 * - Over the account's max_binds: ESME_RALYBND (docs/guide/smpp-accounts.md). The limit counts
 *   every node's live sessions (src/store/smpp-account-port.ts SmppSessionRegistry).
 * - The store failing: ESME_RSYSERR, so the customer retries.
 * Passwords are never logged.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { isGatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import type { SmppAccountStore, SmppBindCredentials, SmppSessionRegistry } from '../store/smpp-account-port.js';
import { AllowList } from './accounts/allow-ip.js';
import { SERVER_STATUS, type BindDecision, type BindRequest, type ServerHandlers, type ServerSessionInfo, type ServerStatus } from './contracts.js';

export { SESSION_HEARTBEAT_INTERVAL_MS, SESSION_STALE_MS } from '../smpp-customer/session-liveness.js';

export interface BindGateDeps {
  accounts: SmppAccountStore;
  registry: SmppSessionRegistry;
  /** This node's id: its sessions' rows carry it. */
  nodeId: string;
  now: () => number;
  logger: Logger;
  /** A session row not refreshed for this long no longer counts against its account's limit. */
  sessionStaleMs: number;
}

/** Why a bind was refused, for the log (the customer only sees the status). */
type RefusalReason = 'unknown system_id' | 'wrong password' | 'client deactivated' | 'address not allowed' | 'max binds reached' | 'store failed';

export class BindGate implements Pick<ServerHandlers, 'bind' | 'unbound'> {
  private readonly logger: Logger;
  /** A hash of a random password at the default cost, checked against when the system_id is unknown. */
  private standIn: Promise<string> | undefined;

  constructor(private readonly deps: BindGateDeps) {
    this.logger = deps.logger.child({ component: 'smpp-bind-gate', nodeId: deps.nodeId });
  }

  /** Drops this node's leftover session rows (a node that restarted under the same id) and prepares the stand-in hash. */
  async start(): Promise<void> {
    await this.standInHash();
    const removed = await this.deps.registry.removeNode(this.deps.nodeId);
    if (removed > 0) this.logger.info({ removed }, 'removed session rows left by this node before it restarted');
  }

  async bind(request: BindRequest): Promise<BindDecision> {
    const { systemId, remoteAddress, bindType } = request;
    let found: SmppBindCredentials | undefined;
    try {
      found = await this.deps.accounts.findForBind(systemId);
    } catch (err) {
      return this.refuse(request, SERVER_STATUS.systemError, 'store failed', err);
    }
    // Always one scrypt, whether or not the account exists.
    const passwordOk = await verifyPassword(request.password, found?.passwordHash ?? (await this.standInHash()));
    if (found === undefined) return this.refuse(request, SERVER_STATUS.bindFailed, 'unknown system_id');
    if (!passwordOk) return this.refuse(request, SERVER_STATUS.bindFailed, 'wrong password');
    if (!found.clientActive) return this.refuse(request, SERVER_STATUS.bindFailed, 'client deactivated');
    const { account } = found;
    if (!AllowList.of(account.allowIps).allows(remoteAddress)) return this.refuse(request, SERVER_STATUS.bindFailed, 'address not allowed');

    const session: ServerSessionInfo = { sessionId: randomUUID(), account, bindType, remoteAddress };
    const nowMs = this.deps.now();
    let registered: boolean;
    try {
      registered = await this.deps.registry.tryRegister(
        { id: session.sessionId, account_id: account.id, node_id: this.deps.nodeId, bind_type: bindType, address: remoteAddress, bound_at: nowMs, heartbeat_at: nowMs },
        account.maxBinds,
        nowMs - this.deps.sessionStaleMs,
      );
    } catch (err) {
      // Removed between the read and the registration: as if it had not been there.
      if (isGatewayError(err, 'SMPP_ACCOUNT_NOT_FOUND')) return this.refuse(request, SERVER_STATUS.bindFailed, 'unknown system_id');
      return this.refuse(request, SERVER_STATUS.systemError, 'store failed', err);
    }
    if (!registered) return this.refuse(request, SERVER_STATUS.alreadyBound, 'max binds reached');
    this.logger.info({ systemId, sessionId: session.sessionId, bindType, remoteAddress }, 'customer bound');
    return { kind: 'bound', session };
  }

  /** Frees the session's slot. A failure is logged, not thrown: the row stops counting once it is stale. */
  async unbound(session: ServerSessionInfo): Promise<void> {
    try {
      await this.deps.registry.unregister(session.sessionId);
    } catch (err) {
      this.logger.warn({ err, sessionId: session.sessionId, systemId: session.account.systemId }, 'could not free the bind slot; it frees itself once stale');
    }
  }

  /**
   * Keeps this node's live sessions counted; call it every SESSION_HEARTBEAT_INTERVAL_MS with the
   * ids of the sessions bound now. Returns the ids whose rows were gone (deleted as stale while
   * this node stalled: the account may be over its limit, and the caller may close them). A store
   * failure is logged and returns nothing.
   */
  async heartbeat(liveSessionIds: readonly string[]): Promise<readonly string[]> {
    try {
      const lost = await this.deps.registry.heartbeat(this.deps.nodeId, liveSessionIds, this.deps.now());
      if (lost.length > 0) this.logger.warn({ sessionIds: lost }, 'bound sessions no longer counted: their rows went stale while this node stalled');
      return lost;
    } catch (err) {
      this.logger.warn({ err, sessions: liveSessionIds.length }, 'session heartbeat failed');
      return [];
    }
  }

  private standInHash(): Promise<string> {
    this.standIn ??= hashPassword(randomBytes(16).toString('base64'));
    return this.standIn;
  }

  private refuse(request: BindRequest, status: ServerStatus, reason: RefusalReason, err?: unknown): BindDecision {
    const fields = { systemId: request.systemId, bindType: request.bindType, remoteAddress: request.remoteAddress, reason, status };
    if (err === undefined) this.logger.warn(fields, 'bind refused');
    else this.logger.error({ ...fields, err }, 'bind refused: the store failed');
    return { kind: 'refused', status };
  }
}
