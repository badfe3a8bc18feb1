'use strict';
// The cardshark bot kit for Node.js: write one function from a DecisionRequest to an action id.
//
// The protocol is loaded at run time from every .proto file in proto/cardshark/v1 (the
// repository's ../../proto, or CARDSHARK_PROTO_DIR), so a new game's view needs no rebuild.
// Messages are plain objects with the .proto field names (request_id, legal_actions, ...);
// a oneof's set member is named by a virtual field (msg.kind === 'request', request.view).
//
// The server is HOST:PORT or unix:/PATH, or fd:N for the local transport: a bot the server
// starts itself inherits one end of a socket pair as descriptor N (CARDSHARK_SERVER=fd:3) and
// speaks the same messages on it as frames, each preceded by its length as a varint (protobuf's
// "delimited" format), with no gRPC. The descriptor is the one way in: its end is the end of
// play (a line and exit status 1), never a reconnect. docs/protocol.md §1.2 is the spec.
//
// With a CA (option tlsCa, --tls-ca, CARDSHARK_TLS_CA)
// the bot speaks TLS and checks the server's certificate; tlsCert/tlsKey (--tls-cert,
// --tls-key, CARDSHARK_TLS_CERT, CARDSHARK_TLS_KEY) add a client certificate for mutual TLS.
//
// A Goodbye from the server (tournament finished, server shutting down) ends the run:
// client.run() resolves with client.goodbye set, and run() prints one line saying so to stderr,
// so the bot exits with status 0 instead of reconnecting.

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const PROTOCOL_VERSION = 1;
const DEFAULT_SERVER = '127.0.0.1:50051';
const DEFAULT_PROTO_DIR = path.resolve(__dirname, '..', '..', '..', 'proto');
const PACKAGE_DIR = path.join('cardshark', 'v1');
const LOADER_OPTIONS = {
  keepCase: true, // field names as in the .proto files: request_id, legal_actions
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true, // msg.kind names the set member of the oneof `kind`
};

// The server sends far less; a longer frame means the stream is broken. 64 MiB < 2**28, so a
// length whose varint is longer than 4 bytes is over the cap (and is never decoded wrapped).
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
const MAX_LENGTH_VARINT_BYTES = 4;

/** The one line a kit prints when the server says Goodbye. */
function goodbyeLine(reason) {
  const said = String(reason || '').trim().split(/\s+/).filter(Boolean).join(' ');
  return `cardshark: ${said || 'the server said goodbye'}; nothing more to play`;
}

/** The one line a kit prints when it cannot reach the server and starts retrying. */
function retryLine(server, why, seconds) {
  return `cardshark: cannot reach ${server} (${why}); retrying for up to ${seconds} s`;
}

/** The one line a kit prints when it stops retrying. */
function gaveUpLine(server, seconds) {
  return `cardshark: cannot reach ${server} for ${seconds} s; stopping`;
}

/** gRPC's account of a failed connection, short: 'connection refused' rather than its
 * 'No connection established. Last error: connect ECONNREFUSED ...'. */
function unreachableReason(details) {
  const text = String(details || '');
  if (/ECONNREFUSED|connection refused/i.test(text)) return 'connection refused';
  if (/ECONNRESET|connection reset/i.test(text)) return 'connection reset';
  return text.split(/\s+/).filter(Boolean).join(' ') || 'no reason given';
}

/** The server refused the bot (bad token or protocol version); retrying will not help. */
class BotRefused extends Error {
  constructor(message) {
    super(message);
    this.name = 'BotRefused';
  }
}

/** The descriptor of a server address fd:N (the local transport), else null. */
function parseFd(server) {
  const text = String(server);
  if (!text.startsWith('fd:')) return null;
  if (!/^[0-9]+$/.test(text.slice(3))) {
    throw new Error(`bad server address ${text}: fd: takes a descriptor number, fd:3`);
  }
  return Number(text.slice(3));
}

/** Bytes that cannot be framed: the local connection is unusable. */
class FrameError extends Error {
  constructor(message) {
    super(message);
    this.name = 'FrameError';
  }
}

/** A serialized message as one frame: its length as a varint, then its bytes. */
function encodeFrame(payload) {
  return Buffer.from(protobuf.Writer.create().bytes(payload).finish());
}

/** Splits a byte stream into frames' payloads, holding a partial frame until the rest comes. */
class FrameReader {
  constructor(maxBytes = MAX_FRAME_BYTES) {
    this.maxBytes = maxBytes;
    this.pending = Buffer.alloc(0);
  }

  /** The payloads of the whole frames now complete; throws FrameError on a length over the
   * cap as soon as its varint is in, before any of the payload is waited for. */
  push(chunk) {
    const buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const payloads = [];
    let pos = 0;
    while (pos < buf.length) {
      const reader = protobuf.Reader.create(buf.subarray(pos));
      let length;
      try {
        length = reader.uint32();
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        if (buf.length - pos > MAX_LENGTH_VARINT_BYTES) {
          throw new FrameError(`a frame over the ${this.maxBytes}-byte cap`);
        }
        break; // the length's varint is not all here yet
      }
      if (reader.pos > MAX_LENGTH_VARINT_BYTES || length > this.maxBytes) {
        throw new FrameError(`a frame over the ${this.maxBytes}-byte cap`);
      }
      if (reader.pos + length > reader.len) break;
      payloads.push(buf.subarray(pos + reader.pos, pos + reader.pos + length));
      pos += reader.pos + length;
    }
    this.pending = buf.subarray(pos);
    return payloads;
  }
}

/** Every .proto file of the protocol, relative to protoDir, sorted. */
function protoFiles(protoDir = defaultProtoDir()) {
  const dir = path.join(protoDir, PACKAGE_DIR);
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    throw new Error(`cannot read the protocol in ${dir} (set CARDSHARK_PROTO_DIR): ${err.message}`);
  }
  const files = names.filter((n) => n.endsWith('.proto')).sort();
  if (files.length === 0) throw new Error(`no .proto files in ${dir}`);
  return files.map((n) => path.posix.join('cardshark', 'v1', n));
}

function defaultProtoDir() {
  return process.env.CARDSHARK_PROTO_DIR || DEFAULT_PROTO_DIR;
}

/** Load the whole protocol; returns the package object cardshark.v1 (with its Referee client). */
function loadProtocol(protoDir = defaultProtoDir()) {
  const definition = protoLoader.loadSync(protoFiles(protoDir), {
    ...LOADER_OPTIONS,
    includeDirs: [protoDir],
  });
  return grpc.loadPackageDefinition(definition).cardshark.v1;
}

function backoffMs(attempt) {
  return Math.min(50 * 2 ** attempt, 1000);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** PEM bytes: a Buffer as given, else the file at that path; undefined stays undefined. */
function readPem(value) {
  if (value === undefined || value === null || value === '') return undefined;
  return Buffer.isBuffer(value) ? value : fs.readFileSync(value);
}

/**
 * Channel credentials: TLS trusting tlsCa (plus a client certificate for mutual TLS),
 * else insecure. Throws when a file cannot be read or a cert comes without its key.
 */
function channelCredentials({ tlsCa, tlsCert, tlsKey } = {}) {
  const ca = readPem(tlsCa);
  const cert = readPem(tlsCert);
  const key = readPem(tlsKey);
  if (!ca) {
    if (cert || key) throw new Error('a client certificate needs a CA to trust: give --tls-ca too');
    return grpc.credentials.createInsecure();
  }
  if (!cert !== !key) throw new Error('--tls-cert and --tls-key go together: give both or neither');
  return grpc.credentials.createSsl(ca, key || null, cert || null);
}

/** A bot's connection to a cardshark server. */
class BotClient {
  /**
   * @param {(request: object) => string | Promise<string>} decide returns a legal action id
   * @param {object} options server, token, name, games, onEvent(msg), reconnectMs, protoDir, log,
   *   tlsCa, tlsCert, tlsKey (PEM paths or Buffers)
   */
  constructor(decide, options = {}) {
    if (typeof decide !== 'function') throw new TypeError('decide must be a function');
    if (!options.token) throw new TypeError('a token is required (see `cardshark bot add`)');
    this.decide = decide;
    this.server = options.server || DEFAULT_SERVER;
    this.localFd = parseFd(this.server); // fd:N: the local transport
    this.token = options.token;
    this.name = options.name || '';
    this.games = options.games || [];
    this.onEvent = options.onEvent || null;
    this.reconnectMs = options.reconnectMs ?? 30000;
    this.log = options.log || (process.env.CARDSHARK_DEBUG ? (m) => console.error(m) : () => {});
    this.say = options.say || ((line) => console.error(line)); // the retry line: stderr
    this.protocol = loadProtocol(options.protoDir);
    this.credentials = channelCredentials(options);
    this.welcome = null;
    this.goodbye = null; // set when the server said it: run() resolves
    this.lost = null; // why the local connection ended without a Goodbye: run() resolves
    this.gaveUp = false; // the server was out of reach for reconnectMs: run() resolved
    this.call = null;
    this.socket = null; // the local transport's connection, while it is open
    this.stopped = false;
  }

  /** The Hello this bot sends first on every stream. */
  hello() {
    return {
      hello: {
        token: this.token,
        bot_name: this.name,
        protocol_version: PROTOCOL_VERSION,
        games: [...this.games],
      },
    };
  }

  /** Serve until stop(), a Goodbye (then this.goodbye is set), or the server is gone for longer
   * than reconnectMs. Over the local transport (fd:N) there is no reconnecting: the end of the
   * connection ends the run (this.lost says why). Rejects with BotRefused. */
  async run() {
    if (this.localFd !== null) {
      await this.serveLocal(this.localFd);
      return;
    }
    const stub = new this.protocol.Referee(this.server, this.credentials);
    let lostAt = null;
    let attempt = 0;
    try {
      while (!this.stopped) {
        const served = await this.serveOnce(stub);
        if (this.stopped) break;
        if (served.welcomed) {
          lostAt = null;
          attempt = 0;
        }
        this.log(`cardshark: stream ended (${served.reason}); reconnecting`);
        const now = Date.now();
        if (lostAt === null) {
          // one line an outage, not one an attempt
          lostAt = now;
          const why = unreachableReason(served.reason);
          this.say(retryLine(this.server, why, this.reconnectMs / 1000));
        }
        if (now - lostAt > this.reconnectMs) {
          this.log(`cardshark: server gone for ${Math.round((now - lostAt) / 1000)} s; stopping`);
          this.gaveUp = true;
          break;
        }
        await sleep(backoffMs(attempt++));
      }
    } finally {
      stub.close();
    }
  }

  /** End the current stream and make run() return. */
  stop() {
    this.stopped = true;
    if (this.call) this.call.cancel();
    if (this.socket) this.socket.destroy(); // its 'close' resolves serveLocal
  }

  /** Handle one message from the server, answering requests through send(msg) while isOpen().
   * Returns true on the Goodbye (the last message). */
  dispatch(msg, send, isOpen) {
    if (msg.kind === 'request') {
      this.answer(send, msg.request, isOpen);
      return false;
    }
    if (msg.kind === 'welcome') this.welcome = msg.welcome;
    if (msg.kind === 'goodbye') {
      this.goodbye = msg.goodbye;
      this.stopped = true; // the last message: nothing more to play, no reconnecting
    }
    if (this.onEvent) this.onEvent(msg);
    return msg.kind === 'goodbye';
  }

  /** The whole run over the local transport: frames on descriptor fd, the messages serialized
   * as gRPC's Play would (the same plain objects either way). */
  serveLocal(fd) {
    const play = this.protocol.Referee.service.Play;
    return new Promise((resolve, reject) => {
      let socket;
      try {
        socket = new net.Socket({ fd, readable: true, writable: true });
      } catch (err) {
        reject(new BotRefused(`cannot use descriptor ${fd}: ${err.message}`));
        return;
      }
      this.socket = socket;
      const frames = new FrameReader();
      let open = true;
      let ended = null; // why the connection ended, when the server ended it
      const isOpen = () => open;
      const send = (msg) => {
        if (open) socket.write(encodeFrame(play.requestSerialize(msg)));
      };
      const finish = (why) => {
        if (!open) return;
        open = false;
        ended = why;
        socket.destroy();
      };
      socket.on('data', (chunk) => {
        let payloads;
        try {
          payloads = frames.push(chunk);
        } catch (err) {
          finish(err.message);
          return;
        }
        for (const payload of payloads) {
          let msg;
          try {
            msg = play.responseDeserialize(payload);
          } catch (err) {
            finish(`a message that does not parse: ${err.message}`);
            return;
          }
          if (this.dispatch(msg, send, isOpen)) {
            finish(null);
            return;
          }
          if (!open) return;
        }
      });
      socket.on('end', () => finish(`the server closed fd:${fd}`));
      socket.on('error', (err) => finish(`fd:${fd}: ${err.message}`));
      socket.on('close', () => {
        open = false;
        if (this.socket === socket) this.socket = null;
        if (this.goodbye || this.stopped) {
          resolve();
        } else if (!this.welcome) {
          reject(
            new BotRefused(
              `the server closed descriptor ${fd} without a Welcome (refused: its log says why)`,
            ),
          );
        } else {
          this.lost = ended || `the server closed fd:${fd}`;
          resolve();
        }
      });
      send(this.hello());
    });
  }

  /** One stream: resolves with {welcomed, reason} when it ends; rejects with BotRefused. */
  serveOnce(stub) {
    return new Promise((resolve, reject) => {
      const call = stub.Play();
      this.call = call;
      let welcomed = false;
      let open = true;
      const finish = (status) => {
        if (!open) return;
        open = false;
        if (this.call === call) this.call = null;
        const code = status.code;
        if (code === grpc.status.UNAUTHENTICATED || code === grpc.status.FAILED_PRECONDITION) {
          reject(new BotRefused(status.details || grpc.status[code]));
        } else {
          resolve({ welcomed, reason: status.details || grpc.status[code] || 'ended' });
        }
      };
      const send = (msg) => call.write(msg);
      call.on('data', (msg) => {
        if (msg.kind === 'welcome') welcomed = true;
        if (this.dispatch(msg, send, () => open)) call.cancel();
      });
      call.on('error', (err) => finish(err)); // carries code and details
      call.on('status', (status) => finish(status));
      call.on('end', () => {
        if (open) call.end();
      });
      call.write(this.hello());
    });
  }

  async answer(send, request, isOpen) {
    let actionId;
    try {
      actionId = await this.decide(request);
    } catch (err) {
      console.error(`cardshark: decide failed on request ${request.request_id}: ${err.stack || err}`);
      return; // unanswered: the referee charges a timeout and plays a fallback
    }
    if (isOpen()) {
      send({ decision: { request_id: request.request_id, action_id: String(actionId) } });
    }
  }
}

const FLAGS = {
  '--server': 'server',
  '--token': 'token',
  '--tls-ca': 'tlsCa',
  '--tls-cert': 'tlsCert',
  '--tls-key': 'tlsKey',
};

/**
 * --server/--token (and --tls-ca/--tls-cert/--tls-key) from argv, else CARDSHARK_SERVER,
 * CARDSHARK_TOKEN, CARDSHARK_TLS_CA, CARDSHARK_TLS_CERT, CARDSHARK_TLS_KEY, else the defaults.
 * TLS keys appear only when given.
 */
function parseArgs(argv = process.argv.slice(2), env = process.env) {
  const config = { server: env.CARDSHARK_SERVER || DEFAULT_SERVER, token: env.CARDSHARK_TOKEN || '' };
  if (env.CARDSHARK_TLS_CA) config.tlsCa = env.CARDSHARK_TLS_CA;
  if (env.CARDSHARK_TLS_CERT) config.tlsCert = env.CARDSHARK_TLS_CERT;
  if (env.CARDSHARK_TLS_KEY) config.tlsKey = env.CARDSHARK_TLS_KEY;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (!Object.hasOwn(FLAGS, flag)) throw new Error(`unknown argument ${argv[i]}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    config[FLAGS[flag]] = value;
  }
  return config;
}

/** The one line a kit prints when its local connection ends without a Goodbye. */
function lostLine(why) {
  return `cardshark: ${why} without a Goodbye; stopping`;
}

/**
 * Run a bot from the command line until the server says Goodbye (one line on stderr, exit 0) or
 * goes away (over the local transport: one line, exit 1); exits 2 if refused.
 */
async function run(decide, options = {}) {
  let config;
  try {
    config = parseArgs(options.argv, options.env);
  } catch (err) {
    console.error(
      `usage: node BOT.js [--server HOST:PORT] [--token TOKEN] [--tls-ca CA] ` +
        `[--tls-cert CERT --tls-key KEY]: ${err.message}`,
    );
    process.exit(2);
  }
  if (!config.token) {
    console.error('no token: pass --token or set CARDSHARK_TOKEN (see `cardshark bot add`)');
    process.exit(2);
  }
  let client;
  try {
    client = new BotClient(decide, { ...options, ...config });
  } catch (err) {
    console.error(`cannot start the bot: ${err.message}`);
    process.exit(2);
  }
  const stop = () => client.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    await client.run();
  } catch (err) {
    if (!(err instanceof BotRefused)) throw err;
    console.error(`refused by ${config.server}: ${err.message}`);
    process.exit(2);
  } finally {
    process.removeListener('SIGTERM', stop);
    process.removeListener('SIGINT', stop);
  }
  if (client.goodbye) {
    console.error(goodbyeLine(client.goodbye.reason));
  } else if (client.lost) {
    console.error(lostLine(client.lost));
    process.exitCode = 1;
  } else if (client.gaveUp) {
    console.error(gaveUpLine(config.server, client.reconnectMs / 1000));
    process.exitCode = 1;
  }
}

module.exports = {
  BotClient,
  BotRefused,
  DEFAULT_SERVER,
  FrameError,
  FrameReader,
  MAX_FRAME_BYTES,
  channelCredentials,
  encodeFrame,
  gaveUpLine,
  goodbyeLine,
  lostLine,
  parseFd,
  PROTOCOL_VERSION,
  loadProtocol,
  parseArgs,
  protoFiles,
  retryLine,
  run,
  unreachableReason,
};
