/**
 * The InstallPlan statuses this controller wrote that its cache may not show yet. A plan's next
 * reconcile often comes before the watch brings back the status just written (a CRD's Established
 * event, say), and read from the cache alone the plan looked unstarted: its checks ran a second
 * time (each a round of SubjectAccessReviews, and a CRD safety check against the CRD the first
 * pass had just created). One per controller instance (keyed by its context), as the Subscription
 * controller keeps its own (src/kube/recent-writes.ts).
 */
import { RecentWrites } from '../kube/recent-writes.js';

const byController = new WeakMap<object, RecentWrites>();

export function recentPlanWrites(ctx: object): RecentWrites {
  let recent = byController.get(ctx);
  if (!recent) {
    recent = new RecentWrites();
    byController.set(ctx, recent);
  }
  return recent;
}
