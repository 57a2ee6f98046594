#!/usr/bin/env node
'use strict';
// npm run bench:driver
//
// The user-visible gain of bson-rs inside the MongoDB driver and Mongoose.
// A small in-process OP_MSG responder (a net server on 127.0.0.1) answers
// hello, find/getMore with pre-encoded reply bytes, and insert with ok, so
// the client side (driver + Mongoose + BSON codec) dominates the time.
// Each round runs every case with and without bson-rs installed into the
// driver (order alternating), after warm-up rounds; the table shows medians.
//
// Two stacks, each in a fresh process, in one table: mongoose 9 + mongodb 7
// (bson 7) and mongoose 8 + mongodb 6 (bson 6.10; the devDependency mongoose8).
// mongodb 6 sizes every document of insertMany with calculateObjectSize, so
// that call gets a row of its own.
//
// Options (environment): BENCH_DOCS (10000), BENCH_ROUNDS (10), BENCH_WARMUP (2),
// BENCH_STACK (mongoose | mongoose8: run that stack only, in this process),
// BENCH_CASES (a regular expression: only the cases whose names match, e.g. 'find' for a profile),
// BENCH_MODES (js | rs: run only that codec, for a profile of it alone; the other column is NaN).
// Run with --expose-gc (as the npm script does) to collect garbage before each timed run.
const net = require('node:net');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');

const DOCS = Number(process.env.BENCH_DOCS || 10000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 10);
const WARMUP = Number(process.env.BENCH_WARMUP || 2);

const STACKS = ['mongoose', 'mongoose8'];
if (process.env.BENCH_STACK === undefined) {
  // The parent: each stack in its own process, then one table.
  const rows = [];
  for (const stack of STACKS) {
    const child = spawnSync(process.execPath, [...process.execArgv, __filename], {
      env: { ...process.env, BENCH_STACK: stack, BENCH_JSON: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8'
    });
    if (child.status !== 0) process.exit(child.status || 1);
    rows.push(JSON.parse(child.stdout));
  }
  printTable(rows);
  return;
}
const MONGOOSE = process.env.BENCH_STACK;
const { Mongoose } = require(MONGOOSE);
const mongodb = require(require.resolve('mongodb', { paths: [path.dirname(require.resolve(MONGOOSE))] }));
const driver = require('../lib/driver');
const workload = require('../test/e2e/workload');
const { median } = require('./stats');

const FIRST_BATCH = 101; // a real server's default first batch

// The responder encodes and decodes with js-bson functions taken before anything is installed.
const driverBson = driver.driverBson(mongodb);
if (driver.isInstalled(mongodb)) throw new Error('bench/driver: bson-rs is already installed');
const js = { serialize: driverBson.serialize, deserialize: driverBson.deserialize };

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

function storedPosts(count) {
  const { ObjectId, Binary } = driverBson;
  return workload.posts(count, 40, driverBson).map((p) => ({
    ...p,
    _id: new ObjectId(p._id),
    author: new ObjectId(p.author),
    related: p.related.map((r) => new ObjectId(r)),
    blob: new Binary(p.blob, 0),
    comments: p.comments.map((c) => ({ ...c, _id: new ObjectId(c._id) })),
    __v: 0
  }));
}

/** The in-process server: replies to hello/find/getMore/insert/anything else. */
function startResponder(docs) {
  const ns = 'bench.posts';
  const helloBody = () =>
    js.serialize({
      helloOk: true,
      isWritablePrimary: true,
      ismaster: true,
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48000000,
      maxWriteBatchSize: 100000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId: 1,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      ok: 1
    });
  const findBody = js.serialize({
    cursor: { firstBatch: docs.slice(0, FIRST_BATCH), id: driverBson.Long.fromNumber(docs.length > FIRST_BATCH ? 1 : 0), ns },
    ok: 1
  });
  const getMoreBody = js.serialize({ cursor: { nextBatch: docs.slice(FIRST_BATCH), id: driverBson.Long.fromNumber(0), ns }, ok: 1 });
  const emptyGetMore = js.serialize({ cursor: { nextBatch: [], id: driverBson.Long.fromNumber(0), ns }, ok: 1 });
  const okBody = js.serialize({ ok: 1 });
  let requestId = 1;

  function sendMsg(socket, responseTo, body) {
    const header = Buffer.alloc(21);
    header.writeInt32LE(21 + body.length, 0);
    header.writeInt32LE(requestId++, 4);
    header.writeInt32LE(responseTo, 8);
    header.writeInt32LE(OP_MSG, 12);
    header.writeUInt32LE(0, 16);
    header[20] = 0;
    socket.cork();
    socket.write(header);
    socket.write(body);
    socket.uncork();
  }

  function sendReply(socket, responseTo, body) {
    const header = Buffer.alloc(36);
    header.writeInt32LE(36 + body.length, 0);
    header.writeInt32LE(requestId++, 4);
    header.writeInt32LE(responseTo, 8);
    header.writeInt32LE(OP_REPLY, 12);
    header.writeInt32LE(0, 16); // responseFlags
    header.writeBigInt64LE(0n, 20); // cursorID
    header.writeInt32LE(0, 28); // startingFrom
    header.writeInt32LE(1, 32); // numberReturned
    socket.write(Buffer.concat([header, body]));
  }

  function handleMsg(socket, msg) {
    const requestID = msg.readInt32LE(4);
    const opCode = msg.readInt32LE(12);
    if (opCode === OP_QUERY) {
      sendReply(socket, requestID, helloBody());
      return;
    }
    if (opCode !== OP_MSG) throw new Error(`bench responder: unexpected opCode ${opCode}`);
    const flags = msg.readUInt32LE(16);
    const end = flags & 1 ? msg.length - 4 : msg.length;
    let pos = 20;
    let body = null;
    let sequenceDocs = 0;
    while (pos < end) {
      const kind = msg[pos++];
      const size = msg.readInt32LE(pos);
      if (kind === 0) {
        // Decode only the command name and the few fields needed.
        body = js.deserialize(msg.subarray(pos, pos + size), { promoteLongs: false, fieldsAsRaw: { documents: true, filter: true } });
      } else {
        // document sequence: count documents without decoding them
        let p = pos + 4;
        while (msg[p] !== 0) p++;
        p++;
        while (p < pos + size) {
          p += msg.readInt32LE(p);
          sequenceDocs++;
        }
      }
      pos += size;
    }
    const command = Object.keys(body)[0];
    if (flags & 2) return; // moreToCome: no reply
    switch (command) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return sendMsg(socket, requestID, helloBody());
      case 'find':
        return sendMsg(socket, requestID, findBody);
      case 'getMore':
        return sendMsg(socket, requestID, Number(body.getMore) === 1 ? getMoreBody : emptyGetMore);
      case 'insert': {
        const n = sequenceDocs + (Array.isArray(body.documents) ? body.documents.length : 0);
        return sendMsg(socket, requestID, js.serialize({ n, ok: 1 }));
      }
      default:
        return sendMsg(socket, requestID, okBody);
    }
  }

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    let pending = [];
    let pendingLength = 0;
    let need = 0; // the length of the message being received, once its first 4 bytes are in
    socket.on('data', (chunk) => {
      pending.push(chunk);
      pendingLength += chunk.length;
      // (a message is joined once it is whole: joining the chunks at each one
      // was quadratic, ~30 ms of each 10,000-document insertMany, in both modes)
      if (need === 0 && pendingLength >= 4) need = (pending[0].length >= 4 ? pending[0] : Buffer.concat(pending)).readInt32LE(0);
      if (pendingLength < need) return;
      need = 0;
      let buf = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingLength);
      let offset = 0;
      while (buf.length - offset >= 4) {
        const len = buf.readInt32LE(offset);
        if (buf.length - offset < len) break;
        handleMsg(socket, buf.subarray(offset, offset + len));
        offset += len;
      }
      buf = buf.subarray(offset);
      pending = buf.length ? [buf] : [];
      pendingLength = buf.length;
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port }));
  });
}


async function main() {
  const docs = storedPosts(DOCS);
  const { server, port } = await startResponder(docs);
  const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;

  const client = new mongodb.MongoClient(uri, { maxPoolSize: 1, monitorCommands: false });
  await client.connect();
  const collection = client.db('bench').collection('posts');

  const mongoose = new Mongoose();
  const conn = await mongoose.createConnection(uri, { dbName: 'bench', autoIndex: false, autoCreate: false, maxPoolSize: 1 }).asPromise();
  const { Post } = workload.defineModels(mongoose, conn);

  const insertDocs = storedPosts(DOCS);
  // Mongoose casts and validates every document (~0.7 ms each): a fifth of the documents keeps the run short.
  const MONGOOSE_INSERTS = Math.max(1, Math.round(DOCS / 5));
  const mongooseInput = workload.posts(MONGOOSE_INSERTS, 40, driverBson);

  const cases = [
    {
      name: 'driver find().toArray()',
      run: async () => {
        const r = await collection.find({}).toArray();
        if (r.length !== DOCS) throw new Error(`got ${r.length}`);
      }
    },
    {
      name: 'mongoose find().lean()',
      run: async () => {
        const r = await Post.find().lean();
        if (r.length !== DOCS) throw new Error(`got ${r.length}`);
      }
    },
    {
      name: 'mongoose find() hydrated',
      run: async () => {
        const r = await Post.find();
        if (r.length !== DOCS) throw new Error(`got ${r.length}`);
      }
    },
    {
      name: 'driver insertMany()',
      run: async () => {
        const r = await collection.insertMany(insertDocs);
        if (r.insertedCount !== DOCS) throw new Error(`inserted ${r.insertedCount}`);
      }
    },
    {
      name: 'bson calculateObjectSize() each',
      run: async () => {
        // what mongodb 6's insertMany does per document (mongodb 7 hardly calls it)
        let total = 0;
        for (const d of insertDocs) total += driverBson.calculateObjectSize(d);
        if (!(total > DOCS)) throw new Error(`sized ${total}`);
      }
    },
    {
      name: `mongoose insertMany() ${MONGOOSE_INSERTS}`,
      run: async () => {
        const r = await Post.insertMany(mongooseInput);
        if (r.length !== MONGOOSE_INSERTS) throw new Error(`inserted ${r.length}`);
      }
    }
  ];

  if (process.env.BENCH_CASES) {
    const only = new RegExp(process.env.BENCH_CASES);
    cases.splice(0, cases.length, ...cases.filter((c) => only.test(c.name)));
  }
  const times = new Map(cases.map((c) => [c.name, { js: [], rs: [] }]));
  const setMode = (mode) => {
    if (mode === 'rs') driver.install(mongodb);
    else driver.uninstall(mongodb);
  };
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const c of cases) {
      let order = (round + cases.indexOf(c)) % 2 === 0 ? ['js', 'rs'] : ['rs', 'js'];
      if (process.env.BENCH_MODES) order = order.filter((mode) => process.env.BENCH_MODES.includes(mode));
      for (const mode of order) {
        setMode(mode);
        if (typeof globalThis.gc === 'function') globalThis.gc();
        const t0 = performance.now();
        await c.run();
        const dt = performance.now() - t0;
        if (round >= WARMUP) times.get(c.name)[mode].push(dt);
      }
    }
    process.stderr.write(`round ${round + 1}/${WARMUP + ROUNDS}${round < WARMUP ? ' (warm-up)' : ''}\r`);
  }
  process.stderr.write('\n');
  driver.uninstall(mongodb);
  await conn.close();
  await client.close();
  server.close();

  const info = driver.install(mongodb);
  driver.uninstall(mongodb);
  const rows = cases.map((c) => {
    const t = times.get(c.name);
    const js = median(t.js);
    const rs = median(t.rs);
    return { case: c.name, js, rs, ratio: js / rs };
  });
  const result = { mongoose: require(`${MONGOOSE}/package.json`).version, mongodb: info.mongodbVersion, bson: info.bsonVersion, rows };
  if (process.env.BENCH_JSON) process.stdout.write(JSON.stringify(result));
  else printTable([result]);
}

function printTable(results) {
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  console.log(`bench:driver  ${DOCS} documents, median of ${ROUNDS} interleaved rounds (+${WARMUP} warm-up), node ${process.version}`);
  console.log(`${pad('stack', 34)} ${pad('case', 32)} ${lpad('js-bson ms', 11)} ${lpad('bson-rs ms', 11)} ${lpad('speed-up', 9)}`);
  for (const { mongoose, mongodb, bson, rows } of results) {
    const stack = `mongoose ${mongoose}, mongodb ${mongodb}, bson ${bson}`;
    for (const r of rows) {
      console.log(`${pad(stack, 34)} ${pad(r.case, 32)} ${lpad(r.js.toFixed(1), 11)} ${lpad(r.rs.toFixed(1), 11)} ${lpad(r.ratio.toFixed(2) + 'x', 9)}`);
    }
  }
  console.log('speed-up = js-bson median / bson-rs median (> 1: bson-rs is faster)');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
