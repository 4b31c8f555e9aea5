/**
 * TypeORM entity schemas, one per table of migrations/. EntitySchema (not decorators) because the
 * test runner's transform does not emit decorator metadata; every column therefore names its type.
 * Hot paths bypass TypeORM with prepared statements (see the *-store.ts modules); these schemas
 * serve admin work, repositories and the migration runner's metadata.
 */
import { EntitySchema } from 'typeorm';

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
  created_at: number; ready_at: number | null; dispatched_at: number | null;
}
export type RecipientStatus = 'pending' | 'delivered' | 'undelivered';
export interface RecipientRow { id: number; campaign_id: string; msisdn: string; client_reference: string | null; dispatch_state: 'waiting' | 'dispatched'; status: RecipientStatus; last_status: string | null; updated_at: number | null }
export type PartState = 'queued' | 'submitting' | 'submitted' | 'delivered' | 'undelivered';
export interface MessagePartRow {
  id: number; recipient_id: number; campaign_id: string; part_number: number; parts_total: number; concat_reference: number;
  transport: string | null; state: PartState; message_id: string | null; attempts: number; next_attempt_at: number;
  last_status: string | null; last_error_code: string | null; submitted_at: number | null; final_at: number | null; updated_at: number;
}
export interface ReceiptRow { id: number; transport: string; message_id: string; status: string; final: number; error_code: string | null; done_at: string | null; raw: string; received_at: number; match_state: 'matched' | 'pending' | 'expired'; part_id: number | null }
export interface UndecodablePduRow { id: number; transport: string; device: string; hex: string; reason_code: string; reason: string; received_at: number }
export interface InboundMessageRow { id: number; transport: string; sender: string; recipient: string; text: string; raw: string; received_at: number; public_id: string; client_id: number | null; incomplete: number }
export interface InboundRouteRow { id: number; client_id: number; address: string; created_at: number }
export interface InboundPartRow { id: number; transport: string; sender: string; recipient: string; scheme: string; reference: number; total: number; sequence: number; coding: 'gsm7' | 'ucs2' | 'binary'; body: string; raw: string; received_at: number }
export interface OptoutRow { client_id: number; msisdn: string; source: 'keyword' | 'admin'; created_at: number }
export interface WebhookOutboxRow { id: number; client_id: number; recipient_id: number | null; body: string; state: 'pending' | 'delivered' | 'dead'; attempts: number; next_attempt_at: number; last_error: string | null; created_at: number; delivered_at: number | null; dead_at: number | null; event_id: string | null; dead_reason: 'transient' | 'permanent' | null; dead_url: string | null; kind: 'receipt' | 'inbound' }

const int = { type: 'integer' } as const;
const intNull = { type: 'integer', nullable: true } as const;
const text = { type: 'text' } as const;
const textNull = { type: 'text', nullable: true } as const;
const intPk = { type: 'integer', primary: true, generated: 'increment' } as const;

export const ClientEntity = new EntitySchema<ClientRow>({
  name: 'Client', tableName: 'clients',
  columns: { id: intPk, name: { ...text, unique: true }, active: int, webhook_url: textNull, webhook_secret_enc: textNull, created_at: int, inbound_webhook_url: textNull, optout_keywords: textNull },
});
export const UserEntity = new EntitySchema<UserRow>({
  name: 'User', tableName: 'users',
  columns: { id: intPk, client_id: int, username: { ...text, unique: true }, password_hash: text, is_admin: int, active: int, created_at: int },
});
export const PersonalAccessTokenEntity = new EntitySchema<PersonalAccessTokenRow>({
  name: 'PersonalAccessToken', tableName: 'personal_access_tokens',
  columns: { id: intPk, user_id: int, token_hash: { ...text, unique: true }, token_hint: text, created_at: int, expires_at: intNull, revoked_at: intNull, last_used_at: intNull },
});
export const RefreshSessionEntity = new EntitySchema<RefreshSessionRow>({
  name: 'RefreshSession', tableName: 'refresh_sessions',
  columns: { id: { type: 'text', primary: true }, user_id: int, client_id: text, family_id: text, token_hash: { ...text, unique: true }, created_at: int, expires_at: int, used_at: intNull, revoked_at: intNull },
});
export const SigningKeyEntity = new EntitySchema<SigningKeyRow>({
  name: 'SigningKey', tableName: 'signing_keys',
  columns: { kid: { type: 'text', primary: true }, alg: text, private_jwk_enc: text, public_jwk: text, created_at: int, retired_at: intNull },
});
export const SenderEntity = new EntitySchema<SenderRow>({
  name: 'Sender', tableName: 'senders',
  columns: { id: intPk, client_id: int, name: text, type: int, created_at: int },
});
export const CampaignEntity = new EntitySchema<CampaignRow>({
  name: 'Campaign', tableName: 'campaigns',
  columns: {
    id: { type: 'text', primary: true }, client_id: int, user_id: intNull, state: text, name: text, sender: text, text,
    send_at_local: textNull, send_at: intNull, create_as_draft: int, should_save_list: int, request_recipients: textNull,
    text_sent: textNull, encoding: textNull, parts_per_message: intNull, total_sent: intNull, skipped_count: intNull,
    failure_reason: textNull, created_at: int, ready_at: intNull, dispatched_at: intNull,
  },
});
export const RecipientEntity = new EntitySchema<RecipientRow>({
  name: 'Recipient', tableName: 'recipients',
  columns: { id: intPk, campaign_id: text, msisdn: text, client_reference: textNull, dispatch_state: text, status: text, last_status: textNull, updated_at: intNull },
});
export const MessagePartEntity = new EntitySchema<MessagePartRow>({
  name: 'MessagePart', tableName: 'message_parts',
  columns: {
    id: intPk, recipient_id: int, campaign_id: text, part_number: int, parts_total: int, concat_reference: int, transport: textNull,
    state: text, message_id: textNull, attempts: int, next_attempt_at: int, last_status: textNull, last_error_code: textNull,
    submitted_at: intNull, final_at: intNull, updated_at: int,
  },
});
export const ReceiptEntity = new EntitySchema<ReceiptRow>({
  name: 'Receipt', tableName: 'receipts',
  columns: { id: intPk, transport: text, message_id: text, status: text, final: int, error_code: textNull, done_at: textNull, raw: text, received_at: int, match_state: text, part_id: intNull },
});
export const InboundMessageEntity = new EntitySchema<InboundMessageRow>({
  name: 'InboundMessage', tableName: 'inbound_messages',
  columns: { id: intPk, transport: text, sender: text, recipient: text, text, raw: text, received_at: int, public_id: text, client_id: intNull, incomplete: int },
});
export const InboundRouteEntity = new EntitySchema<InboundRouteRow>({
  name: 'InboundRoute', tableName: 'inbound_routes',
  columns: { id: intPk, client_id: int, address: { ...text, unique: true }, created_at: int },
});
export const InboundPartEntity = new EntitySchema<InboundPartRow>({
  name: 'InboundPart', tableName: 'inbound_parts',
  columns: { id: intPk, transport: text, sender: text, recipient: text, scheme: text, reference: int, total: int, sequence: int, coding: text, body: text, raw: text, received_at: int },
});
export const OptoutEntity = new EntitySchema<OptoutRow>({
  name: 'Optout', tableName: 'optouts',
  columns: { client_id: { type: 'integer', primary: true }, msisdn: { type: 'text', primary: true }, source: text, created_at: int },
});
export const UndecodablePduEntity = new EntitySchema<UndecodablePduRow>({
  name: 'UndecodablePdu', tableName: 'undecodable_pdus',
  columns: { id: intPk, transport: text, device: text, hex: text, reason_code: text, reason: text, received_at: int },
});
export const WebhookOutboxEntity = new EntitySchema<WebhookOutboxRow>({
  name: 'WebhookOutbox', tableName: 'webhook_outbox',
  columns: { id: intPk, client_id: int, recipient_id: intNull, body: text, state: text, attempts: int, next_attempt_at: int, last_error: textNull, created_at: int, delivered_at: intNull, dead_at: intNull, event_id: textNull, dead_reason: textNull, dead_url: textNull, kind: text },
});

export const ENTITIES = [
  ClientEntity, UserEntity, PersonalAccessTokenEntity, RefreshSessionEntity, SigningKeyEntity, SenderEntity,
  CampaignEntity, RecipientEntity, MessagePartEntity, ReceiptEntity, InboundMessageEntity, WebhookOutboxEntity,
  UndecodablePduEntity,
  InboundRouteEntity, InboundPartEntity, OptoutEntity,
] as const;
