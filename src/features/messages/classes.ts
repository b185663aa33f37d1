// The message vocabulary: four causes, three routing classes, and the fixed map between them.

/** The routing classes, the only axis channels subscribe on. */
export const CLASSES = ['drift', 'coverage', 'clock'] as const;
export type MessageClass = (typeof CLASSES)[number];

/** The causes a message can name (informational to receivers; never routed on). */
export const CAUSES = ['drift', 'aperture', 'declared-input', 'threshold'] as const;
export type Cause = (typeof CAUSES)[number];

/** Each cause maps to exactly one class. */
export const CLASS_OF_CAUSE: Record<Cause, MessageClass> = {
  drift: 'drift',
  aperture: 'coverage',
  'declared-input': 'coverage',
  threshold: 'clock',
};

/** True when the value is one of the four causes. */
export function isCause(value: string): value is Cause {
  return (CAUSES as readonly string[]).includes(value);
}

/** True when the value is one of the three classes. */
export function isMessageClass(value: string): value is MessageClass {
  return (CLASSES as readonly string[]).includes(value);
}
