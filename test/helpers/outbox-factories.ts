// Kept only for importers not yet switched to ./outbox.ts (the one home of the outbox factories); delete once none is left.
export { buildChannel, buildMessageWithDeliveries } from './outbox.ts';
