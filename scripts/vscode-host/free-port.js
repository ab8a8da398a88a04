// Prints a free TCP port on 127.0.0.1 (for a code-server run, or two runs that must share one).
const server = require('net').createServer().listen(0, '127.0.0.1', () => {
  console.log(server.address().port);
  server.close();
});
