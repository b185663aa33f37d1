// zod's wording for the refusals a schema does not word itself, in the service's voice: "Required." rather than
// "Invalid input: expected array, received undefined". Set once, for every schema of the process (configuration,
// forms, the JSON API); a message a schema gives itself always wins over these.
import { z } from 'zod';

/** What a value of each of zod's expected types is called in a message. */
const KIND: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  date: 'a date',
};

z.config({
  customError: (issue) => {
    if (issue.code !== 'invalid_type') return undefined; // zod's own wording for the rest
    if (issue.input === undefined) return 'Required.';
    const kind = KIND[issue.expected];
    return kind ? `Must be ${kind}.` : undefined;
  },
});
