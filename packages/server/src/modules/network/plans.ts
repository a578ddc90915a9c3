/** What each plan allows. The API surface is the same on every plan; only limits differ. */
import type { Plan } from '@warren/contract';
import type { Settings } from '../../core/context.js';

export interface PlanLimits {
  users: number | null; // null: unlimited
  devices: number | null;
  logRetentionDays: number;
  webhooks: number | null;
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: { users: 3, devices: 100, logRetentionDays: 7, webhooks: 1 },
  premium: { users: null, devices: null, logRetentionDays: 90, webhooks: null },
};

export function limitsOf(plan: string): PlanLimits {
  return PLAN_LIMITS[plan as Plan] ?? PLAN_LIMITS.free;
}

/** Days a network's logs (connections, events) are kept: its plan's, or the operator's for premium. */
export function logRetentionDays(plan: string, settings: Partial<Settings> = {}): number {
  if (plan === 'premium' && settings.premiumLogRetentionDays) return settings.premiumLogRetentionDays;
  return limitsOf(plan).logRetentionDays;
}
