// A bench webhook receiver child: answers 200 at once. For paths starting /lat it records when each message's body
// first arrived (epoch ms, sub-millisecond), which the parent collects over IPC with { cmd: 'arrivals' }.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let arrivals = new Map<string, number>();

const server = http.createServer((req, res) => {
  const at = performance.timeOrigin + performance.now();
  const latency = req.url?.startsWith('/lat') ?? false;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => {
    if (latency) chunks.push(c);
  });
  req.on('end', () => {
    if (latency) {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message: string }).message;
      if (!arrivals.has(id)) arrivals.set(id, at);
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.on('message', (m: { cmd: string }) => {
  if (m.cmd !== 'arrivals') return;
  process.send!({ arrivals: [...arrivals] });
  arrivals = new Map();
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
