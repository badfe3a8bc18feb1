'use strict';
// Unit tests of the kit against a scripted in-process Referee server.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const grpc = require('@grpc/grpc-js');
const protobuf = require('protobufjs');
const {
  BotClient,
  BotRefused,
  FrameError,
  FrameReader,
  PROTOCOL_VERSION,
  loadProtocol,
  parseArgs,
  parseFd,
  channelCredentials,
  encodeFrame,
  goodbyeLine,
  lostLine,
  protoFiles,
} = require('../lib');

const protocol = loadProtocol();

/** Start a Referee server whose Play handler is play(call, streamNumber); resolves its address. */
async function fakeServer(play) {
  const server = new grpc.Server();
  let streams = 0;
  server.addService(protocol.Referee.service, { Play: (call) => play(call, ++streams) });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { server, address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/** The next message the server receives on call. */
function nextMessage(call) {
  return new Promise((resolve, reject) => {
    call.once('data', resolve);
    call.once('error', reject);
  });
}

function request(id, actions) {
  return {
    request: {
      request_id: id,
      match_id: 'm1',
      seat: 1,
      game: 'knaves',
      legal_actions: actions.map((a) => ({ id: a, kind: a.split(':')[0] })),
      clock: { move_ms: 1000, bank_ms: 0 },
    },
  };
}

const WELCOME = { welcome: { bot_name: 'b', protocol_version: 1, server_version: 'test' } };

test('loads every .proto file of the protocol', () => {
  const files = protoFiles();
  assert.ok(files.includes('cardshark/v1/referee.proto'));
  assert.ok(files.includes('cardshark/v1/knaves.proto'));
  assert.equal(typeof protocol.Referee, 'function');
});

test('reads the server and token from the environment, flags first', () => {
  const env = { CARDSHARK_SERVER: 'h:1', CARDSHARK_TOKEN: 't' };
  assert.deepEqual(parseArgs([], env), { server: 'h:1', token: 't' });
  assert.deepEqual(parseArgs(['--server', 'x:2', '--token=u'], env), { server: 'x:2', token: 'u' });
  assert.deepEqual(parseArgs([], {}), { server: '127.0.0.1:50051', token: '' });
  assert.throws(() => parseArgs(['--bogus'], {}), /unknown argument/);
});

test('reads the TLS files from the environment, flags first; a lone cert is refused', () => {
  const env = { CARDSHARK_TLS_CA: 'ca.pem', CARDSHARK_TLS_CERT: 'c.pem', CARDSHARK_TLS_KEY: 'k' };
  assert.deepEqual(parseArgs(['--tls-ca=mine.pem'], env), {
    server: '127.0.0.1:50051',
    token: '',
    tlsCa: 'mine.pem',
    tlsCert: 'c.pem',
    tlsKey: 'k',
  });
  const pem = Buffer.from('not read: createSsl only keeps it');
  assert.throws(() => channelCredentials({ tlsCert: pem, tlsKey: pem }), /needs a CA/);
  assert.throws(() => channelCredentials({ tlsCa: '/nonexistent/ca.pem' }), /ENOENT/);
});

test('sends a correct Hello first and answers with the request id', async () => {
  let hello;
  const answers = [];
  const fake = await fakeServer(async (call) => {
    hello = await nextMessage(call);
    call.write(WELCOME);
    call.write(request(7, ['play:QH', 'play:2C']));
    call.write(request(8, ['bid:3']));
    for (let i = 0; i < 2; i++) answers.push(await nextMessage(call));
    call.end();
  });
  const events = [];
  const client = new BotClient((r) => r.legal_actions[0].id, {
    server: fake.address,
    token: 'secret',
    name: 'tester',
    games: ['knaves'],
    onEvent: (m) => events.push(m.kind),
  });
  const done = client.run();
  while (answers.length < 2) await new Promise((r) => setTimeout(r, 10));
  client.stop();
  await done;
  fake.stop();
  assert.equal(hello.kind, 'hello');
  assert.equal(hello.hello.token, 'secret');
  assert.equal(hello.hello.bot_name, 'tester');
  assert.equal(hello.hello.protocol_version, PROTOCOL_VERSION);
  assert.deepEqual(hello.hello.games, ['knaves']);
  assert.deepEqual(events, ['welcome']);
  assert.equal(client.welcome.server_version, 'test');
  const got = answers.map((a) => [a.kind, a.decision.request_id, a.decision.action_id]);
  assert.deepEqual(got, [
    ['decision', 7, 'play:QH'],
    ['decision', 8, 'bid:3'],
  ]);
});

test('an async decide may answer out of order, each with its own request id', async () => {
  const answers = [];
  const fake = await fakeServer(async (call) => {
    await nextMessage(call);
    call.write(request(1, ['slow']));
    call.write(request(2, ['fast']));
    for (let i = 0; i < 2; i++) answers.push(await nextMessage(call));
  });
  const client = new BotClient(
    async (r) => {
      await new Promise((res) => setTimeout(res, r.request_id === 1 ? 200 : 0));
      return r.legal_actions[0].id;
    },
    { server: fake.address, token: 't' },
  );
  const done = client.run();
  while (answers.length < 2) await new Promise((r) => setTimeout(r, 10));
  client.stop();
  await done;
  fake.stop();
  assert.deepEqual(
    answers.map((a) => [a.decision.request_id, a.decision.action_id]),
    [
      [2, 'fast'],
      [1, 'slow'],
    ],
  );
});

test('reconnects with a new Hello after the server drops the stream', async () => {
  const hellos = [];
  let answer;
  const fake = await fakeServer(async (call, n) => {
    hellos.push((await nextMessage(call)).hello.token);
    if (n === 1) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' });
      return;
    }
    call.write(WELCOME);
    call.write(request(5, ['pass:spades']));
    answer = await nextMessage(call);
  });
  const client = new BotClient((r) => r.legal_actions[0].id, { server: fake.address, token: 'tok' });
  const done = client.run();
  while (!answer) await new Promise((r) => setTimeout(r, 10));
  client.stop();
  await done;
  fake.stop();
  assert.deepEqual(hellos, ['tok', 'tok']);
  assert.equal(answer.decision.request_id, 5);
  assert.equal(answer.decision.action_id, 'pass:spades');
});

test('reconnects after the server process goes away and comes back', async () => {
  let first = await fakeServer(async (call) => {
    await nextMessage(call);
    call.write(WELCOME);
  });
  const address = first.address;
  let answer;
  const client = new BotClient((r) => r.legal_actions[0].id, { server: address, token: 'tok' });
  const done = client.run();
  while (!client.welcome) await new Promise((r) => setTimeout(r, 10));
  first.stop();
  await new Promise((r) => setTimeout(r, 200));
  const second = new grpc.Server();
  second.addService(protocol.Referee.service, {
    Play: async (call) => {
      await nextMessage(call);
      call.write(request(9, ['play:AS']));
      answer = await nextMessage(call);
    },
  });
  await new Promise((resolve, reject) =>
    second.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  const deadline = Date.now() + 8000;
  while (!answer && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  client.stop();
  await done;
  second.forceShutdown();
  assert.ok(answer, 'no answer after the server came back');
  assert.equal(answer.decision.request_id, 9);
});

test('a refused token rejects with BotRefused and the server message', async () => {
  const fake = await fakeServer(async (call) => {
    await nextMessage(call);
    call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'unknown bot token' });
  });
  const client = new BotClient(() => '', { server: fake.address, token: 'wrong' });
  await assert.rejects(client.run(), (err) => err instanceof BotRefused && /unknown bot token/.test(err.message));
  fake.stop();
});

test('gives up when the server is gone longer than reconnectMs', async () => {
  const fake = await fakeServer(() => {});
  const address = fake.address;
  fake.stop();
  const client = new BotClient(() => '', { server: address, token: 't', reconnectMs: 300 });
  const started = Date.now();
  await client.run();
  const took = Date.now() - started;
  assert.ok(took >= 300 && took < 5000, `took ${took} ms`);
});

test('a Goodbye ends run() at once: no reconnect, the reason kept', async () => {
  let streams = 0;
  const fake = await fakeServer(async (call, n) => {
    streams = n;
    await nextMessage(call);
    call.write(WELCOME);
    call.write({ goodbye: { reason: 'tournament finished' } });
    // the stream is left open: the kit must not wait for the server to end it
  });
  const events = [];
  const client = new BotClient(() => '', {
    server: fake.address,
    token: 't',
    onEvent: (m) => events.push(m.kind),
  });
  const started = Date.now();
  await client.run();
  const took = Date.now() - started;
  fake.stop();
  assert.deepEqual(events, ['welcome', 'goodbye']);
  assert.equal(client.goodbye.reason, 'tournament finished');
  assert.equal(streams, 1);
  assert.ok(took < 5000, `took ${took} ms`);
  assert.equal(goodbyeLine('tournament finished'), 'cardshark: tournament finished; nothing more to play');
  assert.equal(goodbyeLine(''), 'cardshark: the server said goodbye; nothing more to play');
});

test('frames: a varint length, then the message as gRPC serializes it; split anywhere', () => {
  const play = protocol.Referee.service.Play;
  const decision = { decision: { request_id: 7, action_id: 'play:QH' } };
  const small = play.requestSerialize(decision);
  const frame = encodeFrame(small);
  assert.equal(frame[0], small.length);
  assert.deepEqual(frame.subarray(1), small);
  const big = play.requestSerialize({ hello: { token: 'x'.repeat(292), protocol_version: 1 } });
  assert.equal(big.length, 300);
  assert.deepEqual([...encodeFrame(big).subarray(0, 2)], [0xac, 0x02]); // 300 as a varint

  const wire = Buffer.concat([encodeFrame(small), encodeFrame(big), encodeFrame(small)]);
  const frames = new FrameReader();
  const got = [];
  for (const byte of wire) got.push(...frames.push(Buffer.from([byte])));
  assert.equal(got.length, 3);
  const back = play.requestDeserialize(got[0]).decision;
  assert.deepEqual([back.request_id, back.action_id], [7, 'play:QH']);
  assert.equal(play.requestDeserialize(got[1]).hello.token, 'x'.repeat(292));
  assert.deepEqual(new FrameReader().push(wire).map((p) => p.length), [small.length, 300, small.length]);

  const goodbye = play.responseSerialize({ goodbye: { reason: 'tournament finished' } });
  const [payload] = new FrameReader().push(encodeFrame(goodbye));
  const msg = play.responseDeserialize(payload);
  assert.equal(msg.kind, 'goodbye');
  assert.equal(msg.goodbye.reason, 'tournament finished');
});

test('a frame length over the cap is refused as soon as its varint is in', () => {
  const huge = Buffer.from(protobuf.Writer.create().uint32(100 * 1024 * 1024).finish());
  const frames = new FrameReader();
  assert.deepEqual(frames.push(huge.subarray(0, 2)), []); // not all of the length yet
  assert.throws(() => frames.push(huge.subarray(2)), FrameError);
  assert.throws(() => new FrameReader().push(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])), FrameError);
  assert.deepEqual(new FrameReader(10).push(encodeFrame(Buffer.alloc(10))).length, 1);
  assert.throws(() => new FrameReader(10).push(encodeFrame(Buffer.alloc(11))), /10-byte cap/);
});

test('fd:N names the local transport; other addresses are gRPC', () => {
  assert.equal(parseFd('fd:3'), 3);
  assert.equal(parseFd('127.0.0.1:50051'), null);
  assert.equal(parseFd('unix:/tmp/s'), null);
  assert.throws(() => parseFd('fd:x'), /descriptor number/);
  assert.equal(new BotClient(() => '', { server: 'fd:7', token: 't' }).localFd, 7);
  assert.equal(lostLine('the server closed fd:3'), 'cardshark: the server closed fd:3 without a Goodbye; stopping');
});

test('a descriptor that is not there is a refusal, not a crash', async () => {
  const client = new BotClient(() => '', { server: 'fd:987', token: 't' });
  await assert.rejects(client.run(), (err) => err instanceof BotRefused && /descriptor 987/.test(err.message));
});
