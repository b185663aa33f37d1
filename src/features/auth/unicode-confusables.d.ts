// Types for unicode-confusables, which ships none (its package.json names a missing index.d.ts).
declare module 'unicode-confusables' {
  /** Replaces each code point found in Unicode's confusables.txt by its prototype and drops zero-width characters. */
  export function rectifyConfusion(value: string): string;
}
