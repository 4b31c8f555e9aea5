/**
 * Whether a decoded submit_sm is accepted, and everything its rows need (read -> decide -> write:
 * the facts are read by the caller, this decides once, the store writes). Pure. The rules are the
 * HTTP campaign path's, called here rather than copied:
 * - destination and the Irish permitted-sender rule and the opt-outs: planRecipients
 *   (src/campaigns/recipient-plan.ts), the destination as a one-recipient request;
 * - the sender: checkedSender, senderProblem's rules (src/campaigns/campaign-request.ts);
 * - the route: planRoute (src/engine/routing.ts), as materialise routes a recipient;
 * - the price: creditsPerPart (src/accounts/credits.ts) x the parts; a whole message
 *   (concatenation null) in the parts the SMS core splits a campaign's text into (partsPerMessage);
 * - the client's send rate: the GCRA of src/engine/send-rate.ts against this node's own state.
 * Statuses per refusal (docs/behaviour/smpp-server-submits.md): invalid destination or opted out
 * ESME_RINVDSTADR, sender refused ESME_RINVSRCADR, no route ESME_RSUBMITFAIL, over the rate
 * ESME_RTHROTTLED. Too few credits (ESME_RSUBMITFAIL) is decided in the store's transaction.
 */
import { creditsPerPart, type PricingRule } from '../../accounts/credits.js';
import { analyzeText, normalizeMsisdn, type MsisdnResult, type NumberingPlan } from '../../sms/index.js';
import { checkedSender } from '../../campaigns/campaign-request.js';
import { isPermittedForIreland, planRecipients } from '../../campaigns/recipient-plan.js';
import { planRoute } from '../../engine/routing.js';
import { advancedTo, burstOf, partsAllowed, type SendRateState } from '../../engine/send-rate.js';
import type { Routing } from '../../engine/steps/materialise.js';
import type { IntakeFacts, IntakeSubmit } from '../../store/smpp-intake-port.js';
import { SERVER_STATUS, type CustomerCut, type ServerStatus, type SmppAccount, type SubmitSmFields } from '../contracts.js';

/** What the store is asked before planning: the destination as the campaign path normalises a recipient. */
export function intakeDestination(fields: Pick<SubmitSmFields, 'destinationAddr'>, numbering: NumberingPlan): MsisdnResult {
  return normalizeMsisdn(fields.destinationAddr, numbering);
}

/** The sender as the sender rules keep it (trimmed), or undefined when they refuse it. */
export function intakeSender(fields: Pick<SubmitSmFields, 'sourceAddr'>): string | undefined {
  const sender = checkedSender(fields.sourceAddr);
  return sender.ok ? sender.value : undefined;
}

export interface SubmitPlanInput {
  account: SmppAccount;
  fields: SubmitSmFields;
  /** decodeSubmit's result. */
  text: string;
  cut: CustomerCut;
  destination: MsisdnResult;
  sender: string | undefined;
  /** Read for (client, sender, destination); undefined when the destination or sender was refused (nothing read). */
  facts: IntakeFacts | undefined;
  routing: Routing;
  /** How national numbers become international (config numbering.country). */
  numbering: NumberingPlan;
  pricing: readonly PricingRule[];
  /** This node's limiter state of the client (its TAT); 0 when it has not sent through this node. */
  nextPartAtUs: number;
  /** The new message's id (a UUID): the campaign id. */
  messageId: string;
  /** Spreads a weighted route's messages (materialise uses the recipient id): a counter of the intake. */
  spreadKey: number;
  nowMs: number;
}

export type SubmitPlan =
  | { kind: 'refused'; status: ServerStatus }
  /** `nextPartAtUs`: this node's limiter state of the client after this message (null: the client has no rate). */
  | { kind: 'accept'; submit: IntakeSubmit; nextPartAtUs: number | null };

function refuse(status: ServerStatus): SubmitPlan {
  return { kind: 'refused', status };
}

/** The encoding column as the operator's campaign list shows it, for a part the customer cut. */
const CUT_ENCODING = { 0: 'GSM-7', 3: 'Latin-1', 8: 'UCS-2' } as const;

/**
 * Whether the client's send rate lets a message of `parts` through now. A message longer than the
 * burst passes once the client is idle (a whole burst allowed): it could never pass otherwise.
 */
export function rateAllows(state: SendRateState, parts: number, nowMs: number): boolean {
  return partsAllowed(state, nowMs) >= Math.min(parts, burstOf(state.partsPerSecond));
}

export function planSubmit(input: SubmitPlanInput): SubmitPlan {
  const { account, destination, sender, facts, nowMs } = input;
  if (!destination.ok) return refuse(SERVER_STATUS.invalidDestinationAddress);
  if (sender === undefined || facts === undefined) return refuse(SERVER_STATUS.invalidSourceAddress);
  // The destination as a one-recipient request: the same normalisation (so the same number the
  // facts were read for), the Irish permitted-sender rule and the opt-outs.
  const recipients = planRecipients([{ msisdn: input.fields.destinationAddr, clientReference: null }], {
    senderPermittedForIreland: isPermittedForIreland(facts.senderType),
    numbering: input.numbering,
    ...(facts.optedOut ? { suppressed: new Set([destination.msisdn]) } : {}),
  });
  const kept = recipients.accepted[0];
  if (kept === undefined) {
    if (recipients.skipped.unpermitted > 0) return refuse(SERVER_STATUS.invalidSourceAddress);
    return refuse(SERVER_STATUS.invalidDestinationAddress);
  }
  const msisdn = kept.msisdn;
  const choice = planRoute(input.routing.routes, { msisdn, client: account.clientName, spreadKey: input.spreadKey }, input.routing.conditions, nowMs);
  if (choice.kind === 'no-route') return refuse(SERVER_STATUS.submitFailed);

  // A part the customer cut goes as it is; a whole message is split by the SMS core as a campaign's text is.
  const whole = input.cut.concat === null ? analyzeText(input.text) : undefined;
  const parts = whole?.parts ?? 1;
  let nextPartAtUs: number | null = null;
  if (facts.partsPerSecond !== null) {
    const state: SendRateState = { partsPerSecond: facts.partsPerSecond, nextPartAtUs: input.nextPartAtUs };
    if (!rateAllows(state, parts, nowMs)) return refuse(SERVER_STATUS.throttled);
    nextPartAtUs = advancedTo(state, parts, nowMs);
  }
  const concat = input.cut.concat;
  return {
    kind: 'accept',
    nextPartAtUs,
    submit: {
      messageId: input.messageId,
      clientId: account.clientId,
      accountId: account.id,
      name: `SMPP ${account.systemId}`,
      sender,
      text: input.text,
      textSent: whole?.text ?? input.text,
      encoding: whole?.encoding ?? CUT_ENCODING[input.cut.dataCoding],
      partsPerMessage: parts,
      smppSubmitJson: JSON.stringify(input.cut),
      msisdn,
      creditsPerPart: creditsPerPart(input.pricing, msisdn),
      concatReference: concat?.reference ?? null,
      transport: choice.transport,
      dueAtMs: choice.kind === 'wait' ? choice.untilMs : nowMs,
    },
  };
}
