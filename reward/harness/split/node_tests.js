// judgebox split harness, Node.js and TypeScript: the tests' program. It holds no code of the solution
// and no tests either: its stdin brings the nonce (the first line) and then the tests as JSON
// ({"source": the prompt's code before the entry function, a proxy of it and the tests; "typescript":
// whether the source is TypeScript}), read whole before the solution's program starts; its process is
// non-dumpable (the sandbox starts it so), so the solution's can read neither. The solution's program
// (the command after "--", started in the working folder) serves calls on descriptors 3 and 4, its stdin
// and stdout /dev/null. A call of the proxy is synchronous: this thread posts the arguments (v8's
// serialization, the structured clone format) to a worker thread that talks to the solution's process
// and waits on shared memory (Atomics.wait) for the answer.
'use strict';
// a listener keeps SIGUSR1 from opening Node's inspector on 127.0.0.1:9229, from which the solution's
// process (same uid, allowed to signal this one) could run code here (red team, issue 38)
process.on('SIGUSR1', () => {});
const judgeboxFs = require('fs');
const judgeboxPath = require('path');
const judgeboxModule = require('module');
const judgeboxV8 = require('v8');
const judgeboxThreads = require('worker_threads');

const judgeboxMarker = (status) => judgeboxFs.writeSync(1, '\n' + judgeboxNonce + ' ' + status + '\n');

// no marker: the run is a runtime error
function judgeboxLost(why) {
  judgeboxFs.writeSync(2, 'judgebox: ' + why + '\n');
  process.exit(3);
}

const judgeboxInput = judgeboxFs.readFileSync(0, 'utf8');
const judgeboxCut = judgeboxInput.indexOf('\n');
const judgeboxNonce = judgeboxInput.slice(0, judgeboxCut).trim();
const judgeboxTask = JSON.parse(judgeboxInput.slice(judgeboxCut + 1));
const judgeboxCommand = process.argv.slice(process.argv.indexOf('--') + 1);
if (process.argv.indexOf('--') < 0 || judgeboxCommand.length === 0) {
  judgeboxLost("no command of the solution's program after --");
}

let judgeboxSource = judgeboxTask.source;
if (judgeboxTask.typescript) {
  // esbuild strips the types (as tsx does for the solution), as a process that ends before this
  // returns: no esbuild service outlives the transform, into the solution's run
  process.env.ESBUILD_WORKER_THREADS = '0';
  let esbuild;
  try {
    esbuild = require('esbuild');
  } catch (e) {
    esbuild = judgeboxModule.createRequire(require.resolve('tsx/cjs'))('esbuild');
  }
  judgeboxSource = esbuild.transformSync(judgeboxSource, { loader: 'ts', format: 'cjs' }).code;
}

// the worker thread: starts the solution's program and carries frames (a 4-byte big-endian length, then
// the bytes) between it and this thread; the solution's end is reported as lost
const judgeboxWorker = `
const { workerData } = require('worker_threads');
const { spawn } = require('child_process');
const { shared, port, command } = workerData;
const solution = spawn(command[0], command.slice(1), { cwd: '..', stdio: ['ignore', 'ignore', 'inherit', 'pipe', 'pipe'] });
const post = (message) => { port.postMessage(message); Atomics.store(shared, 0, 1); Atomics.notify(shared, 0); };
let pending = Buffer.alloc(0);
solution.on('error', (e) => post({ lost: "cannot start the solution's program: " + e.message }));
solution.on('close', (code, signal) => post({ lost: "the solution's program ended (" + (signal || 'exit status ' + code) + ')' }));
solution.stdio[4].on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
    const n = pending.readUInt32BE(0);
    post({ frame: pending.subarray(4, 4 + n) });
    pending = pending.subarray(4 + n);
  }
});
solution.stdio[3].on('error', () => {});
port.on('message', (frame) => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(frame.length);
  solution.stdio[3].write(Buffer.concat([head, Buffer.from(frame)]));
});
`;
const judgeboxShared = new Int32Array(new SharedArrayBuffer(4));
const judgeboxChannel = new judgeboxThreads.MessageChannel();
new judgeboxThreads.Worker(judgeboxWorker, {
  eval: true, workerData: { shared: judgeboxShared, port: judgeboxChannel.port2, command: judgeboxCommand },
  transferList: [judgeboxChannel.port2],
});

// each object argument takes the contents the solution's function left in its copy (an array sorted in
// place, a map filled), as one shared object would; keys are defined, never assigned (a "__proto__" key
// of the answer stays a key)
function judgeboxWriteBack(mine, theirs) {
  for (let i = 0; i < mine.length && i < theirs.length; i++) {
    const a = mine[i], b = theirs[i];
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Object.isFrozen(a)) continue;
    if (Array.isArray(a) && Array.isArray(b)) {
      a.length = 0;
      for (let k = 0; k < b.length; k++) if (k in b) a[k] = b[k];
      a.length = b.length;
    } else if (a instanceof Map && b instanceof Map) {
      a.clear();
      for (const [k, v] of b) a.set(k, v);
    } else if (a instanceof Set && b instanceof Set) {
      a.clear();
      for (const v of b) a.add(v);
    } else if (Object.getPrototypeOf(a) === Object.prototype && Object.getPrototypeOf(b) === Object.prototype) {
      for (const k of Object.keys(a)) delete a[k];
      for (const k of Object.keys(b)) {
        Object.defineProperty(a, k, { value: b[k], writable: true, enumerable: true, configurable: true });
      }
    }
  }
}

// an error the solution's function threw, as the tests see it: its standard class (another class is an
// Error), its name, message and own data properties (a code: assert.throws(f, {code: ...}))
function judgeboxError(what) {
  const standard = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
  const made = new (Object.prototype.hasOwnProperty.call(standard, what.kind) ? standard[what.kind] : Error)(
    String(what.message));
  for (const k of Object.keys(what.props || {})) {
    Object.defineProperty(made, k, { value: what.props[k], writable: true, enumerable: true, configurable: true });
  }
  Object.defineProperty(made, 'name', { value: String(what.name), writable: true, enumerable: false, configurable: true });
  return made;
}

// a call of the solution's function: its value, or what it threw thrown here
function judgeboxCall(args) {
  let frame;
  try {
    frame = judgeboxV8.serialize(args);
  } catch (e) {
    judgeboxLost('an argument cannot cross to the solution: ' + e.message);
  }
  Atomics.store(judgeboxShared, 0, 0);
  judgeboxChannel.port1.postMessage(frame);
  Atomics.wait(judgeboxShared, 0, 0);
  const got = judgeboxThreads.receiveMessageOnPort(judgeboxChannel.port1);
  if (got === undefined || got.message.lost !== undefined) {
    judgeboxLost(got === undefined ? "no answer of the solution's program" : got.message.lost);
  }
  let answer;
  try {
    answer = judgeboxV8.deserialize(got.message.frame);
  } catch (e) {
    judgeboxLost("a malformed answer of the solution's program: " + e.message);
  }
  if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.args)) {
    judgeboxLost("a malformed answer of the solution's program");
  }
  judgeboxWriteBack(args, answer.args);
  if (Object.prototype.hasOwnProperty.call(answer, 'error')) throw judgeboxError(answer.error);
  if (Object.prototype.hasOwnProperty.call(answer, 'thrown')) throw answer.thrown;
  return answer.value;
}

// the tests run as a CommonJS module of this folder would (their require finds the runtime's packages);
// what they print is not the verdict's
process.stdout.write = function () { return true; };
const judgeboxAssert = require('assert');
const judgeboxFile = judgeboxPath.join(process.cwd(), 'tests.js');
const judgeboxExports = {};
try {
  new Function('require', 'module', 'exports', '__filename', '__dirname', 'judgeboxCall', judgeboxSource)(
    judgeboxModule.createRequire(judgeboxFile), { exports: judgeboxExports }, judgeboxExports, judgeboxFile,
    process.cwd(), judgeboxCall);
} catch (e) {
  // what failed, without the runner's own frames
  judgeboxFs.writeSync(2, String(e && e.stack || e).split('\n').filter((l) => !l.includes('node:internal')).join('\n') + '\n');
  if (e instanceof judgeboxAssert.AssertionError) {
    judgeboxMarker(JUDGEBOX_FAIL);
    process.exit(1);
  }
  process.exit(1);
}
judgeboxMarker(JUDGEBOX_OK);
process.exit(0);
