'use strict';
// The cardshark bot kit for Node.js: write one function from a DecisionRequest to an action id.
//
// The protocol is loaded at run time from every .proto file in proto/cardshark/v1 (the
// repository's ../../proto, or CARDSHARK_PROTO_DIR), so a new game's view needs no rebuild.
// Messages are plain objects with the .proto field names (request_id, legal_actions, ...);
// a oneof's set member is named by a virtual field (msg.kind === 'request', request.view).
//
// The server is HOST:PORT or unix:/PATH. With a CA (option tlsCa, --tls-ca, CARDSHARK_TLS_CA)
// the bot speaks TLS and checks the server's certificate; tlsCert/tlsKey (--tls-cert,
// --tls-key, CARDSHARK_TLS_CERT, CARDSHARK_TLS_KEY) add a client certificate for mutual TLS.
//
// A Goodbye from the server (tournament finished, server shutting down) ends the run:
// client.run() resolves with client.goodbye set, and run() prints one line saying so to stderr,
// so the bot exits with status 0 instead of reconnecting.

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

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

/** The one line a kit prints when the server says Goodbye. */
function goodbyeLine(reason) {
  const said = String(reason || '').trim().split(/\s+/).filter(Boolean).join(' ');
  return `cardshark: ${said || 'the server said goodbye'}; nothing more to play`;
}

/** The server refused the bot (bad token or protocol version); retrying will not help. */
class BotRefused extends Error {
  constructor(message) {
    super(message);
    this.name = 'BotRefused';
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
    this.token = options.token;
    this.name = options.name || '';
    this.games = options.games || [];
    this.onEvent = options.onEvent || null;
    this.reconnectMs = options.reconnectMs ?? 30000;
    this.log = options.log || (process.env.CARDSHARK_DEBUG ? (m) => console.error(m) : () => {});
    this.protocol = loadProtocol(options.protoDir);
    this.credentials = channelCredentials(options);
    this.welcome = null;
    this.goodbye = null; // set when the server said it: run() resolves
    this.call = null;
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
   * than reconnectMs. */
  async run() {
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
        lostAt = lostAt ?? now;
        if (now - lostAt > this.reconnectMs) {
          this.log(`cardshark: server gone for ${Math.round((now - lostAt) / 1000)} s; stopping`);
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
      call.on('data', (msg) => {
        if (msg.kind === 'request') {
          this.answer(call, msg.request, () => open);
          return;
        }
        if (msg.kind === 'welcome') {
          welcomed = true;
          this.welcome = msg.welcome;
        }
        if (msg.kind === 'goodbye') {
          this.goodbye = msg.goodbye;
          this.stopped = true; // the last message: nothing more to play, no reconnecting
        }
        if (this.onEvent) this.onEvent(msg);
        if (msg.kind === 'goodbye') call.cancel();
      });
      call.on('error', (err) => finish(err)); // carries code and details
      call.on('status', (status) => finish(status));
      call.on('end', () => {
        if (open) call.end();
      });
      call.write(this.hello());
    });
  }

  async answer(call, request, isOpen) {
    let actionId;
    try {
      actionId = await this.decide(request);
    } catch (err) {
      console.error(`cardshark: decide failed on request ${request.request_id}: ${err.stack || err}`);
      return; // unanswered: the referee charges a timeout and plays a fallback
    }
    if (isOpen()) {
      call.write({ decision: { request_id: request.request_id, action_id: String(actionId) } });
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

/**
 * Run a bot from the command line until the server says Goodbye (one line on stderr, exit 0) or
 * goes away; exits 2 if refused.
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
  if (client.goodbye) console.error(goodbyeLine(client.goodbye.reason));
}

module.exports = {
  BotClient,
  BotRefused,
  DEFAULT_SERVER,
  channelCredentials,
  goodbyeLine,
  PROTOCOL_VERSION,
  loadProtocol,
  parseArgs,
  protoFiles,
  run,
};
