// The baseline server of the footprint bench: a bare node:http hello world on PORT (plain JavaScript, no loader).
import http from 'node:http';

http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('hello');
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
