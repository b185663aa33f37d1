// The words the inbox and message pages use for the message vocabulary (messages/classes.ts): what each class and
// cause means to a reader.
import type { Cause, MessageClass } from '../messages/classes.ts';

/** A routing class as a reader names it. */
export const CLASS_LABEL: Record<MessageClass, string> = {
  drift: 'Drift',
  coverage: 'Coverage',
  clock: 'Clock',
};

/** Why a message fired, in plain words (the meaning of each cause). */
export const CAUSE_LABEL: Record<Cause, string> = {
  drift: 'One of your own objects moved',
  aperture: "The service's coverage widened",
  'declared-input': 'An input you declared moved',
  threshold: 'A clock or threshold was crossed',
};
