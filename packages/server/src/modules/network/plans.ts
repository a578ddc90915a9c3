/** What each plan allows. The API surface is the same on every plan; only limits differ. */
import type { Plan } from '@warren/contract';

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
