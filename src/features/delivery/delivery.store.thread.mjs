// The delivery store thread's entry (see delivery.store.ts): loads the TypeScript sources through tsx, as bin/svc.js does.
import { register } from 'tsx/esm/api';

register();
await import('./delivery.store.thread.ts');
