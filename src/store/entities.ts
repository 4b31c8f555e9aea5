/**
 * The row types of the store's tables, and TABLE_COLUMNS: the same columns as a runtime list
 * derived from them. The migrations (migrations/) create the tables; the
 * *-store.ts modules read and write them with prepared statements; nothing queries through TypeORM
 * entities, so there are none (TypeORM runs the migrations only). test/store/schema-matches-rows.test.ts
 * migrates a fresh file and compares every table's `PRAGMA table_info` with TABLE_COLUMNS, and the
 * compiler checks TABLE_COLUMNS against the row types, so the three cannot drift.
 */
import type { CreditKind } from '../accounts/credits.js';

export interface ClientRow { id: number; name: string; active: number; webhook_url: string | null; webhook_secret_enc: string | null; created_at: number; inbound_webhook_url: string | null; optout_keywords: string | null }
export interface UserRow { id: number; client_id: number; username: string; password_hash: string; is_admin: number; active: number; created_at: number }
export interface PersonalAccessTokenRow { id: number; user_id: number; token_hash: string; token_hint: string; created_at: number; expires_at: number | null; revoked_at: number | null; last_used_at: number | null }
export interface RefreshSessionRow { id: string; user_id: number; client_id: string; family_id: string; token_hash: string; created_at: number; expires_at: number; used_at: number | null; revoked_at: number | null }
export interface SigningKeyRow { kid: string; alg: string; private_jwk_enc: string; public_jwk: string; created_at: number; retired_at: number | null }
export interface SenderRow { id: number; client_id: number; name: string; type: number; created_at: number }
export type CampaignState = 'queued' | 'draft' | 'processing' | 'ready' | 'failed';
export interface CampaignRow {
  id: string; client_id: number; user_id: number | null; state: CampaignState; name: string; sender: string; text: string;
  send_at_local: string | null; send_at: number | null; create_as_draft: number; should_save_list: number;
  request_recipients: string | null; text_sent: string | null; encoding: string | null; parts_per_message: number | null;
  total_sent: number | null; skipped_count: number | null; failure_reason: string | null;
  created_at: number; ready_at: number | null; dispatched_at: number | null; processing_by: string | null;
  /** What the campaign reserved when accepted; null when accepted while its client was unlimited (never charged). */
  credits_reserved: number | null;
  /** The SMPP server account that submitted it (a campaign of one submit_sm); null from the HTTP API. */
  smpp_account_id: number | null;
  /** The customer's cut of that submit_sm as JSON (src/smpp-server/contracts.ts CustomerCut); null from the HTTP API. */
  smpp_submit: string | null;
}
export type RecipientStatus = 'pending' | 'delivered' | 'undelivered';
export interface RecipientRow { id: number; campaign_id: string; msisdn: string; client_reference: string | null; dispatch_state: 'waiting' | 'dispatched'; status: RecipientStatus; last_status: string | null; updated_at: number | null; credits_per_part: number }
export type PartState = 'queued' | 'submitting' | 'submitted' | 'delivered' | 'undelivered';
export interface MessagePartRow {
  id: number; recipient_id: number; campaign_id: string; part_number: number; parts_total: number; concat_reference: number;
  transport: string | null; state: PartState; message_id: string | null; attempts: number; next_attempt_at: number;
  last_status: string | null; last_error_code: string | null; submitted_at: number | null; final_at: number | null; updated_at: number;
  /** The node whose claim this part is under (cluster only; null on SQLite). */
  claimed_by: string | null;
  /** The part's price in credits, fixed when its campaign was processed (0: nothing to charge). */
  credits: number;
}
export interface ReceiptRow { id: number; transport: string; message_id: string; status: string; final: number; error_code: string | null; done_at: string | null; raw: string; received_at: number; match_state: 'matched' | 'pending' | 'expired'; part_id: number | null }
export interface UndecodablePduRow { id: number; transport: string; device: string; hex: string; reason_code: string; reason: string; received_at: number }
export interface ClusterNodeRow { id: string; host: string; pid: number; api_port: number | null; started_at: number; heartbeat_at: number; lease_until: number; settings: string | null }
export interface InboundMessageRow { id: number; transport: string; sender: string; recipient: string; text: string; raw: string; received_at: number; /** Added by ALTER TABLE, which cannot add NOT NULL: the migration backfills it and every insert writes one. */ public_id: string | null; client_id: number | null; incomplete: number }
export interface InboundRouteRow { id: number; client_id: number; address: string; created_at: number }
export interface InboundPartRow { id: number; transport: string; sender: string; recipient: string; scheme: string; reference: number; total: number; sequence: number; coding: 'gsm7' | 'ucs2' | 'binary'; body: string; raw: string; received_at: number }
export interface ClientCreditsRow { client_id: number; unlimited: number; balance: number; reserved: number; low_since: number | null; updated_at: number }
export type { CreditKind };
export interface CreditLedgerRow { id: number; client_id: number; kind: CreditKind; credits: number; campaign_id: string | null; note: string | null; at: number }
export interface ClientSendRateRow { client_id: number; parts_per_second: number; next_part_at_us: number; updated_at: number }
export interface IdempotencyKeyRow { client_id: number; key: string; request_hash: string; state: 'in_flight' | 'done'; campaign_id: string | null; created_at: number; held_until: number }
export interface SmppAccountRow { id: number; system_id: string; client_id: number; password_hash: string; max_binds: number | null; allow_ips: string; created_at: number; updated_at: number }
export interface SmppServerSessionRow { id: string; account_id: number; node_id: string; bind_type: 'transmitter' | 'receiver' | 'transceiver'; address: string; bound_at: number; heartbeat_at: number }
export interface SmppDeliveryRow {
  id: number; account_id: number; kind: 'receipt' | 'inbound'; message_id: string | null; deliver_sm: string; state: 'waiting' | 'delivered' | 'expired';
  attempts: number; next_attempt_at: number; leased_by: string | null; lease_until: number | null; created_at: number; expires_at: number; done_at: number | null;
}
export interface OptoutRow { client_id: number; msisdn: string; source: 'keyword' | 'admin'; created_at: number }
export interface CampaignRequestChunkRow { campaign_id: string; seq: number; recipients_json: string }
export interface WebhookOutboxRow { id: number; client_id: number; recipient_id: number | null; body: string; state: 'pending' | 'delivered' | 'dead'; attempts: number; next_attempt_at: number; last_error: string | null; created_at: number; delivered_at: number | null; dead_at: number | null; event_id: string | null; dead_reason: 'transient' | 'permanent' | null; dead_url: string | null; kind: 'receipt' | 'inbound'; leased_by: string | null; lease_until: number | null }

/** How SQLite declares a column: its type affinity, and ` null` when it may hold NULL. */
type ColumnDecl<Value> = `${[Exclude<Value, null>] extends [number] ? 'INTEGER' : 'TEXT'}${null extends Value ? ' null' : ''}`;
/** Exactly the row's columns (a missing or extra key is a compile error), each declared as its type says. */
type Columns<Row> = { readonly [Key in keyof Row]-?: ColumnDecl<Row[Key]> };

function columns<Row>(declared: Columns<Row>): Columns<Row> {
  return declared;
}

/**
 * Every table the migrations create (except TypeORM's own `migrations`), column by column. A
 * primary key column counts as NOT NULL whatever SQLite's table_info says (an INTEGER PRIMARY KEY is
 * the rowid and never NULL; the text keys are always written).
 */
export const TABLE_COLUMNS = {
  clients: columns<ClientRow>({ id: 'INTEGER', name: 'TEXT', active: 'INTEGER', webhook_url: 'TEXT null', webhook_secret_enc: 'TEXT null', created_at: 'INTEGER', inbound_webhook_url: 'TEXT null', optout_keywords: 'TEXT null' }),
  users: columns<UserRow>({ id: 'INTEGER', client_id: 'INTEGER', username: 'TEXT', password_hash: 'TEXT', is_admin: 'INTEGER', active: 'INTEGER', created_at: 'INTEGER' }),
  personal_access_tokens: columns<PersonalAccessTokenRow>({ id: 'INTEGER', user_id: 'INTEGER', token_hash: 'TEXT', token_hint: 'TEXT', created_at: 'INTEGER', expires_at: 'INTEGER null', revoked_at: 'INTEGER null', last_used_at: 'INTEGER null' }),
  refresh_sessions: columns<RefreshSessionRow>({ id: 'TEXT', user_id: 'INTEGER', client_id: 'TEXT', family_id: 'TEXT', token_hash: 'TEXT', created_at: 'INTEGER', expires_at: 'INTEGER', used_at: 'INTEGER null', revoked_at: 'INTEGER null' }),
  signing_keys: columns<SigningKeyRow>({ kid: 'TEXT', alg: 'TEXT', private_jwk_enc: 'TEXT', public_jwk: 'TEXT', created_at: 'INTEGER', retired_at: 'INTEGER null' }),
  senders: columns<SenderRow>({ id: 'INTEGER', client_id: 'INTEGER', name: 'TEXT', type: 'INTEGER', created_at: 'INTEGER' }),
  campaigns: columns<CampaignRow>({
    id: 'TEXT', client_id: 'INTEGER', user_id: 'INTEGER null', state: 'TEXT', name: 'TEXT', sender: 'TEXT', text: 'TEXT',
    send_at_local: 'TEXT null', send_at: 'INTEGER null', create_as_draft: 'INTEGER', should_save_list: 'INTEGER', request_recipients: 'TEXT null',
    text_sent: 'TEXT null', encoding: 'TEXT null', parts_per_message: 'INTEGER null', total_sent: 'INTEGER null', skipped_count: 'INTEGER null',
    failure_reason: 'TEXT null', created_at: 'INTEGER', ready_at: 'INTEGER null', dispatched_at: 'INTEGER null', processing_by: 'TEXT null',
    credits_reserved: 'INTEGER null', smpp_account_id: 'INTEGER null', smpp_submit: 'TEXT null',
  }),
  campaign_request_chunks: columns<CampaignRequestChunkRow>({ campaign_id: 'TEXT', seq: 'INTEGER', recipients_json: 'TEXT' }),
  recipients: columns<RecipientRow>({ id: 'INTEGER', campaign_id: 'TEXT', msisdn: 'TEXT', client_reference: 'TEXT null', dispatch_state: 'TEXT', status: 'TEXT', last_status: 'TEXT null', updated_at: 'INTEGER null', credits_per_part: 'INTEGER' }),
  message_parts: columns<MessagePartRow>({
    id: 'INTEGER', recipient_id: 'INTEGER', campaign_id: 'TEXT', part_number: 'INTEGER', parts_total: 'INTEGER', concat_reference: 'INTEGER', transport: 'TEXT null',
    state: 'TEXT', message_id: 'TEXT null', attempts: 'INTEGER', next_attempt_at: 'INTEGER', last_status: 'TEXT null', last_error_code: 'TEXT null',
    submitted_at: 'INTEGER null', final_at: 'INTEGER null', updated_at: 'INTEGER', claimed_by: 'TEXT null', credits: 'INTEGER',
  }),
  receipts: columns<ReceiptRow>({ id: 'INTEGER', transport: 'TEXT', message_id: 'TEXT', status: 'TEXT', final: 'INTEGER', error_code: 'TEXT null', done_at: 'TEXT null', raw: 'TEXT', received_at: 'INTEGER', match_state: 'TEXT', part_id: 'INTEGER null' }),
  inbound_messages: columns<InboundMessageRow>({ id: 'INTEGER', transport: 'TEXT', sender: 'TEXT', recipient: 'TEXT', text: 'TEXT', raw: 'TEXT', received_at: 'INTEGER', public_id: 'TEXT null', client_id: 'INTEGER null', incomplete: 'INTEGER' }),
  inbound_routes: columns<InboundRouteRow>({ id: 'INTEGER', client_id: 'INTEGER', address: 'TEXT', created_at: 'INTEGER' }),
  inbound_parts: columns<InboundPartRow>({ id: 'INTEGER', transport: 'TEXT', sender: 'TEXT', recipient: 'TEXT', scheme: 'TEXT', reference: 'INTEGER', total: 'INTEGER', sequence: 'INTEGER', coding: 'TEXT', body: 'TEXT', raw: 'TEXT', received_at: 'INTEGER' }),
  client_credits: columns<ClientCreditsRow>({ client_id: 'INTEGER', unlimited: 'INTEGER', balance: 'INTEGER', reserved: 'INTEGER', low_since: 'INTEGER null', updated_at: 'INTEGER' }),
  credit_ledger: columns<CreditLedgerRow>({ id: 'INTEGER', client_id: 'INTEGER', kind: 'TEXT', credits: 'INTEGER', campaign_id: 'TEXT null', note: 'TEXT null', at: 'INTEGER' }),
  client_send_rates: columns<ClientSendRateRow>({ client_id: 'INTEGER', parts_per_second: 'INTEGER', next_part_at_us: 'INTEGER', updated_at: 'INTEGER' }),
  idempotency_keys: columns<IdempotencyKeyRow>({ client_id: 'INTEGER', key: 'TEXT', request_hash: 'TEXT', state: 'TEXT', campaign_id: 'TEXT null', created_at: 'INTEGER', held_until: 'INTEGER' }),
  smpp_accounts: columns<SmppAccountRow>({ id: 'INTEGER', system_id: 'TEXT', client_id: 'INTEGER', password_hash: 'TEXT', max_binds: 'INTEGER null', allow_ips: 'TEXT', created_at: 'INTEGER', updated_at: 'INTEGER' }),
  smpp_server_sessions: columns<SmppServerSessionRow>({ id: 'TEXT', account_id: 'INTEGER', node_id: 'TEXT', bind_type: 'TEXT', address: 'TEXT', bound_at: 'INTEGER', heartbeat_at: 'INTEGER' }),
  smpp_deliveries: columns<SmppDeliveryRow>({
    id: 'INTEGER', account_id: 'INTEGER', kind: 'TEXT', message_id: 'TEXT null', deliver_sm: 'TEXT', state: 'TEXT', attempts: 'INTEGER', next_attempt_at: 'INTEGER',
    leased_by: 'TEXT null', lease_until: 'INTEGER null', created_at: 'INTEGER', expires_at: 'INTEGER', done_at: 'INTEGER null',
  }),
  optouts: columns<OptoutRow>({ client_id: 'INTEGER', msisdn: 'TEXT', source: 'TEXT', created_at: 'INTEGER' }),
  cluster_nodes: columns<ClusterNodeRow>({ id: 'TEXT', host: 'TEXT', pid: 'INTEGER', api_port: 'INTEGER null', started_at: 'INTEGER', heartbeat_at: 'INTEGER', lease_until: 'INTEGER', settings: 'TEXT null' }),
  undecodable_pdus: columns<UndecodablePduRow>({ id: 'INTEGER', transport: 'TEXT', device: 'TEXT', hex: 'TEXT', reason_code: 'TEXT', reason: 'TEXT', received_at: 'INTEGER' }),
  webhook_outbox: columns<WebhookOutboxRow>({
    id: 'INTEGER', client_id: 'INTEGER', recipient_id: 'INTEGER null', body: 'TEXT', state: 'TEXT', attempts: 'INTEGER', next_attempt_at: 'INTEGER', last_error: 'TEXT null',
    created_at: 'INTEGER', delivered_at: 'INTEGER null', dead_at: 'INTEGER null', event_id: 'TEXT null', dead_reason: 'TEXT null', dead_url: 'TEXT null', kind: 'TEXT', leased_by: 'TEXT null', lease_until: 'INTEGER null',
  }),
} as const;

export type TableName = keyof typeof TABLE_COLUMNS;
