// Real-time delivery: whoever makes deliveries due wakes the workers at once instead of leaving them to the idle poll.
// In this process through a DeliveryWakeup; across processes on PostgreSQL through NOTIFY (notifyDeliveriesDue in
// messages/deliveries-due.ts, which emit() calls too; heard by wakeup.listener.ts).

/** This process's wake-up line: emit() and re-send pull it, the workers of this process subscribe to it. */
export interface DeliveryWakeup {
  /** Calls every subscriber now; never throws into the caller. */
  wake(): void;
  /** Adds a subscriber; returns the function that removes it again. */
  subscribe(listener: () => void): () => void;
}

/** A new wake-up line; a subscriber that throws is reported to `onError` (a bug) and does not stop the others. */
export function createDeliveryWakeup(onError: (err: unknown) => void = () => {}): DeliveryWakeup {
  const listeners = new Set<() => void>();
  return {
    wake() {
      for (const listener of [...listeners]) {
        try {
          listener();
        } catch (err) {
          onError(err);
        }
      }
    },
    subscribe(listener) {
      // A wrapper per subscription, so subscribing one function twice needs two unsubscribes.
      const entry = () => listener();
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
  };
}
