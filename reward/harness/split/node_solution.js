
// judgebox split harness, Node.js and TypeScript: the solution's program serves calls of its function.
// A request on descriptor 3 is a frame (a 4-byte big-endian length, then v8's serialization of the
// arguments); the answer on descriptor 4 is a frame of {value}, {error} (an Error's class name, name,
// message and own properties) or {thrown} (another value thrown), with args: the arguments as the call
// left them. The end of the requests ends the program.
;(function judgeboxServe(judgeboxEntry) {
  const fs = require('fs');
  const v8 = require('v8');
  const read = (n) => {
    const buf = Buffer.alloc(n);
    for (let got = 0; got < n;) {
      const k = fs.readSync(3, buf, got, n - got, null);
      if (k === 0) process.exit(0);
      got += k;
    }
    return buf;
  };
  for (;;) {
    const args = v8.deserialize(read(read(4).readUInt32BE(0)));
    let answer;
    try {
      answer = { value: judgeboxEntry(...args), args };
    } catch (e) {
      const props = {};
      for (const k of e instanceof Error ? Object.keys(e) : []) {
        try { v8.serialize(e[k]); props[k] = e[k]; } catch (_) { /* a property that cannot cross */ }
      }
      answer = e instanceof Error
        ? { error: { kind: e.constructor && e.constructor.name, name: e.name, message: e.message, props }, args }
        : { thrown: e, args };
    }
    let out;
    try {
      out = v8.serialize(answer);
    } catch (e) {
      out = v8.serialize({ thrown: new TypeError("the solution's value cannot cross to the tests: " + e.message), args: [] });
    }
    const head = Buffer.alloc(4);
    head.writeUInt32BE(out.length);
    const frame = Buffer.concat([head, out]);
    for (let sent = 0; sent < frame.length;) sent += fs.writeSync(4, frame, sent, frame.length - sent);
  }
})(JUDGEBOX_ENTRY);
