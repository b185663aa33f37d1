// The flood of the flood bench, in its own process: CONNECTIONS parallel clients POST wrong passwords to /login, each
// request for a fresh username. Mode `one-address`: all from this machine's address, as one attacker. Mode
// `many-addresses`: each from a fresh client address too (X-Forwarded-For, believed because the server trusts the
// loopback proxy), as a botnet, so no lock ever spares a password check. Runs until SIGTERM, then reports over IPC.
import crypto from 'node:crypto';
import autocannon from 'autocannon';

const [url, mode] = [process.argv[2]!, process.argv[3]];
const CONNECTIONS = 50;

let n = 0;
const request: autocannon.Request = {
  method: 'POST',
  path: '/login',
  setupRequest: (req) => {
    n++;
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
    };
    if (mode === 'many-addresses') headers['x-forwarded-for'] = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    return {
      ...req,
      headers,
      body: `username=user-${crypto.randomBytes(6).toString('hex')}&password=wrong-password-${n}`,
    };
  },
};
const instance = autocannon({ url, connections: CONNECTIONS, duration: 3600, requests: [request] }, (err, result) => {
  if (err) throw err;
  const statuses = { '4xx': result['4xx'], '2xx': result['2xx'], '5xx': result['5xx'] };
  process.send!({ requests: result.requests.total, seconds: result.duration, statuses, errors: result.errors });
  setTimeout(() => process.exit(0), 100);
});
process.send!({ started: true });
process.once('SIGTERM', () => instance.stop());
